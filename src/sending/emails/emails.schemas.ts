import { Type, type Static } from 'typebox';
import { Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { MEDIA_TYPE_PATTERN } from '../../mail/mime.js';
import { EventSchema } from '../../outbox/index.js';

/** Transactional email (contract §20, docs/emails.md): the body of POST /v1/emails and what the API returns. */

export const EMAIL_STATUSES = ['QUEUED', 'SENT', 'BOUNCED', 'FAILED', 'SUPPRESSED'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** Recipients per field (to 1..50; cc and bcc up to 50 each). */
export const MAX_RECIPIENTS = 50;
/** Attachments of one email at most, and the characters of a file name. */
export const MAX_ATTACHMENTS = 20;
export const MAX_FILENAME = 255;
/** The attachments of one email, decoded, in all (10 MiB). */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

const Address = Type.String({ minLength: 3, maxLength: 998, description: '`addr@domain` or `Name <addr@domain>`' });

export const SendEmailBody = Type.Object(
  {
    from: Type.String({ minLength: 3, maxLength: 998, description: 'a mailbox on a verified domain of the workspace' }),
    to: Type.Array(Address, { minItems: 1, maxItems: MAX_RECIPIENTS }),
    cc: Type.Optional(Type.Array(Address, { maxItems: MAX_RECIPIENTS })),
    bcc: Type.Optional(Type.Array(Address, { maxItems: MAX_RECIPIENTS, description: 'never shown in a header' })),
    replyTo: Type.Optional(Address),
    subject: Type.Optional(
      Type.String({ maxLength: 998, description: "required unless the template has one; overrides the template's" }),
    ),
    html: Type.Optional(Type.String({ description: 'sent as given (no Liquid); up to 2 MiB' })),
    text: Type.Optional(Type.String({ description: 'sent as given; up to 2 MiB' })),
    templateId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "a template's id or its alias" }),
    ),
    data: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "what the template's Liquid sees (`{{ name }}` or `{{ data.name }}`)",
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 998 }), {
        description:
          'extra header fields; those that would break the message or its signature are refused (docs/emails.md)',
      }),
    ),
    tags: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,100}$' }), { maxItems: 20, uniqueItems: true }),
    ),
    attachments: Type.Optional(
      Type.Array(
        Type.Object(
          {
            filename: Type.String({ minLength: 1, maxLength: MAX_FILENAME }),
            content: Type.String({ description: 'the file, base64 (RFC 4648, no line breaks)' }),
            contentType: Type.Optional(Type.String({ maxLength: 255, pattern: MEDIA_TYPE_PATTERN })),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_ATTACHMENTS, description: '10 MiB decoded in all' },
      ),
    ),
    tracking: Type.Optional(
      Type.Object(
        { opens: Type.Optional(Type.Boolean()), clicks: Type.Optional(Type.Boolean()) },
        { additionalProperties: false, description: 'both false by default' },
      ),
    ),
  },
  { additionalProperties: false },
);
/** What POST /v1/emails takes, and what the SMTP submission server hands sendEmail (the same shape). */
export type EmailInput = Static<typeof SendEmailBody>;

export const SendEmailResponse = Type.Object({ id: Type.String() });

export const EmailRecipientSchema = Type.Object({
  email: Type.String(),
  type: StringEnum(['to', 'cc', 'bcc'] as const),
  status: StringEnum(EMAIL_STATUSES),
  lastError: Nullable(Type.String()),
});

export const EmailSchema = Type.Object({
  id: Type.String(),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  replyTo: Nullable(Type.String()),
  subject: Type.String(),
  status: StringEnum(EMAIL_STATUSES, { description: "a summary of the recipients' statuses (docs/emails.md)" }),
  recipients: Type.Array(EmailRecipientSchema),
  tags: Type.Array(Type.String()),
  templateId: Nullable(Type.String()),
  templateVersion: Nullable(Type.Integer()),
  tracking: Type.Object({ opens: Type.Boolean(), clicks: Type.Boolean() }),
  attachments: Type.Array(Type.Object({ filename: Type.String(), contentType: Type.String(), size: Type.Integer() })),
  headers: Type.Record(Type.String(), Type.String()),
  createdAt: Timestamp,
});
export type Email = Static<typeof EmailSchema>;

/** An email's events (GET /v1/emails/{id}/events), newest first; each names its recipient as `data.email`. */
export const EmailEventsSchema = Type.Object({ data: Type.Array(EventSchema) });

/** The detail adds the content as sent (the console's view of a message). */
export const EmailDetailSchema = Type.Object({
  ...EmailSchema.properties,
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
});
export type EmailDetail = Static<typeof EmailDetailSchema>;

export const EmailParams = Type.Object({ emailId: PathId });

export const EmailListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    recipient: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'emails with a recipient (to, cc or bcc) whose address contains this text, case-insensitively',
      }),
    ),
    status: Type.Optional(StringEnum(EMAIL_STATUSES)),
    templateId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    tag: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,100}$' })),
  },
  { additionalProperties: false },
);
export type EmailListFilter = Static<typeof EmailListQuery>;
