// The Outbox's face (docs/architecture.md): recordEvent(s) writes an event in the caller's transaction (the one way
// into the events table); the rest reads the stream for the workers above.
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
