import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StrictRecord, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { PROPERTY_KEY_PATTERN } from '../../audience/index.js';
import { FORM_STATUSES } from './forms.state.js';

export { FORM_STATUSES };

/** A form's status: built from the state machine's own list (forms.state.ts), so the two cannot differ. */
export const FormStatusSchema = StringEnum(FORM_STATUSES);
export type FormStatus = Static<typeof FormStatusSchema>;
export const FORM_TYPES = ['SIGN_UP', 'SURVEY'] as const;
export const FORM_DISPLAYS = ['POPUP', 'INLINE_EMBED'] as const;

/** Form field names: what the HTML controls are called (`name="…"`). */
export const FIELD_NAME_PATTERN = '^[A-Za-z0-9_.\\[\\]-]{1,100}$';
/** Contact properties: `email`, `firstName`, `lastName` or a custom property key (all match the key pattern). */
export const CONTACT_PROPERTY_PATTERN = PROPERTY_KEY_PATTERN;
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

const HttpUrl = Type.String({
  format: 'http-url',
  maxLength: 2048,
  description: 'an absolute http(s) URL, without user name or password',
});

export const FieldMapping = StrictRecord(FIELD_NAME_PATTERN, Type.String({ pattern: CONTACT_PROPERTY_PATTERN }), {
  maxProperties: 100,
  description: 'form field name → contact property (email, firstName, lastName or a custom key)',
});

export const SuccessAction = Type.Object(
  {
    type: StringEnum(['MESSAGE', 'REDIRECT'] as const),
    message: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description:
          'MESSAGE: the text shown after a submission; a Liquid template with the answers by field name (`{{ first_name }}`, `fields`) and `contact` (docs/forms.md, "The success message")',
      }),
    ),
    url: Type.Optional({ ...HttpUrl, description: 'REDIRECT: where the visitor is sent (303)' }),
  },
  { additionalProperties: false },
);

export const FORM_THEMES = ['light', 'dark', 'auto'] as const;
export const FIELD_TYPES = ['text', 'email', 'textarea', 'select', 'radio', 'checkbox', 'number', 'date'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
/** `#rrggbb`; stored in lower case. */
export const BRAND_COLOR_PATTERN = '^#[0-9a-fA-F]{6}$';
/** The form field names the service keeps for itself (the honeypot, the consent box, …): `_fc` and anything after it. */
export const RESERVED_FIELD_PREFIX = '_fc';

/** How the hosted page and the embeds look (docs/forms.md). Every key optional; the defaults are the service's look. */
export const Appearance = Type.Object(
  {
    heading: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'the public heading (the form name is internal and never shown)',
      }),
    ),
    intro: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'plain text under the heading; line breaks are kept' }),
    ),
    buttonLabel: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        description: 'the submit button; default "Subscribe" (SIGN_UP) or "Send" (SURVEY)',
      }),
    ),
    consentText: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'shown beside a required checkbox (`_fc_consent`); its acceptance and this text are stored with each submission',
      }),
    ),
    brandColor: Type.Optional(
      Type.String({
        pattern: BRAND_COLOR_PATTERN,
        description:
          '#rrggbb: buttons, focus rings, selected choices; the text on it is picked for a contrast of at least 4.5:1',
      }),
    ),
    logoUrl: Type.Optional(
      Type.String({
        format: 'http-url',
        pattern: '^https://[^\\s"\'<>`]+$',
        maxLength: 2048,
        description: 'an absolute https URL of the logo shown above the heading',
      }),
    ),
    theme: Type.Optional(
      StringEnum(FORM_THEMES, {
        description: "light, dark, or auto (follows the visitor's system setting); default light",
      }),
    ),
  },
  { additionalProperties: false },
);
export type FormAppearance = Static<typeof Appearance>;

/** One question of a form (docs/forms.md, "Fields"). */
export const FieldDefinition = Type.Object(
  {
    label: Type.String({ minLength: 1, maxLength: 500 }),
    type: StringEnum(FIELD_TYPES),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 100,
        description: 'select and radio (required), checkbox (a group of boxes; without options, one box)',
      }),
    ),
    required: Type.Optional(Type.Boolean()),
    placeholder: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type FieldDefinition = Static<typeof FieldDefinition>;

