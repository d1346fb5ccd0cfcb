/**
 * Pure operations on a block document: new blocks and documents, ids, finding a block, inserting, moving,
 * duplicating and removing it (at the top level or inside a column), what a save sends, and the block a JSON
 * pointer names. Every operation returns a new document (the history keeps the old ones).
 *
 * Lists: the top level is the list `root`; the n-th column of a columns block is the list `<blockId>/<n>`.
 */
import {
  DOCUMENT_TYPE,
  DOCUMENT_VERSION,
  LIMITS,
  type Block,
  type BlockDocument,
  type BlockType,
  type ColumnsBlock,
  type DocumentSettings,
  type LeafBlock,
} from './document';

export type ListId = string;
export const ROOT: ListId = 'root';

export const BLOCK_LABELS: Record<BlockType, string> = {
  heading: 'Heading',
  text: 'Text',
  image: 'Image',
  button: 'Button',
  divider: 'Divider',
  spacer: 'Spacer',
  columns: 'Columns',
  social: 'Social links',
  html: 'HTML',
  footer: 'Footer',
};

/** What the palette offers; `columns3` is a columns block of three. */
export type PaletteItem = Exclude<BlockType, 'columns'> | 'columns2' | 'columns3';
export const PALETTE: { item: PaletteItem; label: string; hint: string }[] = [
  { item: 'heading', label: 'Heading', hint: 'A title, three sizes' },
  { item: 'text', label: 'Text', hint: 'Paragraphs with bold, italic and links' },
  { item: 'image', label: 'Image', hint: 'Upload or drop a picture' },
  { item: 'button', label: 'Button', hint: 'A link people can tap' },
  { item: 'divider', label: 'Divider', hint: 'A thin line' },
  { item: 'spacer', label: 'Spacer', hint: 'Empty space' },
  { item: 'columns2', label: '2 columns', hint: 'Blocks side by side' },
  { item: 'columns3', label: '3 columns', hint: 'Blocks side by side' },
  { item: 'social', label: 'Social links', hint: 'Icons to your profiles' },
  { item: 'html', label: 'HTML', hint: 'Your own markup (sanitised)' },
  { item: 'footer', label: 'Footer', hint: 'Address and unsubscribe link' },
];

/** A fresh block id: `b-` and 8 random base-36 characters. */
export function newId(taken?: Set<string>): string {
  for (;;) {
    const bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    const id = `b-${Array.from(bytes, (b) => (b % 36).toString(36)).join('')}`;
    if (!taken?.has(id)) return id;
  }
}

export function idOf(b: Block): string {
  return b.id ?? '';
}

/** Every block, depth first (a columns block before its columns' blocks). */
export function allBlocks(doc: BlockDocument): Block[] {
  const out: Block[] = [];
  for (const b of doc.blocks) {
    out.push(b);
    if (b.type === 'columns') for (const col of b.columns) out.push(...col);
  }
  return out;
}

export function newBlock(item: PaletteItem, ctx: { taken?: Set<string> } = {}): Block {
  const id = newId(ctx.taken);
  switch (item) {
    case 'heading':
      return { type: 'heading', id, text: '', level: 2 };
    case 'text':
      return { type: 'text', id, text: '' };
    case 'image':
      return { type: 'image', id, url: '', alt: '' };
    case 'button':
      return { type: 'button', id, text: 'Read more', url: '' };
    case 'divider':
      return { type: 'divider', id };
    case 'spacer':
      return { type: 'spacer', id, height: 24 };
    case 'columns2':
    case 'columns3': {
      const n = item === 'columns2' ? 2 : 3;
      const taken = new Set([...(ctx.taken ?? []), id]);
      const columns: LeafBlock[][] = Array.from({ length: n }, () => {
        const t: LeafBlock = { type: 'text', id: newId(taken), text: '' };
        taken.add(t.id!);
        return [t];
      });
      return { type: 'columns', id, columns };
    }
    case 'social':
      return { type: 'social', id, links: [{ network: 'website', url: '' }] };
    case 'html':
      return { type: 'html', id, html: '' };
    case 'footer':
      return { type: 'footer', id };
  }
}

