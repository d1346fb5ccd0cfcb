import { Type, type Static } from 'typebox';
import { checkedByService, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { PROPERTY_KEY_PATTERN } from '../contacts/contacts.schemas.js';
import { MAX_TAG_LENGTH } from '../contacts/contacts.tags.js';
import { CONTACT_STATUSES } from '../contacts/contacts.state.js';
import {
  ENGAGEMENTS,
  MAX_WITHIN_DAYS,
  MAX_DEPTH,
  MAX_IN_VALUES,
  MAX_NODES,
  MAX_STRING_LENGTH,
  OPS,
  TEXT_FIELDS,
  type Filter,
} from './segments.filter.js';

const Scalar = Type.Union([Type.String({ maxLength: MAX_STRING_LENGTH }), Type.Number(), Type.Boolean()]);

/**
 * The filter grammar (CONTEXT.md) as a schema, for the OpenAPI document and so the SDK's and the console's types.
 * Requests are checked by validateFilter (segments.filter.ts), not by this schema (checkedByService): the limits of
 * depth and size and the value types by field and operator are its, and it gives one error per violation at its
 * exact path under /filter.
 */
export const FilterSchema = checkedByService(
  Type.Cyclic(
    {
      SegmentFilter: Type.Union(
        [
          Type.Object(
            {
              all: Type.Array(Type.Ref('SegmentFilter'), {
                description: 'every member matches ({ "all": [] } matches every contact)',
              }),
            },
            { additionalProperties: false },
          ),
          Type.Object(
            {
              any: Type.Array(Type.Ref('SegmentFilter'), {
                description: 'at least one member matches ({ "any": [] } matches no contact)',
              }),
            },
            { additionalProperties: false },
          ),
          Type.Ref('SegmentFieldCondition'),
          Type.Ref('SegmentTopicCondition'),
          Type.Ref('SegmentTagCondition'),
          Type.Ref('SegmentEngagementCondition'),
        ],
        {
          description:
            `A segment filter: groups (all, any) of field, topic, tag and engagement conditions, at most ${MAX_DEPTH} levels deep and ${MAX_NODES} conditions and groups in total. ` +
            'Semantics: src/audience/segments/CONTEXT.md.',
          examples: [
            {
              all: [
                { field: 'properties.plan', op: 'eq', value: 'pro' },
                { topic: 'topic_01JD0000000000000000000000', subscribed: true },
              ],
            },
          ],
        },
      ),
      SegmentFieldCondition: Type.Object(
        {
          field: Type.String({
            pattern: `^(${TEXT_FIELDS.join('|')}|createdAt|properties\\.${PROPERTY_KEY_PATTERN.slice(1, -1)})$`,
            description: 'email, firstName, lastName, status, createdAt or properties.<key>',
          }),
          op: StringEnum(OPS),
          value: Type.Optional(
            Type.Union([Scalar, Type.Array(Scalar, { minItems: 1, maxItems: MAX_IN_VALUES })], {
              description: `absent for exists and notExists; a non-empty array for in. By field: a string for email, firstName, lastName; one of ${CONTACT_STATUSES.join(', ')} for status (eq, neq, in); an RFC 3339 date-time for createdAt; a string, number or boolean for a property (never null: use notExists)`,
            }),
          ),
        },
        { additionalProperties: false },
      ),
      SegmentTopicCondition: Type.Object(
        {
          topic: Type.String({ minLength: 1, maxLength: 64, description: 'a topic id of the workspace' }),
          subscribed: Type.Boolean({
            description:
              "true: effectively subscribed to the topic (their choice, else the topic's default); false: the others",
          }),
        },
        { additionalProperties: false },
      ),
      SegmentTagCondition: Type.Object(
        {
          tag: Type.String({ minLength: 1, maxLength: MAX_TAG_LENGTH, description: 'a tag, in any case' }),
          has: Type.Boolean({ description: 'true: contacts with the tag; false: the others' }),
        },
        { additionalProperties: false },
      ),
      SegmentEngagementCondition: Type.Object(
        {
          engagement: StringEnum(ENGAGEMENTS, {
            description:
              'delivered: a message was sent to the contact (accepted by their server); opened, clicked: a human open or click (machine opens and clicks never count)',
          }),
          broadcastId: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 64,
              description: "only this broadcast's messages (a broadcast of the workspace); any message when absent",
            }),
          ),
          withinDays: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: MAX_WITHIN_DAYS,
              description: 'only in the last N days (N × 24 hours back from now); ever (the events kept) when absent',
            }),
          ),
          happened: Type.Boolean({ description: 'true: it happened; false: it did not (the exact negation)' }),
        },
        { additionalProperties: false },
      ),
    },
    'SegmentFilter',
  ),
);

// The grammar's type (segments.filter.ts) and the schema's are one: a change to either that the other lacks fails here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _filterTypesAgree: Same<Static<typeof FilterSchema>, Filter> = true;

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateSegmentBody = Type.Object({ name: Name, filter: FilterSchema }, { additionalProperties: false });
export type CreateSegmentInput = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(Name),
    filter: Type.Optional(FilterSchema),
  },
  { additionalProperties: false },
);
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
