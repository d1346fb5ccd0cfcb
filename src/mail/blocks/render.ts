import { escapeHtml } from '../../lib/html.js';
import type { BlockDocument } from './grammar.js';

/** Something an author should look at before sending (contract §16's preflight): the block's pointer and a sentence. */
export interface DocumentWarning {
  /** JSON Pointer of the block in the document, e.g. `/blocks/2` ("" for the document). */
  path: string;
  code: 'image_alt_missing' | 'button_link_missing' | 'block_empty' | 'footer_missing' | 'image_not_absolute';
  message: string;
}

export interface RenderedDocument {
  /** The whole HTML document; Liquid in it (text blocks, the footer's `{{ unsubscribe_url }}`) is left for the send. */
  html: string;
  /** The readable text equivalent, Liquid left in it likewise. */
  text: string;
  warnings: DocumentWarning[];
}

export interface RenderOptions {
  /** The document's language (`<html lang>`), the workspace's locale. */
  lang?: string;
  /** The `<title>`: the subject. */
  title?: string;
}

/**
 * STUB (issue 31, to be replaced by the renderer's author): renders a valid document (validateDocument gave no error)
 * to email-client-safe HTML and text. The footer block prints `{{ workspace.postal_address }}` and links
 * `{{ unsubscribe_url }}` (Liquid, filled at the send); a document without a footer gets one at its end.
 */
export async function renderDocument(doc: BlockDocument, options: RenderOptions = {}): Promise<RenderedDocument> {
  const parts: string[] = [];
  const text: string[] = [];
  for (const b of doc.blocks) {
    if (b.type === 'heading' || b.type === 'text') {
      parts.push(`<p>${b.type === 'heading' ? escapeHtml(b.text) : b.text}</p>`);
      text.push(b.text);
    }
  }
  parts.push('<p>{{ workspace.postal_address }} <a href="{{ unsubscribe_url }}">Unsubscribe</a></p>');
  text.push('{{ workspace.postal_address }}\nUnsubscribe: {{ unsubscribe_url }}');
  return {
    html: `<!doctype html><html lang="${escapeHtml(options.lang ?? 'en')}"><head><meta charset="utf-8"><title>${escapeHtml(options.title ?? '')}</title></head><body>${parts.join('')}</body></html>`,
    text: text.join('\n\n'),
    warnings: [],
  };
}
