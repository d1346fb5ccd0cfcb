import { type Readable, pipeline } from 'node:stream';
import { parse, type Options } from 'csv-parse';
import type { ContactStatus } from '../../db/schema.js';
import { DomainError, validationFailed, type FieldError } from '../../errors/errors.js';
import { MAX_JSON_DEPTH, findBadString, jsonDepth } from '../../http/input.js';
import { toFieldErrors, validatorCompiler } from '../../http/validation.js';
import { contactEmail } from './contacts.email.js';
import { canonicalTimeZone } from '../../lib/zones.js';
import { CONTACT_STATUSES, ImportRow, MAX_PROPERTIES, PROPERTY_KEY_PATTERN } from './contacts.schemas.js';
import { normalizeTags, parseTagCell } from './contacts.tags.js';

/**
 * Reading a bulk import: the request stream (never buffered whole) becomes a sequence of items, each a
 * contact to create or update, or a rejected row with its line number and reason. The service batches
 * them into transactions (contacts.service.ts). Memory stays bounded: one CSV record or NDJSON line
 * at a time, plus the parser's small buffers; `for await` pulls, so a slow database slows the upload.
 */

/** What a row asks for: the POST /v1/contacts semantics (undefined: unchanged, or the default for a new contact). */
export interface ContactUpsert {
  email: string;
  firstName?: string | null;
  lastName?: string | null;
  status?: ContactStatus;
  properties?: Record<string, unknown>;
  /** Tags added to the contact's (an import never removes one), normalised. */
  tags?: string[];
  /** An IANA zone, as Intl spells it (checked by checkRow); undefined: unchanged. */
  timezone?: string;
}

export type ImportItem =
  /** The format's preamble (a CSV header) was accepted: the import starts. */
  | { type: 'ready' }
  | { type: 'row'; line: number; row: ContactUpsert }
  | { type: 'reject'; line: number; reason: string }
  /** The stream is malformed from here on (a broken CSV quote): the import stops. */
  | { type: 'fatal'; message: string };

/** The limits of one line / record; longer is a reject (NDJSON) or malformed (CSV: no record boundary to resync on). */
export const MAX_LINE_BYTES = 1024 * 1024;
const MAX_REASON_CHARS = 300;
const CSV_SLICE = 8 * 1024;