/** A new document: a heading, a greeting and the footer; the brand colour from the workspace's settings. */
export function newDocument(opts: { brandColor?: string | null } = {}): BlockDocument {
  const taken = new Set<string>();
  const id = () => {
    const x = newId(taken);
    taken.add(x);
    return x;
  };
  const settings: DocumentSettings = {};
  if (opts.brandColor && /^#[0-9a-fA-F]{6}$/.test(opts.brandColor)) settings.brandColor = opts.brandColor.toLowerCase();
  return {
    type: DOCUMENT_TYPE,
    version: DOCUMENT_VERSION,
    ...(Object.keys(settings).length ? { settings } : {}),
    blocks: [
      { type: 'heading', id: id(), text: 'Your headline', level: 1 },
      {
        type: 'text',
        id: id(),
        text: '<p>Hi {{ contact.firstName | default: "there" }},</p><p>Write your message here.</p>',
      },
      { type: 'footer', id: id() },
    ],
  };
}

function clone<T>(x: T): T {
  return structuredClone(x);
}

/**
 * The document as the editor keeps it: every block with an id of its own (kept when given, made when missing or
 * taken twice), and a footer (one is added at the end when there is none: a document always has one).
 */
export function normalise(doc: BlockDocument): BlockDocument {
  if (isNormal(doc)) return doc;
  const out = clone(doc);
  const taken = new Set<string>();
  const fix = (b: Block) => {
    if (!b.id || taken.has(b.id)) b.id = newId(taken);
    taken.add(b.id);
  };
  for (const b of out.blocks) {
    fix(b);
    if (b.type === 'columns') for (const col of b.columns) for (const x of col) fix(x);
  }
  if (!allBlocks(out).some((b) => b.type === 'footer')) out.blocks.push({ type: 'footer', id: newId(taken) });
  return out;
}

function isNormal(doc: BlockDocument): boolean {
  const seen = new Set<string>();
  for (const b of allBlocks(doc)) {
    if (!b.id || seen.has(b.id)) return false;
    seen.add(b.id);
  }
  return allBlocks(doc).some((b) => b.type === 'footer');
}

export interface Location {
  list: ListId;
  index: number;
  block: Block;
  /** The columns block and the column, for a block inside a column. */
  parent?: { id: string; column: number };
}

export function locate(doc: BlockDocument, id: string): Location | null {
  for (let i = 0; i < doc.blocks.length; i++) {
    const b = doc.blocks[i]!;
    if (b.id === id) return { list: ROOT, index: i, block: b };
    if (b.type === 'columns')
      for (let c = 0; c < b.columns.length; c++) {
        const j = b.columns[c]!.findIndex((x) => x.id === id);
        if (j >= 0)
          return { list: `${b.id}/${c}`, index: j, block: b.columns[c]![j]!, parent: { id: b.id!, column: c } };
      }
  }
  return null;
}

export function parseList(list: ListId): { parent: string; column: number } | null {
  if (list === ROOT) return null;
  const at = list.lastIndexOf('/');
  return { parent: list.slice(0, at), column: Number(list.slice(at + 1)) };
}

export function listOf(doc: BlockDocument, list: ListId): Block[] {
  const p = parseList(list);
  if (!p) return doc.blocks;
  const parent = doc.blocks.find((b) => b.id === p.parent);
  return parent?.type === 'columns' ? (parent.columns[p.column] ?? []) : [];
}

function withList(doc: BlockDocument, list: ListId, blocks: Block[]): BlockDocument {
  const p = parseList(list);
  if (!p) return { ...doc, blocks };
  return {
    ...doc,
    blocks: doc.blocks.map((b) =>
      b.id === p.parent && b.type === 'columns'
        ? { ...b, columns: b.columns.map((col, i) => (i === p.column ? (blocks as LeafBlock[]) : col)) }
        : b,
    ),
  };
}

/** Whether a block may go into a list: a column takes neither columns nor the footer. */
export function fits(block: Block, list: ListId): boolean {
  return list === ROOT || (block.type !== 'columns' && block.type !== 'footer');
}

export function updateBlock(doc: BlockDocument, id: string, patch: Partial<Block>): BlockDocument {
  const at = locate(doc, id);
  if (!at) return doc;
  const list = listOf(doc, at.list).slice();
  list[at.index] = { ...at.block, ...patch } as Block;
  return withList(doc, at.list, list);
}

export function insertBlock(doc: BlockDocument, list: ListId, index: number, block: Block): BlockDocument {
  if (!fits(block, list)) return doc;
  const xs = listOf(doc, list).slice();
  xs.splice(Math.max(0, Math.min(index, xs.length)), 0, block);
  return withList(doc, list, xs);
}

export function removeBlock(doc: BlockDocument, id: string): BlockDocument {
  const at = locate(doc, id);
  if (!at) return doc;
  const xs = listOf(doc, at.list).filter((b) => b.id !== id);
  return withList(doc, at.list, xs);
}

/** Moves a block to `index` of `list` (the index in the list as it is before the move). */
export function moveBlock(doc: BlockDocument, id: string, list: ListId, index: number): BlockDocument {
  const at = locate(doc, id);
  if (!at || !fits(at.block, list)) return doc;
  if (at.list === list) {
    const xs = listOf(doc, list).slice();
    const [b] = xs.splice(at.index, 1);
    xs.splice(Math.max(0, Math.min(index, xs.length)), 0, b!);
    return withList(doc, list, xs);
  }
  if (at.block.type === 'columns' && parseList(list)?.parent === id) return doc;
  return insertBlock(removeBlock(doc, id), list, index, at.block);
}

/** One place up (-1) or down (+1) in its list; null at the edge. */
export function moveBy(doc: BlockDocument, id: string, delta: -1 | 1): BlockDocument | null {
  const at = locate(doc, id);
  if (!at) return null;
  const to = at.index + delta;
  if (to < 0 || to >= listOf(doc, at.list).length) return null;
  return moveBlock(doc, id, at.list, to);
}

/** A copy (new ids, also of the blocks in its columns) right after it; the new id. */
export function duplicateBlock(doc: BlockDocument, id: string): { doc: BlockDocument; id: string } | null {
  const at = locate(doc, id);
  if (!at || at.block.type === 'footer') return null;
  const taken = new Set(allBlocks(doc).map(idOf));
  const copy = clone(at.block);
  copy.id = newId(taken);
  taken.add(copy.id);
  if (copy.type === 'columns')
    for (const col of copy.columns)
      for (const b of col) {
        b.id = newId(taken);
        taken.add(b.id);
      }
  return { doc: insertBlock(doc, at.list, at.index + 1, copy), id: copy.id };
}

/** Two or three columns: the blocks of a third column go to the second when it goes. */
export function setColumnCount(block: ColumnsBlock, n: 2 | 3, taken: Set<string>): ColumnsBlock {
  if (block.columns.length === n) return block;
  if (n === 2) {
    const [a = [], b = [], c = []] = block.columns;
    return { ...block, columns: [a, [...b, ...c]], widths: undefined };
  }
  const t: LeafBlock = { type: 'text', id: newId(taken), text: '' };
  return { ...block, columns: [...block.columns, [t]], widths: undefined };
}

/** Where a new block goes: after the selected one (in its list), else before the footer at the end. */
export function insertionPoint(
  doc: BlockDocument,
  selected: string | null,
  block: Block,
): { list: ListId; index: number } {
  const at = selected ? locate(doc, selected) : null;
  if (at && fits(block, at.list)) return { list: at.list, index: at.index + 1 };
  if (at && at.parent) {
    const parent = locate(doc, at.parent.id)!;
    return { list: ROOT, index: parent.index + 1 };
  }
  const last = doc.blocks[doc.blocks.length - 1];
  return { list: ROOT, index: last?.type === 'footer' ? doc.blocks.length - 1 : doc.blocks.length };
}

export function countBlocks(doc: BlockDocument): number {
  return allBlocks(doc).length;
}

/**
 * What a save (and a preview) sends: the document without what the grammar cannot hold yet, which the editor keeps
 * while it is being filled in: an image without a picture, a social link without its address, empty optional text.
 */
export function forSaving(doc: BlockDocument): BlockDocument {
  const leaf = (b: Block): Block | null => {
    switch (b.type) {
      case 'image': {
        if (!b.url.trim()) return null;
        const { href, ...rest } = b;
        return href?.trim() ? { ...rest, url: b.url.trim(), href: href.trim() } : { ...rest, url: b.url.trim() };
      }
      case 'social':
        return { ...b, links: b.links.filter((l) => l.url.trim()).map((l) => ({ ...l, url: l.url.trim() })) };
      case 'footer': {
        const { text, ...rest } = b;
        return text?.trim() ? b : rest;
      }
      case 'button':
        return { ...b, url: b.url.trim() };
      default:
        return b;
    }
  };
  const blocks: Block[] = [];
  for (const b of doc.blocks) {
    if (b.type === 'columns')
      blocks.push({
        ...b,
        columns: b.columns.map((col) => col.map(leaf).filter((x): x is LeafBlock => x !== null)),
      });
    else {
      const x = leaf(b);
      if (x) blocks.push(x);
    }
  }
  return { ...doc, blocks };
}

/**
 * The block (and the field inside it) a JSON pointer into a document names: `/blocks/3/columns/1/0/url` is the
 * first block of the second column of the fourth block, field `url`. Pointers are into `sent`, the document as
 * it was sent (forSaving's), whose blocks carry the ids of the editor's.
 */
export function blockAt(sent: BlockDocument, pointer: string): { id: string; field: string } | null {
  const parts = pointer.split('/').slice(1);
  if (parts[0] !== 'blocks' || parts.length < 2) return null;
  const top = sent.blocks[Number(parts[1])];
  if (!top) return null;
  if (top.type === 'columns' && parts[2] === 'columns' && parts.length >= 5) {
    const inner = top.columns[Number(parts[3])]?.[Number(parts[4])];
    if (inner) return { id: idOf(inner), field: parts.slice(5).join('/') };
  }
  return { id: idOf(top), field: parts.slice(2).join('/') };
}

/** "Text block 3 of 6", or "Image block 1 of 2 in column 2 of block 4", for screen readers and messages. */
export function describeBlock(doc: BlockDocument, id: string): string {
  const at = locate(doc, id);
  if (!at) return 'The block';
  const n = listOf(doc, at.list).length;
  const label = `${BLOCK_LABELS[at.block.type]} block ${at.index + 1} of ${n}`;
  if (!at.parent) return label;
  const parent = locate(doc, at.parent.id)!;
  return `${label} in column ${at.parent.column + 1} of block ${parent.index + 1}`;
}

/** describeBlock for every block at once (one pass: what the canvas labels its blocks with on each render). */
export function describeAll(doc: BlockDocument): Map<string, string> {
  const out = new Map<string, string>();
  const n = doc.blocks.length;
  doc.blocks.forEach((b, i) => {
    out.set(idOf(b), `${BLOCK_LABELS[b.type]} block ${i + 1} of ${n}`);
    if (b.type === 'columns')
      b.columns.forEach((col, c) =>
        col.forEach((x, j) =>
          out.set(
            idOf(x),
            `${BLOCK_LABELS[x.type]} block ${j + 1} of ${col.length} in column ${c + 1} of block ${i + 1}`,
          ),
        ),
      );
  });
  return out;
}

export function limitsReached(doc: BlockDocument, list: ListId): string | null {
  if (countBlocks(doc) >= LIMITS.blocks) return `An email holds at most ${LIMITS.blocks} blocks.`;
  if (list !== ROOT && listOf(doc, list).length >= LIMITS.columnBlocks)
    return `A column holds at most ${LIMITS.columnBlocks} blocks.`;
  return null;
}
