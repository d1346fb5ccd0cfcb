import type { FieldError } from '../../errors/errors.js';
import { liquid } from '../../lib/liquid.js';
import {
  DOCUMENT_TYPE,
  DOCUMENT_VERSION,
  FONT_FAMILIES,
  LIMITS,
  SOCIAL_NETWORKS,
  type BlockDocument,
} from './grammar.js';
import { LiquidGuard } from './liquid-guard.js';
import { MAX_DEPTH, quoted, sanitizeHtml, textProblems, urlProblem, type UrlUse } from './markup.js';

/**
 * Checks a block document (grammar.ts) against the grammar and its LIMITS, by hand: one error per violation at its
 * JSON Pointer under `base` (e.g. `/emailContent/editorContent/blocks/3/url`), each message a sentence an author
 * understands. An empty list: `value` is a valid BlockDocument, which renderDocument may render.
 *
 * It never recurses on depth it has not checked: a document walks two levels (blocks, and the blocks of a column),
 * and a columns block inside a column is refused at its pointer without looking inside it, so a document nested
 * 100 (or 100,000) levels deep is one error, not a stack overflow. A document with more than LIMITS.blocks blocks is
 * one error, found by counting before any block is looked at. The markup of text and html blocks is parsed and
 * walked with explicit stacks (markup.ts).
 */
export function validateDocument(value: unknown, base = ''): FieldError[] {
  const errors: FieldError[] = [];
  const add = (path: string, message: string) => errors.push({ path: `${base}${path}`, message });

  if (!isObject(value)) {
    add('', 'The email document must be an object: { "type": "formcast/blocks", "version": 1, "blocks": [ … ] }.');
    return errors;
  }
  if (value.type !== DOCUMENT_TYPE) add('/type', `The document's type must be "${DOCUMENT_TYPE}".`);
  if (value.version !== DOCUMENT_VERSION) add('/version', `The document's version must be ${DOCUMENT_VERSION}.`);
  for (const key of Object.keys(value)) {
    if (!['type', 'version', 'settings', 'blocks'].includes(key))
      add(`/${escapePointer(key)}`, `"${key}" is not part of an email document (type, version, settings, blocks).`);
  }
  if (value.settings !== undefined) checkSettings(value.settings, add);
  if (!Array.isArray(value.blocks)) {
    add('/blocks', 'The document needs its list of blocks ("blocks": [ … ]).');
    return errors;
  }

  // Counted before any block is checked: a document of 10,000 blocks is one error, at once.
  let total = value.blocks.length;
  for (const b of value.blocks) {
    if (isObject(b) && b.type === 'columns' && Array.isArray(b.columns))
      for (const column of b.columns.slice(0, 3)) if (Array.isArray(column)) total += column.length;
  }
  if (total > LIMITS.blocks) {
    add('/blocks', `The email has ${total} blocks; it may have at most ${LIMITS.blocks} (those in columns included).`);
    return errors;
  }

  let json = '';
  try {
    json = JSON.stringify(value);
  } catch {
    // Too deep for JSON.stringify: the walk below refuses the nesting at its pointer.
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > LIMITS.documentBytes) {
    add('', `The email document is ${mib(bytes)} as JSON; it may be at most ${mib(LIMITS.documentBytes)}.`);
    return errors;
  }

  const guard = new LiquidGuard(json);
  value.blocks.forEach((b: unknown, i: number) => checkBlock(b, `/blocks/${i}`, false, add, guard));
  return errors;
}

type Add = (path: string, message: string) => void;
type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
/** Length in characters (Unicode code points, as everywhere in the API). */
const chars = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const COLOR = /^#[0-9a-fA-F]{6}$/;
const ALIGNS = ['left', 'center', 'right'];

/** What each kind of block is called in a sentence, and the fields it has. */
const KINDS: Record<string, { label: string; fields: string[] }> = {
  heading: { label: 'heading', fields: ['text', 'level', 'align'] },
  text: { label: 'text block', fields: ['text', 'align'] },
  image: { label: 'image', fields: ['url', 'alt', 'width', 'href', 'align'] },
  button: { label: 'button', fields: ['text', 'url', 'color', 'textColor', 'align'] },
  divider: { label: 'divider', fields: ['color'] },
  spacer: { label: 'spacer', fields: ['height'] },
  columns: { label: 'columns block', fields: ['columns', 'widths'] },
  social: { label: 'social links block', fields: ['links', 'align'] },
  html: { label: 'HTML block', fields: ['html'] },
  footer: { label: 'footer', fields: ['text', 'webVersion', 'align'] },
};
const KIND_NAMES = Object.keys(KINDS).join(', ');

