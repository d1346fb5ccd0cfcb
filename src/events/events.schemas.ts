import { Type } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../http/schema-helpers.js';
import { EVENT_TYPES } from './events.types.js';

export const EventSchema = Type.Object({
  id: Type.String({ description: 'evt_…; ids sort by the order events were written' }),
  type: StringEnum(EVENT_TYPES),
  occurredAt: Timestamp,
  contactId: Nullable(Type.String()),
  broadcastId: Nullable(Type.String()),
  deliveryId: Nullable(Type.String()),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the type\'s own fields (docs/events.md)' }),
}, { description: 'One thing that happened (docs/events.md)' });

export const EventListQuery = Type.Object({
  ...ListQuery.properties,
  type: Type.Optional(StringEnum(EVENT_TYPES)),
  contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  broadcastId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'events that occurred at or after this time' })),
}, { additionalProperties: false });

export const ActivityQuery = Type.Object({
  ...ListQuery.properties,
  type: Type.Optional(StringEnum(EVENT_TYPES)),
}, { additionalProperties: false });