export const Fields = StrictRecord(FIELD_NAME_PATTERN, FieldDefinition, {
  maxProperties: 100,
  description:
    'form field name → question; a name not in fieldMapping is a question whose answers are stored with the submission only',
});

/** Bot protection of the public page and the embeds (docs/bot-protection.md); the API's submissions are exempt. */
export const Protection = Type.Object(
  {
    proofOfWork: Type.Boolean({
      description:
        "a proof-of-work challenge (ALTCHA, solved by the visitor's browser without their noticing) must accompany each public submission",
    }),
  },
  { additionalProperties: false },
);
export type FormProtection = Static<typeof Protection>;

export const Settings = Type.Object(
  {
    successAction: Type.Optional(SuccessAction),
    doubleOptIn: Type.Optional(Type.Boolean()),
    appearance: Type.Optional(Nullable(Appearance)),
    fields: Type.Optional(Nullable(Fields)),
    protection: Type.Optional(Nullable(Protection)),
    captureTimezone: Type.Optional(
      Type.Boolean({
        description:
          "the embed and the hosted page fill a hidden field (`_fc_tz`) with the visitor's browser time zone, and a sign-up gives it to a contact that has none (docs/forms.md); a zone that is no IANA name is ignored, never refused. Default false",
      }),
    ),
  },
  { additionalProperties: false },
);

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

export const CreateFormBody = Type.Object(
  {
    ...optionalConfig,
    name: configFields.name,
    type: configFields.type,
  },
  { additionalProperties: false },
);
export type CreateFormInput = Static<typeof CreateFormBody>;

/** Update Form: every field optional (omitted = unchanged, null clears); `id` only if it equals the path's. */
export const UpdateFormBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    ...optionalConfig,
  },
  { additionalProperties: false },
);
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
    successAction: Type.Object({
      type: StringEnum(['MESSAGE', 'REDIRECT'] as const),
      message: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
    }),
    doubleOptIn: Type.Boolean(),
    appearance: Type.Optional(Appearance),
    fields: Type.Optional(Type.Record(Type.String(), FieldDefinition)),
    protection: Type.Optional(Protection),
    captureTimezone: Type.Optional(
      Type.Boolean({ description: "sign-ups take the visitor's browser time zone (docs/forms.md)" }),
    ),
  }),
  doubleOptInEmailId: Nullable(Type.String()),
  seoTitle: Nullable(Type.String()),
  seoDescription: Nullable(Type.String()),
  seoImageUrl: Nullable(Type.String()),
  seoFaviconUrl: Nullable(Type.String()),
  slug: Nullable(Type.String()),
  status: FormStatusSchema,
  version: Type.Integer({ minimum: 1 }),
  formGroupId: Type.String(),
  previousVersionId: Nullable(Type.String()),
  htmlValidation: Nullable(HtmlValidationSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  publishedAt: Nullable(Timestamp),
  archivedAt: Nullable(Timestamp),
  stats: Type.Optional(
    Type.Object(
      {
        views: Type.Integer({
          description:
            'views of the hosted page, and impressions of the embeds (one per page view of the site that embeds the form)',
        }),
        submissions: Type.Integer(),
        confirmations: Type.Integer({ description: 'double opt-in links followed' }),
        conversion: Nullable(
          Type.Number({
            description:
              'submissions per view (0.0425 is 4.25%), rounded to 4 decimals; null before the first view. API submissions count as submissions without a view, so it can pass 1',
          }),
        ),
      },
      { description: 'of this version; on GET /v1/forms/{formId} and in the list (GET /v1/forms)' },
    ),
  ),
});
export type Form = Static<typeof FormSchema>;
export type FormSettings = Form['settings'];

export const FormListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(FormStatusSchema),
  },
  { additionalProperties: false },
);

export const DeployHtmlBody = Type.Object(
  {
    html: Nullable(
      Type.String({ description: 'Up to 512 KiB; sanitized before it is stored. null removes the custom HTML.' }),
    ),
  },
  { additionalProperties: false },
);

export const FormHtmlSchema = Type.Object({
  html: Type.String(),
  deployedAt: Nullable(Timestamp),
  htmlValidation: Nullable(HtmlValidationSchema),
});
export type FormHtml = Static<typeof FormHtmlSchema>;

export const FormParams = Type.Object({ formId: PathId });
