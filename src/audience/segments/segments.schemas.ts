import { Type, type Static } from 'typebox';
import { Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { CONTACT_STATUSES } from '../contacts/contacts.state.js';

/**
 * The filter is checked by validateFilter (segments.filter.ts), not by the schema: its grammar is
 * recursive, and one validator gives one error per violation with exact paths under /filter.
 */
export const FilterSchema = Type.Unsafe<unknown>({
  description: 'A segment filter: { "all": [filter…] } | { "any": [filter…] } | { "field", "op", "value" } | { "topic", "subscribed" }. '
    + 'Fields: email, firstName, lastName, status, createdAt, properties.<key>. Ops: eq, neq, contains, startsWith, endsWith, '
    + 'exists, notExists, gt, gte, lt, lte, in. At most 8 levels deep and 200 conditions and groups. '
    + 'Semantics: see src/audience/segments/CONTEXT.md.',
  examples: [{ all: [{ field: 'properties.plan', op: 'eq', value: 'pro' }, { topic: 'topic_01JD0000000000000000000000', subscribed: true }] }],
});

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateSegmentBody = Type.Object({ name: Name, filter: FilterSchema }, { additionalProperties: false });
export type CreateSegmentInput = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object({
  id: Type.Optional(Type.String()),
  name: Type.Optional(Name),
  filter: Type.Optional(FilterSchema),
}, { additionalProperties: false });
export type UpdateSegmentInput = Static<typeof UpdateSegmentBody>;

export const PreviewBody = Type.Object({ filter: FilterSchema }, { additionalProperties: false });

export const SegmentSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  filter: FilterSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const SegmentContactSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  status: StringEnum(CONTACT_STATUSES),
});

export const SegmentCountSchema = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'contacts the filter matches, whatever their status' }),
  subscribed: Type.Integer({ minimum: 0, description: 'of those, the SUBSCRIBED ones' }),
});

export const PreviewSchema = Type.Object({
  ...SegmentCountSchema.properties,
  sample: Type.Array(SegmentContactSchema, { description: 'the first 10 matching contacts, newest first' }),
});

export const SegmentParams = Type.Object({ segmentId: PathId });
