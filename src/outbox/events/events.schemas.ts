import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { EVENT_TYPES } from './events.types.js';

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'evt_…; ids sort by the order events were written' }),
    type: StringEnum(EVENT_TYPES),
    occurredAt: Timestamp,
    contactId: Nullable(Type.String()),
    broadcastId: Nullable(Type.String()),
    deliveryId: Nullable(Type.String()),
    data: Type.Record(Type.String(), Type.Unknown(), { description: "the type's own fields (docs/events.md)" }),
  },
  { description: 'One thing that happened (docs/events.md)' },
);

export const EventListQuery = Type.Object(
  {
    ...ListQuery.properties,
    type: Type.Optional(StringEnum(EVENT_TYPES)),
    contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    broadcastId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'events that occurred at or after this time' }),
    ),
  },
  { additionalProperties: false },
);

export const ActivityQuery = Type.Object(
  {
    ...ListQuery.properties,
    type: Type.Optional(StringEnum(EVENT_TYPES)),
  },
  { additionalProperties: false },
);

/** POST /v1/events/track: a custom event of a contact, named by id or email (docs/automations.md). */
export const TrackEventBody = Type.Object(
  {
    contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
    name: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$',
      description: "the event's name, such as `trial.started`; `event` triggers of automations match it exactly",
    }),
    properties: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
        maxProperties: 100,
        description: "any JSON values; kept in the event's data",
      }),
    ),
  },
  { additionalProperties: false },
);
export type TrackEventInput = Static<typeof TrackEventBody>;

export const TrackedSchema = Type.Object({ id: Type.String({ description: "the event's id (evt_…)" }) });
