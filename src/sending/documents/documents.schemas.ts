import { Type, type Static } from 'typebox';
import { BlockDocument } from '../../mail/blocks/grammar.js';
import { checkedByService } from '../../http/schema-helpers.js';

/**
 * POST /v1/email-documents/render (contract §16; docs/email-documents-api.md). The document's schema is the grammar's
 * (src/mail/blocks/grammar.ts), named `BlockDocument` in the OpenAPI document so that the SDK and the console get its
 * type; the request validator takes any value there (checkedByService) and the service's validateDocument answers,
 * one error per violation at its JSON Pointer (`/editorContent/blocks/3/url`).
 */
const BlockDocumentSchema = checkedByService(Type.Cyclic({ BlockDocument }, 'BlockDocument'));

export const RenderDocumentBody = Type.Object(
  {
    editorContent: BlockDocumentSchema,
    contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type RenderDocumentInput = Static<typeof RenderDocumentBody>;

export const DocumentWarningSchema = Type.Object({
  path: Type.String(),
  code: Type.String(),
  message: Type.String(),
});

export const RenderedDocumentSchema = Type.Object({
  html: Type.String(),
  text: Type.String(),
  warnings: Type.Array(DocumentWarningSchema),
});
export type RenderedDocumentView = Static<typeof RenderedDocumentSchema>;
