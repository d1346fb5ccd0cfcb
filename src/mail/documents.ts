import { validationFailed, type FieldError } from '../errors/errors.js';
import { liquid } from '../lib/liquid.js';
import { isBlockDocument, type BlockDocument } from './blocks/grammar.js';
import {
  documentWarnings as blockWarnings,
  renderDocument,
  type DocumentWarning,
  type RenderedDocument,
} from './blocks/render.js';
import { sanitizeDocument } from './blocks/sanitize.js';
import { validateDocument } from './blocks/validate.js';

/**
 * Block documents wherever email content is written (contract §16; docs/email-documents-api.md): a feature that stores
 * an `emailContent` (templates, broadcasts, automation send steps) checks its `editorContent` here and, when it is a
 * block document, stores the HTML and text rendered from it in place of any the request sent. Plumbing: the features
 * call it, and pass the settings their composition root gave them.
 */

/** What rendering a document needs of the installation (passed in by the root from its config). */
export interface DocumentSettings {
  /** The service's public base URL (PUBLIC_URL): the social blocks' icons are served under it. */
  publicUrl: string;
}

/** The fields of an `emailContent` (or of a template) that rendering reads and writes. */
export interface EmailContentFields {
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  editorContent?: unknown;
}

/**
 * The grammar's errors of a block document in `content.editorContent`, each at its JSON Pointer under
 * `<base>/editorContent`; [] when it is valid or when `editorContent` is not a block document (another editor's JSON,
 * kept as given).
 */
export function documentErrors(content: EmailContentFields | null | undefined, base: string): FieldError[] {
  if (!content || !isBlockDocument(content.editorContent)) return [];
  return validateDocument(content.editorContent, `${base}/editorContent`);
}

/**
 * Renders a valid block document (documentErrors gave none) to the whole HTML document and its text, in `lang` (the
 * workspace's locale: the footer's words, `<html lang>`) when given. No `<title>`: each send gives the document its
 * rendered subject (lib/html.ts, asDocument), and the `lang` when it has none.
 */
export function renderBlocks(doc: BlockDocument, settings: DocumentSettings, lang?: string): Promise<RenderedDocument> {
  return renderDocument(doc, { publicUrl: settings.publicUrl, ...(lang ? { lang } : {}) });
}

/**
 * `content` as it is stored: when its `editorContent` is a block document, with `html` and `text` rendered from it
 * (whatever html or text the write sent is ignored), else as given. The document stored is sanitised (blocks/sanitize.ts:
 * an html block's script, event handlers, `javascript:` URLs, iframes, forms, styles … removed), so that the editor
 * shows what is sent. A document that breaks the grammar is 422 validation_failed at its pointers
 * (`<base>/editorContent/blocks/3/url`, `…/blocks/0/text` for Liquid that does not parse); one whose rendering still
 * does not parse as a Liquid template (which the field checks should make impossible) is 422 at
 * `<base>/editorContent`. `lang` gives the workspace's locale, asked only when there is a document to render.
 */
export async function withRenderedDocument<T extends EmailContentFields>(
  content: T,
  base: string,
  settings: DocumentSettings,
  lang?: () => Promise<string | undefined>,
): Promise<T> {
  if (!isBlockDocument(content.editorContent)) return content;
  const errors = validateDocument(content.editorContent, `${base}/editorContent`);
  if (errors.length) throw validationFailed(errors);
  const doc = sanitizeDocument(content.editorContent as BlockDocument);
  const rendered = await renderBlocks(doc, settings, await lang?.());
  const liquidError = renderedLiquidError(rendered, `${base}/editorContent`);
  if (liquidError) throw validationFailed([liquidError]);
  return { ...content, editorContent: doc, html: rendered.html, text: rendered.text };
}

/** The first part of a rendered document that does not parse as a Liquid template, as an error at `path`. */
function renderedLiquidError(rendered: { html: string; text: string }, path: string): FieldError | null {
  for (const part of ['html', 'text'] as const) {
    try {
      liquid.parse(rendered[part]);
    } catch (err) {
      return {
        path,
        message: `renders to ${part === 'html' ? 'HTML' : 'text'} that is not a valid Liquid template: ${(err as Error).message.split('\n')[0]}`,
      };
    }
  }
  return null;
}

/**
 * What an author should look at in a stored `editorContent` before sending (preflight): the renderer's warnings
 * (an image without alt text, a button without a link, an empty block, no footer), each at its pointer in the document,
 * found without rendering it. [] for anything that is not a valid block document.
 */
export function documentWarnings(editorContent: unknown): DocumentWarning[] {
  if (!isBlockDocument(editorContent) || validateDocument(editorContent).length) return [];
  return blockWarnings(editorContent as BlockDocument);
}

/**
 * The workspace as Liquid sees it in every message and preview: `{{ workspace.name }}`, and
 * `{{ workspace.postal_address }}` (which the block documents' footer prints; empty when the workspace has none).
 */
export interface WorkspaceScope {
  name: string;
  postal_address: string | null;
}

export function workspaceScope(workspace: {
  name: string;
  settings: { postalAddress: string | null };
}): WorkspaceScope {
  return { name: workspace.name, postal_address: workspace.settings.postalAddress };
}

export type { DocumentWarning };
