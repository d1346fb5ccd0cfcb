import { Type, type Static } from 'typebox';
import { BlockDocument } from '../../mail/blocks/grammar.js';
import { checkedByService, StringEnum } from '../../http/schema-helpers.js';
import type { DocumentWarning } from '../../mail/blocks/render.js';

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

/** The renderer's warning codes (mail/blocks/warnings.ts): the compiler keeps the two lists the same. */
const WARNING_CODES = [
  'image_alt_missing',
  'button_link_missing',
  'block_empty',
  'footer_missing',
  'image_not_absolute',
  'html_sanitized',
] as const satisfies readonly DocumentWarning['code'][];
const everyCode: Exclude<DocumentWarning['code'], (typeof WARNING_CODES)[number]> extends never ? true : never = true;
void everyCode;

export const DocumentWarningSchema = Type.Object({
  path: Type.String({ description: 'the JSON Pointer of the block in the document ("" for the document)' }),
  code: StringEnum(WARNING_CODES),
  message: Type.String({ description: 'a sentence for the author' }),
  level: Type.Optional(
    StringEnum(['info', 'warning'], {
      description: 'info: what the service takes care of itself (a footer added); warning otherwise',
    }),
  ),
});

export const RenderedDocumentSchema = Type.Object({
  html: Type.String(),
  text: Type.String(),
  warnings: Type.Array(DocumentWarningSchema),
});
export type RenderedDocumentView = Static<typeof RenderedDocumentSchema>;
