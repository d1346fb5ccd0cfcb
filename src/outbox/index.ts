// The Outbox's face (docs/architecture.md): recordEvent(s) writes an event in the caller's transaction (the one way
// into the events table); the rest reads the stream for the workers above. recordAudit writes an audit log entry in
// the caller's transaction (the one way into audit_log), with the actor a route built by actorOf.
export { actorOf } from './audit/audit.actor.js';
export { recordAudit } from './audit/audit.repository.js';
export {
  AUDIT_ACTIONS,
  CLI_ACTOR,
  SYSTEM_ACTOR,
  changesOf,
  type AuditAction,
  type AuditActor,
  type AuditChanges,
  type NewAuditEntry,
} from './audit/audit.types.js';
export {
  claimUndispatchedEvents,
  eventsByIds,
  insertTrackingEvents,
  listEvents,
  recordEvent,
  recordEvents,
  transactionalEventsOf,
} from './events/events.repository.js';
export {
  ENGAGEMENT_EVENT_TYPES,
  ENGAGEMENT_INDEX_PREDICATE,
  broadcastEngagementSql,
  latestEngagementSql,
  type EngagementKind,
  type EngagementQuery,
} from './events/events.engagement.js';
export { ActivityQuery, EventSchema } from './events/events.schemas.js';
export { EVENT_TYPES, type EventRecord, type EventType, type NewEvent } from './events/events.types.js';
