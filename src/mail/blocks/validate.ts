import type { FieldError } from '../../errors/errors.js';
import { isBlockDocument, type BlockDocument } from './grammar.js';

/**
 * STUB (issue 31, to be replaced by the renderer's author): checks a block document against the grammar and its
 * limits, one error per violation at its JSON Pointer under `base` (e.g. `/emailContent/editorContent/blocks/3`).
 * An empty list: `value` is a valid BlockDocument.
 */
export function validateDocument(value: unknown, base = ''): FieldError[] {
  if (!isBlockDocument(value)) return [{ path: `${base}/type`, message: 'must be "formcast/blocks"' }];
  const doc = value as Partial<BlockDocument>;
  if (!Array.isArray(doc.blocks)) return [{ path: `${base}/blocks`, message: 'must be an array of blocks' }];
  return [];
}
