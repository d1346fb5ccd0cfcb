/**
 * The block document of contract §16, as the console sees it: its types are the OpenAPI document's `BlockDocument`
 * schema (src/mail/blocks/grammar.ts, through the generated types: the console imports no server source), and the
 * few constants the editor needs at run time (kept equal to grammar.ts's).
 */
import type { components, paths } from '../../api/generated/schema';

export const DOCUMENT_TYPE = 'formcast/blocks';
export const DOCUMENT_VERSION = 1;

/** grammar.ts LIMITS: what the service refuses beyond. */
export const LIMITS = {
  blocks: 500,
  columnBlocks: 50,
  text: 20_000,
  socialLinks: 12,
} as const;

export type BlockDocument = components['schemas']['BlockDocument'];
export type Block = BlockDocument['blocks'][number];
export type BlockType = Block['type'];
export type ColumnsBlock = Extract<Block, { type: 'columns' }>;
/** The blocks a column holds: any but columns. */
export type LeafBlock = ColumnsBlock['columns'][number][number];
export type HeadingBlock = Extract<Block, { type: 'heading' }>;
export type TextBlock = Extract<Block, { type: 'text' }>;
export type ImageBlock = Extract<Block, { type: 'image' }>;
export type ButtonBlock = Extract<Block, { type: 'button' }>;
export type DividerBlock = Extract<Block, { type: 'divider' }>;
export type SpacerBlock = Extract<Block, { type: 'spacer' }>;
export type SocialBlock = Extract<Block, { type: 'social' }>;
export type HtmlBlock = Extract<Block, { type: 'html' }>;
export type FooterBlock = Extract<Block, { type: 'footer' }>;
export type DocumentSettings = NonNullable<BlockDocument['settings']>;
export type FontFamily = NonNullable<DocumentSettings['fontFamily']>;
export type Align = NonNullable<TextBlock['align']>;
export type SocialNetwork = SocialBlock['links'][number]['network'];

export const FONT_FAMILIES: Record<FontFamily, { label: string; css: string }> = {
  sans: { label: 'Sans-serif (Helvetica, Arial)', css: 'Helvetica, Arial, sans-serif' },
  serif: { label: 'Serif (Georgia, Times)', css: 'Georgia, "Times New Roman", serif' },
  mono: { label: 'Monospace (Menlo, Consolas)', css: 'Menlo, Consolas, "Courier New", monospace' },
  rounded: { label: 'Rounded (Trebuchet, Verdana)', css: '"Trebuchet MS", Verdana, sans-serif' },
};

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
] as const satisfies readonly SocialNetwork[];
export const NETWORK_LABELS: Record<SocialNetwork, string> = {
  facebook: 'Facebook',
  x: 'X',
  instagram: 'Instagram',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
  tiktok: 'TikTok',
  github: 'GitHub',
  mastodon: 'Mastodon',
  bluesky: 'Bluesky',
  website: 'Website',
};
/** Whether a stored `editorContent` is a block document (anything else is another editor's, kept as given). */
export function isBlockDocument(value: unknown): value is BlockDocument {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === DOCUMENT_TYPE &&
    Array.isArray((value as { blocks?: unknown }).blocks)
  );
}

/** A warning of the renderer (POST /v1/email-documents/render): `path` a JSON pointer into the document. */
export type DocumentWarning = RenderAnswer['warnings'][number];
type RenderAnswer = paths['/v1/email-documents/render']['post']['responses'][200]['content']['application/json'];
