import { htmlToText } from '../compose.js';
import type { Block, BlockDocument } from './grammar.js';
import { LiquidGuard } from './liquid-guard.js';
import { inlineToText } from './markup.js';
import {
  END_IF,
  END_IF_WEBVERSION,
  FOOTER_ADDRESS,
  FOOTER_UNSUBSCRIBE_URL,
  FOOTER_WEBVERSION_URL,
  IF_UNSUBSCRIBE,
  IF_WEBVERSION,
  NETWORK_LABELS,
  unsubscribeLabel,
  webVersionLabel,
} from './labels.js';
import { hasFooter } from './warnings.js';

/**
 * The text part of a document: a readable equivalent built from the blocks, not from the HTML. Headings and paragraphs
 * as they read, links as `text (url)`, buttons as `Text: url`, images as their alternative text, columns in order,
 * social links as `Network: url`, the footer's lines; blocks apart by a blank line. Liquid stays as written.
 */
export function documentText(doc: BlockDocument, options: { lang?: string } = {}): string {
  const guard = new LiquidGuard(JSON.stringify(doc));
  const blocks: Block[] = hasFooter(doc) ? doc.blocks : [...doc.blocks, { type: 'footer' }];
  const parts: string[] = [];
  const visit = (b: Block) => {
    switch (b.type) {
      case 'heading':
        parts.push(b.text.trim());
        break;
      case 'text':
        parts.push(guard.restore(inlineToText(b.text, guard)));
        break;
      case 'image': {
        const alt = b.alt.trim();
        parts.push(alt && b.href ? `${alt} (${b.href})` : alt);
        break;
      }
      case 'button':
        parts.push(b.url ? `${b.text.trim()}: ${b.url}` : b.text.trim());
        break;
      case 'divider':
        parts.push('----------');
        break;
      case 'social':
        parts.push(b.links.map((l) => `${NETWORK_LABELS[l.network]}: ${l.url}`).join('\n'));
        break;
      case 'html':
        parts.push(guard.restore(htmlToText(guard.protect(b.html))).trim());
        break;
      case 'footer':
        parts.push(
          [
            ...(b.text?.trim() ? [b.text.trim()] : []),
            FOOTER_ADDRESS,
            ...(b.webVersion
              ? [`${IF_WEBVERSION}${webVersionLabel(options.lang)}: ${FOOTER_WEBVERSION_URL}${END_IF_WEBVERSION}`]
              : []),
            `${IF_UNSUBSCRIBE}${unsubscribeLabel(options.lang)}: ${FOOTER_UNSUBSCRIBE_URL}${END_IF}`,
          ].join('\n'),
        );
        break;
      case 'columns':
        b.columns.forEach((column) => column.forEach(visit));
        break;
      case 'spacer':
        break;
    }
  };
  blocks.forEach(visit);
  return parts.filter((p) => p !== '').join('\n\n');
}
