import type { Block, BlockDocument } from './grammar.js';
import { LiquidGuard } from './liquid-guard.js';
import { sanitizeHtml } from './markup.js';

/**
 * A valid document (validateDocument gave no error) as it is stored: each html block whose HTML held something unsafe
 * (a script, an event handler, a `javascript:` URL, an iframe, a form, a `<style>` … : markup.ts, sanitizeHtml) gets
 * the sanitised HTML in its place, Liquid restored byte for byte, so that the editor shows what will be sent (contract
 * §16: sanitised like §4's deployed HTML, not refused). An html block with nothing to remove keeps its HTML exactly as
 * written. The same object when nothing changed; a new one otherwise (`doc` is never changed).
 */
export function sanitizeDocument(doc: BlockDocument): BlockDocument {
  let guard: LiquidGuard | undefined;
  const leaf = <T extends Block>(b: T): T => {
    if (b.type !== 'html') return b;
    const g = (guard ??= new LiquidGuard(JSON.stringify(doc)));
    const clean = sanitizeHtml(b.html, g);
    return clean.removed.length ? { ...b, html: g.restore(clean.html) } : b;
  };
  const blocks = doc.blocks.map((b) => {
    if (b.type !== 'columns') return leaf(b);
    const columns = b.columns.map((column) => column.map(leaf));
    return columns.some((c, i) => c.some((x, j) => x !== b.columns[i]![j])) ? { ...b, columns } : b;
  });
  return blocks.some((b, i) => b !== doc.blocks[i]) ? { ...doc, blocks } : doc;
}
