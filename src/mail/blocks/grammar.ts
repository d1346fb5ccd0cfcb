import { Type, type Static } from 'typebox';

/**
 * The block document of contract §16: what the console's email editor stores in an `emailContent.editorContent`, and
 * what the service renders to the message's HTML and text on every write. Plumbing: no feature imports it back; the
 * features that store email content (templates, broadcasts, automation send steps, transactional emails) call
 * validateDocument and renderDocument (./validate.ts, ./render.ts).
 *
 * Columns hold blocks but not columns (one level of nesting, as every email builder has it): the grammar is not
 * recursive, and a document nested deeper is refused at the pointer of the first columns block inside a column.
 * Validation is the service's (validateDocument: one error per violation at its JSON Pointer); the schemas here give
 * the OpenAPI document, the SDK and the console their types.
 */

export const DOCUMENT_TYPE = 'formcast/blocks';
export const DOCUMENT_VERSION = 1;

/** Limits a document must keep (checked by validateDocument). */
export const LIMITS = {
  /** Blocks in all, those inside columns included. */
  blocks: 500,
  /** Blocks in one column. */
  columnBlocks: 50,
  /** Characters of one heading, text or button text. */
  text: 20_000,
  /** Bytes of one html block. */
  html: 256 * 1024,
  /** Bytes of the whole document as JSON. */
  documentBytes: 2 * 1024 * 1024,
  /** Links of one social block. */
  socialLinks: 12,
} as const;

const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'a colour as #rrggbb' });
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'an absolute http(s) URL, or Liquid giving one',
});
const Align = Type.Union([Type.Literal('left'), Type.Literal('center'), Type.Literal('right')]);
/** The editor's own id of a block (stable across edits, for drag and drop and selection); kept as given. */
const BlockId = Type.String({ minLength: 1, maxLength: 64 });

export const FONT_FAMILIES = {
  sans: 'Helvetica, Arial, sans-serif',
  serif: 'Georgia, "Times New Roman", serif',
  mono: 'Menlo, Consolas, "Courier New", monospace',
  rounded: '"Trebuchet MS", Verdana, sans-serif',
} as const;

export const DocumentSettings = Type.Object(
  {
    width: Type.Optional(Type.Integer({ minimum: 320, maximum: 600, description: 'content width in px (600)' })),
    backgroundColor: Type.Optional(Color),
    contentBackgroundColor: Type.Optional(Color),
    textColor: Type.Optional(Color),
    brandColor: Type.Optional(Color),
    linkColor: Type.Optional(Color),
    fontFamily: Type.Optional(
      Type.Union([Type.Literal('sans'), Type.Literal('serif'), Type.Literal('mono'), Type.Literal('rounded')]),
    ),
  },
  { additionalProperties: false },
);

const block = <T extends string, P extends Record<string, Parameters<typeof Type.Object>[0][string]>>(
  type: T,
  props: P,
) => Type.Object({ type: Type.Literal(type), id: Type.Optional(BlockId), ...props }, { additionalProperties: false });

export const HeadingBlock = block('heading', {
  text: Type.String({ maxLength: LIMITS.text, description: 'plain text and Liquid' }),
  level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)])),
  align: Type.Optional(Align),
});
export const TextBlock = block('text', {
  text: Type.String({
    maxLength: LIMITS.text,
    description: 'inline HTML (b, strong, i, em, u, a href, br) and Liquid; paragraphs as <p>',
  }),
  align: Type.Optional(Align),
});
export const ImageBlock = block('image', {
  url: Url,
  alt: Type.String({ maxLength: 500, description: 'alternative text ("" for a decorative image: a warning)' }),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: 600, description: 'px; the column width when omitted' })),
  href: Type.Optional(Url),
  align: Type.Optional(Align),
});
export const ButtonBlock = block('button', {
  text: Type.String({ maxLength: 200 }),
  url: Type.String({ maxLength: 2048, description: 'an absolute http(s) URL or Liquid ("" for none yet: a warning)' }),
  color: Type.Optional(Color),
  textColor: Type.Optional(Color),
  align: Type.Optional(Align),
});
export const DividerBlock = block('divider', { color: Type.Optional(Color) });
export const SpacerBlock = block('spacer', { height: Type.Integer({ minimum: 4, maximum: 200 }) });
export const SOCIAL_NETWORKS = [
  'facebook',
  'x',
  'instagram',
  'linkedin',
  'youtube',
  'tiktok',
  'github',
  'mastodon',
  'bluesky',
  'website',
] as const;
export const SocialBlock = block('social', {
  links: Type.Array(
    Type.Object(
      {
        network: Type.Enum(SOCIAL_NETWORKS),
        url: Url,
      },
      { additionalProperties: false },
    ),
    { maxItems: LIMITS.socialLinks },
  ),
  align: Type.Optional(Align),
});
export const HtmlBlock = block('html', {
  html: Type.String({ description: 'HTML, sanitised (no script, event handlers or javascript: URLs: 422)' }),
});
export const FooterBlock = block('footer', {
  text: Type.Optional(
    Type.String({ maxLength: 2000, description: 'an extra line above the address and the unsubscribe link' }),
  ),
  webVersion: Type.Optional(
    Type.Boolean({
      description:
        'a "View in browser" link to the recipient\'s web version (`{{ webversion_url }}`, docs/archive.md); left out on the web page itself',
    }),
  ),
  align: Type.Optional(Align),
});

/** The blocks a column holds: any but columns. */
export const LeafBlock = Type.Union([
  HeadingBlock,
  TextBlock,
  ImageBlock,
  ButtonBlock,
  DividerBlock,
  SpacerBlock,
  SocialBlock,
  HtmlBlock,
  FooterBlock,
]);

export const ColumnsBlock = block('columns', {
  columns: Type.Array(Type.Array(LeafBlock, { maxItems: LIMITS.columnBlocks }), { minItems: 2, maxItems: 3 }),
  /** Widths in percent, one per column, summing to 100 (equal when omitted). */
  widths: Type.Optional(Type.Array(Type.Integer({ minimum: 10, maximum: 90 }), { minItems: 2, maxItems: 3 })),
});

export const Block = Type.Union([LeafBlock, ColumnsBlock]);

export const BlockDocument = Type.Object(
  {
    type: Type.Literal(DOCUMENT_TYPE),
    version: Type.Literal(DOCUMENT_VERSION),
    settings: Type.Optional(DocumentSettings),
    blocks: Type.Array(Block),
  },
  {
    additionalProperties: false,
    description: `A block document (contract §16): at most ${LIMITS.blocks} blocks in all; columns hold any block but columns.`,
  },
);

export type DocumentSettings = Static<typeof DocumentSettings>;
export type LeafBlock = Static<typeof LeafBlock>;
export type ColumnsBlock = Static<typeof ColumnsBlock>;
export type Block = Static<typeof Block>;
export type BlockDocument = Static<typeof BlockDocument>;
export type BlockType = Block['type'];

/** Whether a stored `editorContent` is a block document (anything else is another editor's, kept as given). */
export function isBlockDocument(value: unknown): value is { type: typeof DOCUMENT_TYPE } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === DOCUMENT_TYPE;
}
