import { Type, type Static } from 'typebox';
import { Nullable, PathId, Timestamp } from '../../http/schema-helpers.js';
import { BlockDocument } from '../../mail/blocks/grammar.js';

/**
 * Reusable email content (subject, html, text are Liquid templates); also the double opt-in email of forms.
 * `editorContent` is what an editor stores; a block document there (contract §16) is rendered to `html` and `text`.
 */
const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  subject: Nullable(Type.String({ maxLength: 998 })),
  html: Nullable(Type.String({ description: 'Liquid template; up to 2 MiB' })),
  text: Nullable(Type.String({ description: 'Liquid template; up to 2 MiB' })),
  editorContent: Type.Unknown({
    description:
      'any JSON an editor stores; a block document ({ "type": "formcast/blocks", … }) is rendered to html and text on every write',
  }),
  alias: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
      description: 'unique per workspace: what POST /v1/emails may name instead of the id (docs/emails.md)',
    }),
  ),
};

export const CreateTemplateBody = Type.Object(
  {
    name: fields.name,
    alias: Type.Optional(fields.alias),
    subject: Type.Optional(fields.subject),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
    editorContent: Type.Optional(fields.editorContent),
  },
  { additionalProperties: false },
);
export type CreateTemplateInput = Static<typeof CreateTemplateBody>;

export const UpdateTemplateBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(fields.name),
    alias: Type.Optional(fields.alias),
    subject: Type.Optional(fields.subject),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
    editorContent: Type.Optional(fields.editorContent),
  },
  { additionalProperties: false },
);
export type UpdateTemplateInput = Static<typeof UpdateTemplateBody>;

export const TemplateSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  alias: Nullable(Type.String()),
  version: Type.Integer({
    minimum: 1,
    description: 'increments with each change of subject, html or text; an email records the version it used',
  }),
  subject: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  editorContent: Type.Unknown({ description: "the editor's JSON as stored (a block document, or null)" }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Template = Static<typeof TemplateSchema>;

export const TemplateParams = Type.Object({ templateId: PathId });

/** A starter of the gallery (templates.gallery.ts): a block document to begin an email from. */
export const GalleryItemSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  subject: Type.String({ description: 'a subject line to start from (Liquid)' }),
  editorContent: BlockDocument,
});
export const GallerySchema = Type.Object({ data: Type.Array(GalleryItemSchema), nextCursor: Type.Null() });
