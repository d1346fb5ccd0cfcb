import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';

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
  },
  { additionalProperties: false },
);

export const SuppressionParams = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320, description: 'the address, URL-encoded' }),
});