function checkSettings(settings: unknown, add: Add): void {
  if (!isObject(settings)) return add('/settings', 'The document settings must be an object.');
  for (const [key, v] of Object.entries(settings)) {
    const at = `/settings/${escapePointer(key)}`;
    switch (key) {
      case 'width':
        if (!Number.isInteger(v) || (v as number) < 320 || (v as number) > 600)
          add(at, 'The email width must be a whole number of pixels from 320 to 600.');
        break;
      case 'backgroundColor':
      case 'contentBackgroundColor':
      case 'textColor':
      case 'brandColor':
      case 'linkColor':
        checkColor(v, at, add);
        break;
      case 'fontFamily':
        if (typeof v !== 'string' || !Object.hasOwn(FONT_FAMILIES, v))
          add(at, `The font must be one of ${Object.keys(FONT_FAMILIES).join(', ')}.`);
        break;
      default:
        add(
          at,
          `"${key}" is not a document setting (width, backgroundColor, contentBackgroundColor, textColor, brandColor, linkColor, fontFamily).`,
        );
    }
  }
}

function checkColor(v: unknown, at: string, add: Add): void {
  if (typeof v !== 'string' || !COLOR.test(v))
    add(at, `The colour ${typeof v === 'string' ? `"${v.slice(0, 40)}" ` : ''}must be written #rrggbb, e.g. #1f6feb.`);
}

function checkBlock(b: unknown, at: string, inColumn: boolean, add: Add, guard: LiquidGuard): void {
  if (!isObject(b)) return add(at, 'A block must be an object with a "type".');
  const type = b.type;
  if (typeof type !== 'string' || !Object.hasOwn(KINDS, type)) {
    return add(
      `${at}/type`,
      typeof type === 'string'
        ? `"${type.slice(0, 40)}" is not a kind of block (${KIND_NAMES}).`
        : `A block needs its kind ("type": one of ${KIND_NAMES}).`,
    );
  }
  // One level of nesting, as every email builder has it: refused here, without looking inside (see above).
  if (type === 'columns' && inColumn)
    return add(at, 'A columns block cannot go inside a column: a column holds the other kinds of blocks.');
  const kind = KINDS[type]!;
  const the = `The ${kind.label}`;
  for (const key of Object.keys(b)) {
    if (key !== 'type' && key !== 'id' && !kind.fields.includes(key))
      add(`${at}/${escapePointer(key)}`, `"${key}" is not a field of a ${kind.label} (${kind.fields.join(', ')}).`);
  }
  if (b.id !== undefined && (typeof b.id !== 'string' || b.id.length < 1 || b.id.length > 64))
    add(`${at}/id`, "A block's id must be text of 1 to 64 characters.");
  if ('align' in b && b.align !== undefined && !ALIGNS.includes(b.align as string))
    add(`${at}/align`, `${the}'s alignment must be left, center or right.`);

  const text = (field: string, max: number, required: boolean, what: string): string | undefined => {
    const v = b[field];
    if (v === undefined) {
      if (required) add(`${at}/${field}`, `${the} needs its ${what} ("${field}").`);
      return undefined;
    }
    if (typeof v !== 'string') {
      add(`${at}/${field}`, `${the}'s ${what} must be text.`);
      return undefined;
    }
    if (chars(v) > max) {
      add(
        `${at}/${field}`,
        `${the}'s ${what} has ${chars(v).toLocaleString('en')} characters; at most ${max.toLocaleString('en')} fit.`,
      );
      return undefined;
    }
    const problem = liquidProblem(v);
    if (problem) {
      add(`${at}/${field}`, `The Liquid in ${the.toLowerCase()}'s ${what} does not parse: ${problem}`);
      return undefined;
    }
    return v;
  };
  const url = (field: string, use: UrlUse, required: boolean, what: string, allowEmpty = false): void => {
    const v = text(field, 2048, required, what);
    if (v === undefined || (allowEmpty && v === '')) return;
    if (v === '') return add(`${at}/${field}`, `${the}'s ${what} is empty.`);
    const problem = urlProblem(v, use);
    if (problem) add(`${at}/${field}`, `${the}'s ${what} ${quoted(v)} ${problem}.`);
  };
  const integer = (field: string, min: number, max: number, required: boolean, sentence: string): void => {
    const v = b[field];
    if (v === undefined) {
      if (required) add(`${at}/${field}`, `${the} needs its ${field}.`);
    } else if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) add(`${at}/${field}`, sentence);
  };
  const color = (field: string) => b[field] !== undefined && checkColor(b[field], `${at}/${field}`, add);

  switch (type) {
    case 'heading':
      text('text', LIMITS.text, true, 'text');
      if (b.level !== undefined && ![1, 2, 3].includes(b.level as number))
        add(`${at}/level`, "A heading's level must be 1, 2 or 3.");
      break;
    case 'text': {
      const v = text('text', LIMITS.text, true, 'text');
      if (v !== undefined) for (const m of textProblems(v, guard)) add(`${at}/text`, m);
      break;
    }
    case 'image':
      url('url', 'image', true, 'address');
      text('alt', 500, true, 'alternative text');
      integer('width', 16, 600, false, "An image's width must be a whole number of pixels from 16 to 600.");
      url('href', 'link', false, 'link');
      break;
    case 'button':
      text('text', 200, true, 'text');
      url('url', 'link', true, 'link', true);
      color('color');
      color('textColor');
      break;
    case 'divider':
      color('color');
      break;
    case 'spacer':
      integer('height', 4, 200, true, "A spacer's height must be a whole number of pixels from 4 to 200.");
      break;
    case 'social':
      checkSocial(b.links, `${at}/links`, add);
      break;
    case 'html': {
      const v = b.html;
      if (typeof v !== 'string')
        add(
          `${at}/html`,
          typeof v === 'undefined' ? 'The HTML block needs its HTML ("html").' : "The HTML block's HTML must be text.",
        );
      else if (Buffer.byteLength(v) > LIMITS.html)
        add(
          `${at}/html`,
          `The HTML block holds ${Math.ceil(Buffer.byteLength(v) / 1024)} KiB; at most ${LIMITS.html / 1024} KiB fit.`,
        );
      else {
        const problem = liquidProblem(v);
        if (problem) add(`${at}/html`, `The Liquid in the HTML block does not parse: ${problem}`);
        // What is unsafe is removed, not refused (sanitizeHtml, contract §16); only the nesting limit is an error.
        else if (sanitizeHtml(v, guard).tooDeep)
          add(`${at}/html`, `The HTML nests elements more than ${MAX_DEPTH.html} levels deep.`);
      }
      break;
    }
    case 'footer':
      text('text', 2000, false, 'text');
      if (b.webVersion !== undefined && typeof b.webVersion !== 'boolean')
        add(`${at}/webVersion`, `${the}'s "View in browser" switch (webVersion) must be true or false.`);
      break;
    case 'columns':
      checkColumns(b, at, add, guard);
      break;
  }
}

