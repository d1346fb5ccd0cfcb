import { Type, type Static } from 'typebox';
import { Nullable, PathId, Timestamp } from '../../http/schema-helpers.js';
import { BlockDocument } from '../../mail/blocks/grammar.js';

/** Reusable email content (subject, html, text are Liquid templates); also the double opt-in email of forms. */
const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  subject: Nullable(Type.String({ maxLength: 998 })),
  html: Nullable(Type.String({ description: 'Liquid template; up to 2 MiB' })),
  text: Nullable(Type.String({ description: 'Liquid template; up to 2 MiB' })),
};

export const CreateTemplateBody = Type.Object(
  {
    name: fields.name,
    subject: Type.Optional(fields.subject),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
  },
  { additionalProperties: false },
);
export type CreateTemplateInput = Static<typeof CreateTemplateBody>;

export const UpdateTemplateBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(fields.name),
    subject: Type.Optional(fields.subject),
    html: Type.Optional(fields.html),
    text: Type.Optional(fields.text),
  },
  { additionalProperties: false },
);
export type UpdateTemplateInput = Static<typeof UpdateTemplateBody>;

export const TemplateSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  subject: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
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