/** The request body exceeded the import byte limit (answered 413). */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the import body is larger than ${limit} bytes`);
  }
}

/**
 * Passes the body through while counting its bytes; past `limit` it throws BodyTooLarge. The request
 * stream itself is not destroyed when reading stops early, so that an answer can still be sent on it.
 */
export async function* limitBytes(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    if (seen + buf.length > limit) {
      // The bytes up to the limit still count: the complete rows among them are imported.
      if (limit > seen) yield buf.subarray(0, limit - seen);
      throw new BodyTooLarge(limit);
    }
    seen += buf.length;
    yield buf;
  }
}

// ---------------------------------------------------------------------------------------------------
// Row checks, shared by both formats

const validateRow = validatorCompiler({
  schema: ImportRow,
  httpPart: 'body',
  method: 'POST',
  url: '/v1/contacts/imports',
}) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toFieldErrors>[0] | null;
};

/**
 * Text that every database stores as it is: a lone surrogate (half of a character) or NUL becomes its escape
 * (`\ud800`), visible in the job. PostgreSQL refuses both (in text and in jsonb, where JSON.stringify's `\ud800`
 * is an error too), which failed the whole job's write.
 */
export function storableText(text: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is what is being looked for
  return text.replace(/[\p{Cs}\u0000]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A reason of at most MAX_REASON_CHARS characters, cut between code points (never inside an emoji), storable. */
export function clip(text: string): string {
  const safe = storableText(text);
  if (safe.length <= MAX_REASON_CHARS) return safe;
  const chars: string[] = [];
  for (const ch of safe) {
    chars.push(ch);
    if (chars.length > MAX_REASON_CHARS) return `${chars.slice(0, MAX_REASON_CHARS - 1).join('')}…`;
  }
  return safe;
}

function describe(errors: FieldError[]): string {
  return clip(
    errors
      .map((e) => {
        const where = e.path.replace(/^\//, '').replace(/\//g, '.');
        return where ? `${where} ${e.message}` : e.message;
      })
      .join('; '),
  );
}

/** A row object (an NDJSON line, or a CSV row turned into one) checked like a POST body. */
export function checkRow(value: unknown, line: number): ImportItem {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { type: 'reject', line, reason: 'must be a JSON object' };
  // NUL and lone surrogates, in values and keys, as the input layer refuses them in every body (http/input.ts).
  const bad = findBadString(value);
  if (bad) return { type: 'reject', line, reason: describe([bad]) };
  if (!validateRow(value))
    return { type: 'reject', line, reason: describe(toFieldErrors(validateRow.errors ?? [], 'body')) };
  const { timezone: zoneGiven, ...input } = value as ContactUpsert & { timezone?: string | null };
  const email = contactEmail(input.email);
  if (email === null)
    return { type: 'reject', line, reason: clip(`email is not a valid email address: ${JSON.stringify(input.email)}`) };
  let row: ContactUpsert & { timezone?: string } = { ...input, email };
  if (input.tags !== undefined) {
    const { tags, errors } = normalizeTags(input.tags);
    if (errors.length) return { type: 'reject', line, reason: describe(errors) };
    row = { ...row, tags };
  }
  // A time zone (docs/contacts.md, "Time zone"): an IANA name or the row is rejected; null or empty: left as it is.
  if (zoneGiven === undefined || zoneGiven === null || zoneGiven === '') return { type: 'row', line, row };
  const timezone = canonicalTimeZone(zoneGiven);
  if (!timezone)
    return {
      type: 'reject',
      line,
      reason: clip(`timezone is not an IANA time zone name: ${JSON.stringify(zoneGiven)}`),
    };
  return { type: 'row', line, row: { ...row, timezone } };
}

// ---------------------------------------------------------------------------------------------------
// NDJSON

/**
 * Lines of the stream, 1-based; a line longer than MAX_LINE_BYTES comes back as text null (and is not kept).
 * Lines are found in the bytes and each decoded on its own (a newline byte never occurs inside a multi-byte
 * UTF-8 character): no decoded chunk stays alive while its lines are imported, which would make the young
 * generation GC promote it.
 */
async function* lines(source: AsyncIterable<Buffer>): AsyncGenerator<{ line: number; text: string | null }> {
  let parts: Buffer[] = [];
  let partsLength = 0;
  let tooLong = false;
  let line = 0;
  const take = (tail: Buffer): { line: number; text: string | null } => {
    line++;
    let text: string | null = null;
    if (!tooLong && partsLength + tail.length <= MAX_LINE_BYTES) {
      text = (parts.length ? Buffer.concat([...parts, tail]) : tail).toString('utf8');
    }
    parts = [];
    partsLength = 0;
    tooLong = false;
    return { line, text };
  };
  for await (const chunk of source) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      yield take(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length && !tooLong) {
      const rest = chunk.subarray(start);
      if (partsLength + rest.length > MAX_LINE_BYTES) {
        parts = [];
        partsLength = 0;
        tooLong = true;
      } else {
        parts.push(rest);
        partsLength += rest.length;
      }
    }
  }
  if (partsLength > 0 || tooLong) yield take(Buffer.alloc(0));
}

/**
 * Bytes that are not UTF-8 decode to U+FFFD: such a row is refused rather than stored with its characters lost
 * (a file saved as Latin-1 or Windows-1252 shows it on every accented letter). U+FFFD written on purpose is refused too.
 */
const REPLACEMENT = '\uFFFD';
const NOT_UTF8 = 'is not valid UTF-8 (save the file as UTF-8): a character could not be decoded';

export async function* ndjsonItems(source: AsyncIterable<Buffer>): AsyncGenerator<ImportItem> {
  yield { type: 'ready' };
  for await (const { line, text: raw } of lines(source)) {
    if (raw === null) {
      yield { type: 'reject', line, reason: `line is longer than ${MAX_LINE_BYTES} bytes` };
      continue;
    }
    const text = line === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    if (text.trim() === '') continue;
    if (text.includes(REPLACEMENT)) {
      yield { type: 'reject', line, reason: NOT_UTF8 };
      continue;
    }
    if (jsonDepth(text) > MAX_JSON_DEPTH) {
      yield { type: 'reject', line, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { type: 'reject', line, reason: clip(`invalid JSON: ${(err as Error).message}`) };
      continue;
    }
    yield checkRow(value, line);
  }
}

// ---------------------------------------------------------------------------------------------------
// CSV

/** Where each field of a CSV row goes, from the header row. */
export interface CsvColumns {
  count: number;
  email: number;
  firstName?: number;
  lastName?: number;
  /** A full name (Listmonk's `name`), split into first and last when the file has no such columns. */
  name?: number;
  status?: number;
  /** The contact's IANA time zone (docs/contacts.md, "Time zone"). */
  timezone?: number;
  /** A JSON object of properties (Listmonk's `attributes`), merged under the property columns. */
  attributes?: number;
  /** Tags: comma-separated, or Mailchimp's quoted list ("VIP","Customer"). */
  tags?: number;
  /** The status every row has when it gives none (a Mailchimp export of unsubscribed or cleaned contacts). */
  impliedStatus?: ContactStatus;
  properties: [index: number, key: string][];
}

type KnownColumn = 'email' | 'firstName' | 'lastName' | 'name' | 'status' | 'attributes' | 'tags' | 'timezone';

/**
 * Header names of the common exports, compared without case, spaces, `-` or `_`: ours, Mailchimp's
 * ("Email Address", "First Name", "Last Name", FNAME/LNAME), Kit's (email_address, first_name, state) and
 * Listmonk's (email, name, attributes, status). Mailchimp's TAGS, Kit's tags: the contact's tags.
 */
const KNOWN_COLUMNS: Record<string, KnownColumn> = Object.assign(Object.create(null) as Record<string, KnownColumn>, {
  email: 'email',
  emailaddress: 'email',
  mail: 'email',
  subscriberemail: 'email',
  firstname: 'firstName',
  fname: 'firstName',
  givenname: 'firstName',
  lastname: 'lastName',
  lname: 'lastName',
  surname: 'lastName',
  familyname: 'lastName',
  name: 'name',
  fullname: 'name',
  status: 'status',
  state: 'status',
  attributes: 'attributes',
  attribs: 'attributes',
  tags: 'tags',
  tag: 'tags',
  labels: 'tags',
  // The contact's zone: ours, Mailchimp's TIMEZONE column, "Time zone", tz.
  timezone: 'timezone',
  tz: 'timezone',
});

/** A header compared with the known names: lower case, without spaces, `-`, `_` or `.`. */
function headerKey(name: string): string {
  return name.toLowerCase().replace(/[\s\-_.]+/g, '');
}

/** Status words of other products' exports, as ours. */
const STATUS_ALIASES: Record<string, ContactStatus> = Object.assign(
  Object.create(null) as Record<string, ContactStatus>,
  {
    subscribed: 'SUBSCRIBED',
    active: 'SUBSCRIBED',
    enabled: 'SUBSCRIBED',
    confirmed: 'SUBSCRIBED',
    pending: 'PENDING',
    unconfirmed: 'PENDING',
    inactive: 'PENDING',
    unsubscribed: 'UNSUBSCRIBED',
    cancelled: 'UNSUBSCRIBED',
    canceled: 'UNSUBSCRIBED',
    blocklisted: 'UNSUBSCRIBED',
    blacklisted: 'UNSUBSCRIBED',
    bounced: 'BOUNCED',
    cleaned: 'BOUNCED',
    complained: 'COMPLAINED',
    disabled: 'UNSUBSCRIBED',
  },
);

/**
 * Mailchimp exports each audience status as a file of its own, without a status column: the unsubscribed file
 * has UNSUB_TIME, the cleaned (bounced) one CLEAN_TIME. Such a file's rows take that status unless they say otherwise.
 */
const STATUS_BY_COLUMN: Record<string, ContactStatus> = Object.assign(
  Object.create(null) as Record<string, ContactStatus>,
  {
    unsubtime: 'UNSUBSCRIBED',
    cleantime: 'BOUNCED',
  },
);

/**
 * A header that is not a property key as written ("Phone Number", "Sign-up source") becomes one in
 * camelCase ("phoneNumber", "signUpSource") when its words allow it; otherwise undefined.
 */
export function propertyKeyFor(name: string): string | undefined {
  if (PROPERTY_KEY.test(name)) return name;
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  if (!words.length) return undefined;
  const key = words
    .map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
  return PROPERTY_KEY.test(key) ? key : undefined;
}

/**
 * A column map given with the import (`?columns=` as a JSON object): header name → `email`, `firstName`,
 * `lastName`, `name`, `status`, `attributes`, a property key (`properties.<key>` or the bare key), or
 * null / "" to skip the column. A header it names wins over the built-in names.
 */
export type ColumnMap = Record<string, string | null>;

const PROPERTY_KEY = new RegExp(PROPERTY_KEY_PATTERN);
const TARGETS = new Set<string>(['email', 'firstName', 'lastName', 'name', 'status', 'attributes', 'tags', 'timezone']);

/** A column map as given in the query string (JSON text), checked: 422 when it is not one. */
export function parseColumnMap(text: string): ColumnMap {
  let map: unknown;
  try {
    map = JSON.parse(text);
  } catch {
    throw validationFailed([
      {
        path: '/columns',
        message: 'is not JSON: give an object such as {"Email Address":"email","Phone":"phone","LEID":null}',
      },
    ]);
  }
  return checkColumnMap(map);
}

/** Checks a column map before any byte is read: 422 naming each bad entry. */
export function checkColumnMap(map: unknown): ColumnMap {
  const errors: FieldError[] = [];
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw validationFailed([
      {
        path: '/columns',
        message:
          'must be a JSON object of header name to email, firstName, lastName, name, status, attributes, tags, timezone, a property key, or null to skip',
      },
    ]);
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length > 1000) errors.push({ path: '/columns', message: 'has more than 1000 entries' });
  for (const [header, target] of entries) {
    if (target === null || target === '') continue;
    if (typeof target !== 'string') {
      errors.push({ path: `/columns/${header}`, message: 'must be a string or null' });
      continue;
    }
    const key = target.startsWith('properties.') ? target.slice('properties.'.length) : target;
    if (!TARGETS.has(target) && !PROPERTY_KEY.test(key))
      errors.push({
        path: `/columns/${header}`,
        message: `"${target}" is not email, firstName, lastName, name, status, attributes, tags, timezone, nor a property key (${PROPERTY_KEY_PATTERN})`,
      });
  }
  if (errors.length) throw validationFailed(errors);
  return map as ColumnMap;
}

/**
 * Reads the header: an email column (required), first and last name, status, every other column a property
 * key. Names are matched without case or separators, including the common exports' names (KNOWN_COLUMNS);
 * `columns` overrides. Anything wrong is a 422 listing each problem, before any row is read.
 */
export function csvColumns(header: string[], columns: ColumnMap = {}): CsvColumns {
  const errors: FieldError[] = [];
  const cols: CsvColumns = { count: header.length, email: -1, properties: [] };
  const seen = new Map<string, number>();
  header.forEach((raw, i) => {
    const name = raw.trim();
    let known: KnownColumn | undefined;
    let property: string | undefined;
    if (Object.hasOwn(columns, name)) {
      const target = columns[name];
      if (target === null || target === '' || target === undefined) return; // skipped
      if (TARGETS.has(target)) known = target as KnownColumn;
      else property = target.startsWith('properties.') ? target.slice('properties.'.length) : target;
    } else {
      known = KNOWN_COLUMNS[headerKey(name)];
      if (!known) property = propertyKeyFor(name);
    }
    const target = known ?? `properties.${property ?? name}`;
    if (seen.has(target)) {
      errors.push({
        path: `/header/${i}`,
        message: `column "${name}" repeats column ${seen.get(target)! + 1} (${target})`,
      });
      return;
    }
    seen.set(target, i);
    if (known) cols[known] = i;
    else if (property) cols.properties.push([i, property]);
    else
      errors.push({
        path: `/header/${i}`,
        message: `column "${name}" is not email, firstName, lastName or status, nor a valid property key (${PROPERTY_KEY_PATTERN}); map it or skip it with ?columns=`,
      });
  });
  if (cols.status === undefined) {
    const implied = header.map((h) => STATUS_BY_COLUMN[headerKey(h.trim())]).find(Boolean);
    if (implied) cols.impliedStatus = implied;
  }
  if (cols.email === -1)
    errors.unshift({
      path: '/header',
      message: 'must have an email column (email, "Email Address", email_address), or name it with ?columns=',
    });
  if (cols.properties.length > MAX_PROPERTIES)
    errors.push({
      path: '/header',
      message: `has ${cols.properties.length} property columns; a contact has at most ${MAX_PROPERTIES} properties`,
    });
  if (errors.length) throw validationFailed(errors);
  return cols;
}

const STATUSES = new Set<string>(CONTACT_STATUSES);

/**
 * A CSV row as the equivalent POST body: an empty cell is an omitted field (unchanged on an existing
 * contact). When the file has property columns, `properties` is the row's non-empty property cells (as
 * strings), and replaces the contact's properties whole, as in POST; without property columns they are left alone.
 */
export function csvRow(cols: CsvColumns, record: string[], line: number): ImportItem {
  if (record.length !== cols.count)
    return {
      type: 'reject',
      line,
      reason: `has ${record.length} ${record.length === 1 ? 'column' : 'columns'}, the header has ${cols.count}`,
    };
  if (record.some((cell) => cell.includes(REPLACEMENT))) return { type: 'reject', line, reason: NOT_UTF8 };
  const row: Record<string, unknown> = { email: record[cols.email] };
  for (const field of ['firstName', 'lastName', 'timezone'] as const) {
    const i = cols[field];
    if (i !== undefined && record[i] !== '') row[field] = record[i];
  }
  if (cols.name !== undefined && record[cols.name] !== '') {
    // A full name fills first and last name where the file has no columns of their own.
    const [first, ...rest] = record[cols.name]!.split(/\s+/);
    if (cols.firstName === undefined && first) row.firstName = first;
    if (cols.lastName === undefined && rest.length) row.lastName = rest.join(' ');
  }
  if (cols.status !== undefined && record[cols.status] !== '') {
    const status = record[cols.status]!;
    row.status = STATUSES.has(status.toUpperCase())
      ? status.toUpperCase()
      : (STATUS_ALIASES[status.toLowerCase()] ?? status);
  } else if (cols.impliedStatus) {
    row.status = cols.impliedStatus;
  }
  if (cols.properties.length || cols.attributes !== undefined) {
    const properties: Record<string, unknown> = {};
    if (cols.attributes !== undefined && record[cols.attributes] !== '') {
      let attributes: unknown;
      try {
        attributes = JSON.parse(record[cols.attributes]!);
      } catch {
        return { type: 'reject', line, reason: 'attributes is not a JSON object' };
      }
      if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
        return { type: 'reject', line, reason: 'attributes is not a JSON object' };
      // Own keys only, each checked as a property key like a column's (no `__proto__`, `constructor`…).
      for (const [key, value] of Object.entries(attributes)) {
        if (!PROPERTY_KEY.test(key) || key === '__proto__')
          return {
            type: 'reject',
            line,
            reason: clip(
              `attributes has a key that is not a property key (${PROPERTY_KEY_PATTERN}): ${JSON.stringify(key)}`,
            ),
          };
        properties[key] = value;
      }
    }
    for (const [i, key] of cols.properties) if (record[i] !== '') properties[key] = record[i]!;
    row.properties = properties;
  }
  if (cols.tags !== undefined && record[cols.tags] !== '') row.tags = parseTagCell(record[cols.tags]!);
  if (row.email === '') return { type: 'reject', line, reason: 'email is empty' };
  return checkRow(row, line);
}

/** Line breaks inside a record's fields (a quoted field may span lines). */
function newlinesIn(record: string[]): number {
  let n = 0;
  for (const field of record) {
    for (let i = field.indexOf('\n'); i !== -1; i = field.indexOf('\n', i + 1)) n++;
  }
  return n;
}

/** A blank line, or a row of empty cells (`,,,`): ignored, not counted. */
function isBlank(record: string[]): boolean {
  for (const field of record) if (field !== '') return false;
  return true;
}

/**
 * The field delimiter of a CSV file, from its first line: `,`, `;` (what spreadsheets write where the
 * decimal separator is a comma) or a tab, whichever occurs most outside quotes; `,` when none does.
 */
export function detectDelimiter(sample: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of sample) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch]++;
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';';
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t';
  return ',';
}

/** Bytes enough to hold a CSV header line for delimiter detection. */
const SNIFF_BYTES = 64 * 1024;

/**
 * Reads the first bytes of `source` (up to the first line break or SNIFF_BYTES) and returns them with a
 * stream that yields them again, then the rest.
 */
async function sniff(source: AsyncIterable<Buffer>): Promise<{ head: Buffer; all: AsyncGenerator<Buffer> }> {
  const it = source[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let length = 0;
  let done = false;
  while (length < SNIFF_BYTES) {
    const next = await it.next();
    if (next.done) {
      done = true;
      break;
    }
    seen.push(next.value);
    length += next.value.length;
    if (next.value.includes(10) || next.value.includes(13)) break;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* seen;
    if (done) return;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  }
  return { head: Buffer.concat(seen).subarray(0, SNIFF_BYTES), all: all() };
}

export async function* csvItems(input: AsyncIterable<Buffer>, columns: ColumnMap = {}): AsyncGenerator<ImportItem> {
  const { head, all: source } = await sniff(input);
  const options: Options & { writableHighWaterMark: number } = {
    delimiter: detectDelimiter(head.toString('utf8')),
    bom: true,
    trim: true,
    relax_column_count: true, // a row with the wrong number of fields is a rejected row, not the end of the import
    max_record_size: MAX_LINE_BYTES,
    // Parse errors (broken quotes, an over-long record) stop the import. With this option csv-parse reports
    // them through 'skip', in stream order, so the records before the error are delivered first (a stream
    // that errors drops the records it still buffers).
    skip_records_with_error: true,
    // Every write waits until the parser has taken the chunk in: when the next chunk is asked for, all
    // earlier ones are parsed, so a source error can be queued behind their records (below).
    writableHighWaterMark: 1,
    // Blank lines come through as records (and are dropped below) so that line numbers can be counted
    // here: csv-parse's own `info.lines` counts a CRLF inside a quoted field as two lines, and its per-record
    // info objects made up most of the garbage an import leaves for the old generation.
    skip_empty_lines: false,
  };
  const parser = parse(options);
  parser.on('skip', (err: Error) => {
    parser.push({ fatal: err.message });
  });
  // Errors of the source (body too large, aborted upload) come in order too, after the records read before.
  // Chunks go in by slices of 8 KiB: the records of one slice are pushed at once, and those waiting to be
  // read should stay few (they would outlive young-generation GCs otherwise).
  async function* inOrder(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of source) {
        for (let i = 0; i < chunk.length; i += CSV_SLICE) yield chunk.subarray(i, i + CSV_SLICE);
      }
    } catch (err) {
      parser.push({ sourceError: err });
    }
  }
  pipeline(inOrder(), parser, () => {});
  type Item = string[] | { fatal: string } | { sourceError: unknown };
  let line = 1; // where the next record starts
  let cols: CsvColumns | undefined;
  for await (const item of parser as AsyncIterable<Item>) {
    if (!Array.isArray(item)) {
      if ('sourceError' in item) throw item.sourceError;
      if (!cols)
        throw new DomainError('validation_failed', `the CSV header row is malformed: ${item.fatal}`, {
          errors: [{ path: '/header', message: `is malformed: ${item.fatal}` }],
        });
      yield { type: 'fatal', message: `malformed CSV: ${item.fatal}` };
      return;
    }
    const start = line;
    line += 1 + newlinesIn(item);
    if (isBlank(item)) continue;
    if (!cols) {
      cols = csvColumns(item, columns);
      yield { type: 'ready' };
      continue;
    }
    yield csvRow(cols, item, start);
  }
  if (!cols)
    throw validationFailed([
      { path: '/header', message: 'is missing: the CSV is empty; its first line must name the columns (email, …)' },
    ]);
}
