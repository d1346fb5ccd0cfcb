export {
  claimUndispatchedEvents,
  eventsByIds,
  insertTrackingEvents,
  listEvents,
  recordEvent,
  recordEvents,
} from './events/events.repository.js';
export { ActivityQuery, EventSchema } from './events/events.schemas.js';
export { EVENT_TYPES, type EventRecord, type EventType, type NewEvent } from './events/events.types.js';
