import type { Block, BlockDocument } from './grammar.js';
import { LiquidGuard, isOnlyLiquid } from './liquid-guard.js';
import { sanitizeHtml, textContent } from './markup.js';

/** Something an author should look at before sending (contract §16's preflight): the block's pointer and a sentence. */
export interface DocumentWarning {
  /** JSON Pointer of the block in the document, e.g. `/blocks/2` ("" for the document). */
  path: string;
  code:
    | 'image_alt_missing'
    | 'button_link_missing'
    | 'block_empty'
    | 'footer_missing'
    | 'image_not_absolute'
    | 'html_sanitized';
  message: string;
  /** `info` for what the service takes care of itself (a footer added); a warning otherwise (absent: a warning). */
  level?: 'info' | 'warning';
}

/**
 * What a preflight shows about a valid document, without rendering it: an image without alternative text, an image
 * whose address is Liquid alone, a button without a link, an empty block, what an html block's sanitising removes
 * (`html_sanitized`, one per kind of thing removed: a document as stored has none, it was stored sanitised), and (for
 * information) a missing footer, which the renderer adds. Pure: the same document gives the same warnings, in
 * document order.
 */
export function documentWarnings(doc: BlockDocument): DocumentWarning[] {
  const warnings: DocumentWarning[] = [];
  let guard: LiquidGuard | undefined;
  const visit = (b: Block, path: string) => {
    const warn = (code: DocumentWarning['code'], message: string) =>
      warnings.push({ path, code, message, level: 'warning' });
    switch (b.type) {
      case 'heading':
        if (!b.text.trim()) warn('block_empty', 'The heading is empty: write it, or remove the block.');
        break;
      case 'text':
        if (!b.text.includes('{') && !textContent(b.text))
          warn('block_empty', 'The text block is empty: write something, or remove the block.');
        break;
      case 'image':
        if (!b.alt.trim())
          warn(
            'image_alt_missing',
            'The image has no alternative text: readers who do not load images, and screen readers, get nothing. Describe it in a few words.',
          );
        if (isOnlyLiquid(b.url))
          warn(
            'image_not_absolute',
            "The image's address comes from Liquid alone: make sure it gives an absolute https:// address for every contact.",
          );
        break;
      case 'button':
        if (!b.text.trim()) warn('block_empty', 'The button has no text: say what it does, e.g. "Read more".');
        if (!b.url.trim()) warn('button_link_missing', 'The button links nowhere yet: add the address it should open.');
        break;
      case 'social':
        if (!b.links.length) warn('block_empty', 'The social links block has no links: add one, or remove the block.');
        break;
      case 'html':
        if (!b.html.trim()) warn('block_empty', 'The HTML block is empty: add its HTML, or remove the block.');
        for (const m of sanitizeHtml(b.html, (guard ??= new LiquidGuard(JSON.stringify(doc)))).removed)
          warn('html_sanitized', m);
        break;
      case 'columns':
        if (b.columns.every((c) => c.length === 0))
          warn('block_empty', 'Every column is empty: add blocks to them, or remove the columns.');
        b.columns.forEach((column, c) => column.forEach((inner, i) => visit(inner, `${path}/columns/${c}/${i}`)));
        break;
    }
  };
  doc.blocks.forEach((b, i) => visit(b, `/blocks/${i}`));
  if (!hasFooter(doc))
    warnings.push({
      path: '',
      code: 'footer_missing',
      level: 'info',
      message:
        'The email has no footer block, so one is added at its end with your postal address and the unsubscribe link.',
    });
  return warnings;
}

/** Whether a footer block is in the document (at the top level or in a column). */
export function hasFooter(doc: BlockDocument): boolean {
  return doc.blocks.some(
    (b) => b.type === 'footer' || (b.type === 'columns' && b.columns.some((c) => c.some((x) => x.type === 'footer'))),
  );
}
