import { Type } from 'typebox';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';

export const SUBMISSION_STATUSES = ['ACCEPTED', 'HELD', 'RELEASED', 'DISCARDED'] as const;
import { FIELD_TYPES } from '../forms/forms.schemas.js';

/** A submission body: the form's field names as keys (unmapped keys are ignored), text, numbers, booleans or lists of text. */
export const SubmissionBody = Type.Record(
  Type.String({ maxLength: 100 }),
  Type.Union([
    Type.String({ maxLength: 10_000 }),
    Type.Number(),
    Type.Boolean(),
    Type.Null(),
    Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 100 }),
  ]),
  { maxProperties: 200, description: "keyed by the field names of the form's fieldMapping" },
);

export const SubmissionSchema = Type.Object({
  id: Type.String(),
  formId: Type.String(),
  formVersion: Type.Integer(),
  data: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
  contactId: Nullable(Type.String()),
  source: StringEnum(['HOSTED', 'EMBED', 'API'] as const),
  createdAt: Timestamp,
  ip: Nullable(Type.String({ description: 'the address it came from; null after SUBMISSION_RETENTION_DAYS' })),
  userAgent: Nullable(Type.String({ description: 'the browser it came from; null after SUBMISSION_RETENTION_DAYS' })),
  consent: Nullable(
    Type.Object(
      {
        text: Type.String({ description: 'the consent text the visitor accepted' }),
        acceptedAt: Timestamp,
      },
      { description: 'proof of consent, when the form asked for it (settings.appearance.consentText)' },
    ),
  ),
  status: StringEnum(SUBMISSION_STATUSES, {
    description:
      'ACCEPTED; HELD for review (a burst of sign-ups: nobody was signed up or mailed), then RELEASED or DISCARDED (docs/bot-protection.md)',
  }),
  heldReasons: Nullable(
    Type.Array(Type.String(), {
      description: 'the burst rules a held submission tripped: ip_range, pattern, mailbox, domain',
    }),
  ),
  reviewedAt: Nullable(Timestamp),
  answers: Type.Array(
    Type.Object({
      field: Type.String(),
      label: Type.String(),
      type: StringEnum(FIELD_TYPES),
      value: Nullable(Type.Union([Type.String(), Type.Array(Type.String())])),
    }),
    { description: 'every question of the version it was made to, in order; value null when not answered' },
  ),
});

export const SubmissionSummarySchema = Type.Object({
  formId: Type.String(),
  formGroupId: Type.String(),
  total: Type.Integer({
    description: 'submissions counted (every version of the group; not those held for review or discarded)',
  }),
  questions: Type.Array(
    Type.Object({
      field: Type.String(),
      label: Type.String(),
      type: StringEnum(FIELD_TYPES),
      answered: Type.Integer({ description: 'submissions that answered it (a single checkbox: that ticked it)' }),
      options: Type.Optional(
        Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), {
          description: 'select, radio, checkbox groups: per option',
        }),
      ),
      other: Type.Optional(
        Type.Integer({ description: "answers that are none of the current options (an earlier version's)" }),
      ),
    }),
  ),
});

export const SubmissionListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(
      StringEnum(SUBMISSION_STATUSES, {
        description: 'only the submissions of this status (HELD: those awaiting review)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SubmissionParams = Type.Object({ formId: PathId, submissionId: PathId });
