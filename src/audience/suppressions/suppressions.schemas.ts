import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { MessageSourceSchema } from './suppressions.sources.js';

/** Why an address is suppressed (contacts/CONTEXT.md, "Suppression"); the lifecycle's table (contacts.state.ts) says which operation adds which. */
export const SUPPRESSION_REASONS = ['BOUNCED', 'COMPLAINED', 'UNSUBSCRIBED', 'MANUAL'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const SuppressionSchema = Type.Object({
  email: Type.String({ description: "normalised, as contacts' emails" }),
  reason: StringEnum(SUPPRESSION_REASONS),
  deliveryId: Nullable(
    Type.String({ description: 'the delivery whose bounce, complaint or unsubscribe link put the address here' }),
  ),
  broadcastId: Nullable(Type.String()),
  detail: Nullable(Type.String({ description: "the bounce or complaint report's words, or the note given" })),
  createdAt: Timestamp,
  source: Nullable(MessageSourceSchema, {
    description:
      "what sent the message of `broadcastId`: a broadcast, or an automation's send step (whose broadcastId the broadcasts API does not show); null when the entry names no message or it was deleted",
  }),
});
export type SuppressionEntry = Static<typeof SuppressionSchema>;

export const CreateSuppressionBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    reason: StringEnum(['MANUAL'] as const, {
      description: 'entries of the other reasons are written by bounces, complaints and unsubscriptions',
    }),
    detail: Type.Optional(Type.String({ maxLength: 1000, description: 'a note: why the address is suppressed' })),
  },
  { additionalProperties: false },
);
export type CreateSuppressionInput = Static<typeof CreateSuppressionBody>;

export const SuppressionListQuery = Type.Object(
  {
    ...ListQuery.properties,
    reason: Type.Optional(StringEnum(SUPPRESSION_REASONS)),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'entries whose address contains this text (case-insensitive), such as `@example.com`',
      }),
    ),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'entries added at or after this time (RFC 3339)' }),
    ),
    before: Type.Optional(
      Type.String({ format: 'date-time', description: 'entries added before this time (RFC 3339)' }),
    ),
  },
  { additionalProperties: false },
);

/** POST /v1/suppressions/bulk: many addresses at once (MANUAL), e.g. a pasted list. */
export const BULK_SUPPRESSION_LIMIT = 1000;
export const BulkSuppressionBody = Type.Object(
  {
    emails: Type.Array(Type.String({ maxLength: 1000 }), {
      minItems: 1,
      maxItems: BULK_SUPPRESSION_LIMIT,
      description: 'the addresses; one that is not a valid address is reported in `invalid`, the others are added',
    }),
    reason: Type.Optional(StringEnum(['MANUAL'] as const)),
    detail: Type.Optional(Type.String({ maxLength: 1000, description: 'a note for every entry added' })),
  },
  { additionalProperties: false },
);
export type BulkSuppressionInput = Static<typeof BulkSuppressionBody>;

export const BulkSuppressionResult = Type.Object({
  added: Type.Array(Type.String(), { description: 'the addresses added now (normalised), in the order given' }),
  alreadySuppressed: Type.Array(Type.String(), {
    description: 'the addresses that were on the list already: their entries are kept as they were',
  }),
  invalid: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'its position in `emails`' }),
      email: Type.String({ description: 'as given' }),
      message: Type.String(),
    }),
    { description: 'what is not a valid email address; nothing is added for these' },
  ),
});
export type BulkSuppressionOutcome = Static<typeof BulkSuppressionResult>;

export const SuppressionParams = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320, description: 'the address, URL-encoded' }),
});
