import { Type } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { AUDIT_ACTIONS, AUDIT_ACTOR_TYPES, AUDIT_TARGET_TYPES } from './audit.types.js';

const Change = Type.Object(
  {
    before: Type.Optional(Type.Unknown({ description: 'the value before the change (null: none)' })),
    after: Type.Optional(Type.Unknown({ description: 'the value after the change (null: none)' })),
    secret: Type.Optional(
      Type.Boolean({ description: 'true for a secret field: it changed, and its values are never stored' }),
    ),
  },
  { additionalProperties: false },
);

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'aud_…; ids sort by the order entries were written' }),
    occurredAt: Timestamp,
    actor: Type.Object(
      {
        type: StringEnum(AUDIT_ACTOR_TYPES, {
          description:
            'user: a person in the console; apiKey: an API key; cli: the formcast command; system: the service',
        }),
        id: Nullable(Type.String({ description: "the person's usr_… or the key's key_…" })),
        label: Nullable(Type.String({ description: "the person's email or the key's name, as they were then" })),
      },
      { additionalProperties: false },
    ),
    action: StringEnum(AUDIT_ACTIONS, { description: 'what was done (docs/audit-log.md lists them)' }),
    target: Type.Object(
      {
        type: StringEnum(AUDIT_TARGET_TYPES),
        id: Nullable(Type.String()),
        label: Nullable(Type.String({ description: "the thing's name or address, as it was then" })),
      },
      { additionalProperties: false },
    ),
    changes: Nullable(
      Type.Record(Type.String(), Change, {
        description: 'the fields that changed, each with its value before and after; a secret field by name only',
      }),
    ),
    ip: Nullable(Type.String({ description: "the caller's address" })),
    userAgent: Nullable(Type.String({ description: "the caller's user agent (browser or client), trimmed" })),
  },
  { description: 'One change to the workspace: who did what to which thing (docs/audit-log.md)' },
);

export const AuditListQuery = Type.Object(
  {
    ...ListQuery.properties,
    action: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)?$',
        description: 'an action (`api_key.created`), or every action on a kind of thing (`api_key`)',
      }),
    ),
    actor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "the actor's id (a person's usr_…, a key's key_…), or `cli` or `system`",
      }),
    ),
    targetType: Type.Optional(StringEnum(AUDIT_TARGET_TYPES)),
    targetId: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'entries that occurred at or after this time' }),
    ),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'entries that occurred before this time' })),
  },
  { additionalProperties: false },
);
