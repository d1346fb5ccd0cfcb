import { Type, type Static } from 'typebox';
import { Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { MAX_TAG_LENGTH } from '../contacts/contacts.tags.js';
import { FilterSchema } from '../segments/segments.schemas.js';

export const BULK_ACTIONS = ['tag', 'untag', 'subscribe', 'unsubscribe', 'delete'] as const;
export const BULK_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED'] as const;
/** Contact ids one request may name. */
export const MAX_BULK_IDS = 10_000;

export const BulkBody = Type.Object(
  {
    action: StringEnum(BULK_ACTIONS, {
      description:
        "tag / untag: add or remove `tag`; subscribe / unsubscribe: the topic `topicId`'s subscription, or without topicId the contact's status (SUBSCRIBED / UNSUBSCRIBED, as PUT /v1/contacts/{id} sets it); delete: as DELETE /v1/contacts/{id}",
    }),
    tag: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_TAG_LENGTH, description: 'required by tag and untag, only for them' }),
    ),
    topicId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'subscribe and unsubscribe only: a topic of the workspace',
      }),
    ),
    ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: MAX_BULK_IDS,
        description: `the contacts, by id (up to ${MAX_BULK_IDS}); give ids or filter, not both`,
      }),
    ),
    filter: Type.Optional({
      ...FilterSchema,
      description: 'the contacts a segment filter matches (the grammar of /v1/segments) when the job is created',
    }),
  },
  { additionalProperties: false },
);
export type BulkInput = Static<typeof BulkBody>;

export const BulkAcceptedSchema = Type.Object({
  jobId: Type.String(),
  matched: Type.Integer({ minimum: 0, description: 'contacts the job will act on, counted when it was created' }),
});

export const BulkJobSchema = Type.Object({
  id: Type.String(),
  action: StringEnum(BULK_ACTIONS),
  tag: Nullable(Type.String()),
  topicId: Nullable(Type.String()),
  status: StringEnum(BULK_STATUSES, { description: 'RUNNING until every matched contact is done' }),
  matched: Type.Integer({ description: 'contacts matched when the job was created' }),
  processed: Type.Integer({ description: 'contacts done so far (failed ones included)' }),
  failed: Type.Integer({
    description: 'contacts the action could not be applied to (a 101st tag); a contact gone meanwhile is skipped',
  }),
  error: Nullable(Type.String({ description: 'why a FAILED job stopped' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
});
export type BulkJob = Static<typeof BulkJobSchema>;

export const BulkParams = Type.Object({ jobId: PathId });
