import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StrictRecord, StringEnum, Timestamp } from '../http/schema-helpers.js';
import { PROPERTY_KEY_PATTERN } from '../contacts/contacts.schemas.js';

export const FORM_STATUSES = ['DRAFT', 'PUBLISHED', 'ARCHIVED'] as const;
export type FormStatus = (typeof FORM_STATUSES)[number];
export const FORM_TYPES = ['SIGN_UP', 'SURVEY'] as const;
export const FORM_DISPLAYS = ['POPUP', 'INLINE_EMBED'] as const;

/** Form field names: what the HTML controls are called (`name="…"`). */
export const FIELD_NAME_PATTERN = '^[A-Za-z0-9_.\\[\\]-]{1,100}$';
/** Contact properties: `email`, `firstName`, `lastName` or a custom property key (all match the key pattern). */
export const CONTACT_PROPERTY_PATTERN = PROPERTY_KEY_PATTERN;
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

const HttpUrl = Type.String({ format: 'http-url', maxLength: 2048, description: 'an absolute http(s) URL, without user name or password' });

export const FieldMapping = StrictRecord(FIELD_NAME_PATTERN, Type.String({ pattern: CONTACT_PROPERTY_PATTERN }), {
  maxProperties: 100,
  description: 'form field name → contact property (email, firstName, lastName or a custom key)',
});

export const SuccessAction = Type.Object({
  type: StringEnum(['MESSAGE', 'REDIRECT'] as const),
  message: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'MESSAGE: the text shown after a submission' })),
  url: Type.Optional({ ...HttpUrl, description: 'REDIRECT: where the visitor is sent (303)' }),
}, { additionalProperties: false });

export const Settings = Type.Object({
  successAction: Type.Optional(SuccessAction),
  doubleOptIn: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

/** The configuration fields of interface section 2.1, shared by create and update. */
const configFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(Type.String({ maxLength: 2000 })),
  type: StringEnum(FORM_TYPES),
  display: Nullable(StringEnum(FORM_DISPLAYS)),
  fieldMapping: FieldMapping,
  settings: Settings,
  doubleOptInEmailId: Nullable(Type.String({ minLength: 1, maxLength: 64 })),
  seoTitle: Nullable(Type.String({ maxLength: 200 })),
  seoDescription: Nullable(Type.String({ maxLength: 500 })),
  seoImageUrl: Nullable(HttpUrl),
  seoFaviconUrl: Nullable(HttpUrl),
  slug: Nullable(Type.String({ pattern: SLUG_PATTERN, maxLength: 100 })),
};

/** Every configuration field optional: what Update Form takes (with `id`), and what creation adds name and type to. */
const optionalConfig = Type.Partial(Type.Object(configFields)).properties;

export const CreateFormBody = Type.Object({
  ...optionalConfig,
  name: configFields.name,
  type: configFields.type,
}, { additionalProperties: false });
export type CreateFormInput = Static<typeof CreateFormBody>;

/** Update Form: every field optional (omitted = unchanged, null clears); `id` only if it equals the path's. */
export const UpdateFormBody = Type.Object({
  id: Type.Optional(Type.String()),
  ...optionalConfig,
}, { additionalProperties: false });
export type UpdateFormInput = Static<typeof UpdateFormBody>;

export const HtmlValidationSchema = Type.Object({
  valid: Type.Boolean(),
  checkedAt: Timestamp,
  errors: Type.Array(Type.Object({ code: Type.String(), field: Type.String() })),
  warnings: Type.Array(Type.Object({ code: Type.String(), field: Type.String() })),
});
export type HtmlValidation = Static<typeof HtmlValidationSchema>;

export const FormSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  type: StringEnum(FORM_TYPES),
  display: Nullable(StringEnum(FORM_DISPLAYS)),
  fieldMapping: Type.Record(Type.String(), Type.String()),
  settings: Type.Object({
    successAction: Type.Object({ type: StringEnum(['MESSAGE', 'REDIRECT'] as const), message: Type.Optional(Type.String()), url: Type.Optional(Type.String()) }),
    doubleOptIn: Type.Boolean(),
  }),
  doubleOptInEmailId: Nullable(Type.String()),
  seoTitle: Nullable(Type.String()),
  seoDescription: Nullable(Type.String()),
  seoImageUrl: Nullable(Type.String()),
  seoFaviconUrl: Nullable(Type.String()),
  slug: Nullable(Type.String()),
  status: StringEnum(FORM_STATUSES),
  version: Type.Integer({ minimum: 1 }),
  formGroupId: Type.String(),
  previousVersionId: Nullable(Type.String()),
  htmlValidation: Nullable(HtmlValidationSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  publishedAt: Nullable(Timestamp),
  archivedAt: Nullable(Timestamp),
  stats: Type.Optional(Type.Object({
    views: Type.Integer({ description: 'views of the hosted page' }),
    submissions: Type.Integer(),
    confirmations: Type.Integer({ description: 'double opt-in links followed' }),
  }, { description: 'of this version; on GET /v1/forms/{formId}' })),
});
export type Form = Static<typeof FormSchema>;
export type FormSettings = Form['settings'];

export const FormListQuery = Type.Object({
  ...ListQuery.properties,
  status: Type.Optional(StringEnum(FORM_STATUSES)),
}, { additionalProperties: false });

export const DeployHtmlBody = Type.Object({
  html: Nullable(Type.String({ description: 'Up to 512 KiB; sanitized before it is stored. null removes the custom HTML.' })),
}, { additionalProperties: false });

export const FormHtmlSchema = Type.Object({
  html: Type.String(),
  deployedAt: Nullable(Timestamp),
  htmlValidation: Nullable(HtmlValidationSchema),
});
export type FormHtml = Static<typeof FormHtmlSchema>;

export const FormParams = Type.Object({ formId: PathId });
