/**
 * The block document of contract §16, as the console sees it: the types of src/mail/blocks/grammar.ts, declared here
 * because the console imports no server source. They match grammar.ts field for field; once the OpenAPI document
 * names the BlockDocument schema (the render endpoint), these become aliases of the generated types.
 */

export const DOCUMENT_TYPE = 'formcast/blocks';
export const DOCUMENT_VERSION = 1;

/** grammar.ts LIMITS: what the service refuses beyond. */
export const LIMITS = {
  blocks: 500,
  columnBlocks: 50,
  text: 20_000,
  socialLinks: 12,
} as const;

export type Align = 'left' | 'center' | 'right';
export type FontFamily = 'sans' | 'serif' | 'mono' | 'rounded';

export const FONT_FAMILIES: Record<FontFamily, { label: string; css: string }> = {
  sans: { label: 'Sans-serif (Helvetica, Arial)', css: 'Helvetica, Arial, sans-serif' },
  serif: { label: 'Serif (Georgia, Times)', css: 'Georgia, "Times New Roman", serif' },
  mono: { label: 'Monospace (Menlo, Consolas)', css: 'Menlo, Consolas, "Courier New", monospace' },
  rounded: { label: 'Rounded (Trebuchet, Verdana)', css: '"Trebuchet MS", Verdana, sans-serif' },
};

export interface DocumentSettings {
  width?: number;
  backgroundColor?: string;
  contentBackgroundColor?: string;
  textColor?: string;
  brandColor?: string;
  linkColor?: string;
  fontFamily?: FontFamily;
}

export interface HeadingBlock {
  type: 'heading';
  id?: string;
  text: string;
  level?: 1 | 2 | 3;
  align?: Align;
}
export interface TextBlock {
  type: 'text';
  id?: string;
  text: string;
  align?: Align;
}
export interface ImageBlock {
  type: 'image';
  id?: string;
  url: string;
  alt: string;
  width?: number;
  href?: string;
  align?: Align;
}
export interface ButtonBlock {
  type: 'button';
  id?: string;
  text: string;
  url: string;
  color?: string;
  textColor?: string;
  align?: Align;
}
export interface DividerBlock {
  type: 'divider';
  id?: string;
  color?: string;
}
export interface SpacerBlock {
  type: 'spacer';
  id?: string;
  height: number;
}
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
export type SocialNetwork = (typeof SOCIAL_NETWORKS)[number];
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
export interface SocialBlock {
  type: 'social';
  id?: string;
  links: { network: SocialNetwork; url: string }[];
  align?: Align;
}
export interface HtmlBlock {
  type: 'html';
  id?: string;
  html: string;
}
export interface FooterBlock {
  type: 'footer';
  id?: string;
  text?: string;
  align?: Align;
}

/** The blocks a column holds: any but columns. */
export type LeafBlock =
  | HeadingBlock
  | TextBlock
  | ImageBlock
  | ButtonBlock
  | DividerBlock
  | SpacerBlock
  | SocialBlock
  | HtmlBlock
  | FooterBlock;

export interface ColumnsBlock {
  type: 'columns';
  id?: string;
  columns: LeafBlock[][];
  /** Widths in percent, one per column, summing to 100 (equal when omitted). */
  widths?: number[];
}

export type Block = LeafBlock | ColumnsBlock;
export type BlockType = Block['type'];

export interface BlockDocument {
  type: typeof DOCUMENT_TYPE;
  version: typeof DOCUMENT_VERSION;
  settings?: DocumentSettings;
  blocks: Block[];
}

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
export interface DocumentWarning {
  path: string;
  code: string;
  message: string;
}