function checkSocial(links: unknown, at: string, add: Add): void {
  if (!Array.isArray(links)) return add(at, 'The social links block needs its list of links ("links": [ … ]).');
  if (links.length > LIMITS.socialLinks)
    return add(at, `The social links block has ${links.length} links; at most ${LIMITS.socialLinks} fit.`);
  links.forEach((link: unknown, i: number) => {
    const here = `${at}/${i}`;
    if (!isObject(link)) return add(here, 'A social link must be an object: { "network": …, "url": … }.');
    for (const key of Object.keys(link))
      if (key !== 'network' && key !== 'url')
        add(`${here}/${escapePointer(key)}`, `"${key}" is not a field of a social link (network, url).`);
    if (typeof link.network !== 'string' || !(SOCIAL_NETWORKS as readonly string[]).includes(link.network))
      add(`${here}/network`, `The network must be one of ${SOCIAL_NETWORKS.join(', ')}.`);
    if (typeof link.url !== 'string' || link.url === '')
      add(`${here}/url`, 'The social link needs the address of the profile ("url").');
    else {
      const problem = liquidProblem(link.url);
      if (problem) add(`${here}/url`, `The Liquid in the profile address does not parse: ${problem}`);
      else {
        const bad = urlProblem(link.url, 'social');
        if (bad) add(`${here}/url`, `The profile address ${quoted(link.url)} ${bad}.`);
      }
    }
  });
}

function checkColumns(b: Obj, at: string, add: Add, guard: LiquidGuard): void {
  const columns = b.columns;
  if (!Array.isArray(columns) || columns.length < 2 || columns.length > 3)
    return add(`${at}/columns`, 'A columns block has 2 or 3 columns, each a list of blocks.');
  columns.forEach((column: unknown, c: number) => {
    const here = `${at}/columns/${c}`;
    if (!Array.isArray(column)) return add(here, 'A column must be a list of blocks.');
    if (column.length > LIMITS.columnBlocks)
      return add(here, `The column has ${column.length} blocks; a column holds at most ${LIMITS.columnBlocks}.`);
    column.forEach((inner: unknown, i: number) => checkBlock(inner, `${here}/${i}`, true, add, guard));
  });
  const widths = b.widths;
  if (widths === undefined) return;
  if (
    !Array.isArray(widths) ||
    widths.length !== columns.length ||
    !widths.every((w) => Number.isInteger(w) && w >= 10 && w <= 90)
  )
    return add(
      `${at}/widths`,
      `The column widths must be ${columns.length} whole percentages from 10 to 90, one per column.`,
    );
  const sum = (widths as number[]).reduce((s, w) => s + w, 0);
  if (sum !== 100) add(`${at}/widths`, `The column widths add up to ${sum}%; they must add up to 100%.`);
}

/**
 * Why a field's Liquid does not parse (its first line), or null. Any field with `{{` or `{%` in it is parsed, not only
 * one with a whole `{{ … }}`: an unclosed `Hi {{ contact.firstName` is refused at its field (contract §16), where the
 * send's Liquid pass would otherwise fail on the rendered email.
 */
function liquidProblem(source: string): string | null {
  if (!source.includes('{{') && !source.includes('{%')) return null;
  try {
    liquid.parse(source);
    return null;
  } catch (err) {
    const line = (err as Error).message.split('\n')[0]!.replace(/, line:\d+, col:\d+$/, '');
    return `${line}.`;
  }
}

/** The document as the renderer takes it, when it is one (validateDocument found nothing). */
export function asBlockDocument(value: unknown): BlockDocument | null {
  return validateDocument(value).length === 0 ? (value as BlockDocument) : null;
}
