import { Type } from 'typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../http/schema-helpers.js';

/** A submission body: the form's field names as keys (unmapped keys are ignored), text, numbers, booleans or lists of text. */
export const SubmissionBody = Type.Record(Type.String({ maxLength: 100 }), Type.Union([
  Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 100 }),
]), { maxProperties: 200, description: 'keyed by the field names of the form\'s fieldMapping' });

export const SubmissionSchema = Type.Object({
  id: Type.String(),
  formId: Type.String(),
  formVersion: Type.Integer(),
  data: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
  contactId: Nullable(Type.String()),
  source: StringEnum(['HOSTED', 'EMBED', 'API'] as const),
  createdAt: Timestamp,
});

export const SubmissionListQuery = ListQuery;
