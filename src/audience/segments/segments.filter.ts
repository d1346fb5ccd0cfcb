import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/connection.js';
import type { FieldError } from '../../errors/errors.js';
import { PROPERTY_KEY_PATTERN } from '../contacts/contacts.schemas.js';
import { CONTACT_STATUSES } from '../contacts/contacts.state.js';
import { subscribedToSql, type DefaultSubscription } from '../contacts/contacts.subscriptions.js';
import { hasTagSql, tagProblem } from '../contacts/contacts.tags.js';
import { normalizeDateTime } from '../../lib/time.js';
import { broadcastEngagementSql } from '../../outbox/index.js';
import { ENGAGEMENT_COLUMN } from '../contacts/contacts.engagement.js';
import type { IdRange } from '../contacts/contacts.slices.js';

/**
 * The segment filter language (docs/api.md §7; users' documentation in segments/CONTEXT.md):
 * validation into JSON Pointer errors, and compilation into one SQL boolean expression over `contacts`
 * for SQLite and PostgreSQL. Contacts are never evaluated in JavaScript; every value and property key
 * reaches the database as a bound parameter.
 */

export const TEXT_FIELDS = ['email', 'firstName', 'lastName', 'status'] as const;
export const OPS = [
  'eq',
  'neq',
  'contains',
  'startsWith',
  'endsWith',
  'exists',
  'notExists',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
] as const;

/** A filter may nest this many levels: the top-level filter is level 1, each group's members one deeper. */
export const MAX_DEPTH = 8;
/** Conditions and groups together, in the whole filter. */
export const MAX_NODES = 200;
/** Values of one `in` list. */
export const MAX_IN_VALUES = 1000;
/** Characters (code points) of one string value. */
export const MAX_STRING_LENGTH = 1000;
/** Values of all `in` lists together. */
export const MAX_TOTAL_VALUES = 5000;
/** The filter as JSON text, in bytes (UTF-8). */
export const MAX_FILTER_BYTES = 256 * 1024;
/** validateFilter stops listing errors after this many. */
const MAX_ERRORS = 100;

export type Op = (typeof OPS)[number];
export type TextField = (typeof TEXT_FIELDS)[number];
export type Scalar = string | number | boolean;

export interface FieldCondition {
  field: string; // a TextField, 'createdAt' or `properties.${key}`
  op: Op;
  value?: Scalar | Scalar[];
}
export interface TopicCondition {
  topic: string;
  subscribed: boolean;
}
/** The contact has (or has not) the tag, in any case (contract §18). */
export interface TagCondition {
  tag: string;
  has: boolean;
}
export const ENGAGEMENTS = ['delivered', 'opened', 'clicked'] as const;
export type Engagement = (typeof ENGAGEMENTS)[number];
/** withinDays: 1 to this many days (ten years). */
export const MAX_WITHIN_DAYS = 3650;
/** A contact was sent / opened / clicked (human only) a message, of one broadcast or any, within some days or ever (§18). */
export interface EngagementCondition {
  engagement: Engagement;
  broadcastId?: string;
  withinDays?: number;
  happened: boolean;
}
/**
 * Not in the grammar (validateFilter refuses `until`): a resend's audience (audience.ts) counts only the events up to
 * the instant of the resend.
 */
export interface FrozenEngagementCondition extends EngagementCondition {
  until?: string;
}
export type Filter =
  { all: Filter[] } | { any: Filter[] } | FieldCondition | TopicCondition | TagCondition | EngagementCondition;

const KEY_RE = new RegExp(PROPERTY_KEY_PATTERN);
const ENGAGEMENT_KEYS = ['engagement', 'broadcastId', 'withinDays', 'happened'];
const ORDER_OPS = new Set<Op>(['gt', 'gte', 'lt', 'lte']);
const TEXT_MATCH_OPS = new Set<Op>(['contains', 'startsWith', 'endsWith']);

type FieldKind = { kind: 'text'; field: TextField } | { kind: 'date' } | { kind: 'property'; key: string };

function fieldKind(field: string): FieldKind | undefined {
  if ((TEXT_FIELDS as readonly string[]).includes(field)) return { kind: 'text', field: field as TextField };
  if (field === 'createdAt') return { kind: 'date' };
  if (field.startsWith('properties.') && KEY_RE.test(field.slice('properties.'.length)))
    return { kind: 'property', key: field.slice('properties.'.length) };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const codePoints = (s: string) => [...s].length;

function stringProblem(v: string): string | undefined {
  if (codePoints(v) > MAX_STRING_LENGTH) return `must be at most ${MAX_STRING_LENGTH} characters`;
  if (v.includes('\u0000')) return 'must not contain NUL characters';
  if (/\p{Cs}/u.test(v)) return 'must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

/** The problem with one scalar for a field kind and an op (eq-like, order, text match), if any. */
function scalarProblem(kind: FieldKind, op: Op, v: unknown): string | undefined {
  if (kind.kind === 'date') {
    if (typeof v !== 'string' || normalizeDateTime(v) === undefined)
      return 'must be an RFC 3339 date-time, e.g. 2026-11-21T10:00:00.000Z';
    return undefined;
  }
  if (TEXT_MATCH_OPS.has(op) || kind.kind === 'text') {
    if (typeof v !== 'string') return 'must be a string';
    const p = stringProblem(v);
    if (p) return p;
    if (
      kind.kind === 'text' &&
      kind.field === 'status' &&
      (op === 'eq' || op === 'neq' || op === 'in') &&
      !(CONTACT_STATUSES as readonly string[]).includes(v)
    ) {
      return `must be one of ${CONTACT_STATUSES.map((s) => `"${s}"`).join(', ')}`;
    }
    return undefined;
  }
  // A property.
  if (ORDER_OPS.has(op)) {
    if (typeof v === 'number') return undefined;
    if (typeof v === 'string') return stringProblem(v);
    return 'must be a number or a string';
  }
  if (typeof v === 'number' || typeof v === 'boolean') return undefined;
  if (typeof v === 'string') return stringProblem(v);
  return v === null
    ? 'must be a string, number or boolean (use notExists to match a missing or null property)'
    : 'must be a string, number or boolean';
}

class Validator {
  readonly errors: FieldError[] = [];
  nodes = 0;
  values = 0;

  add(path: string, message: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push({ path, message });
  }

  node(raw: unknown, path: string, level: number): void {
    this.nodes++;
    if (level > MAX_DEPTH) return this.add(path, `nests deeper than ${MAX_DEPTH} levels`);
    if (!isObject(raw))
      return this.add(
        path,
        'must be an object: { "all": [...] }, { "any": [...] }, a field, topic, tag or engagement condition',
      );
    const kind = (['all', 'any', 'field', 'topic', 'tag', 'engagement'] as const).find((k) => Object.hasOwn(raw, k));
    if (!kind) return this.add(path, 'must have one of the keys "all", "any", "field", "topic", "tag" or "engagement"');
    const allowed =
      kind === 'all' || kind === 'any'
        ? [kind]
        : kind === 'field'
          ? ['field', 'op', 'value']
          : kind === 'tag'
            ? ['tag', 'has']
            : kind === 'engagement'
              ? ENGAGEMENT_KEYS
              : ['topic', 'subscribed'];
    for (const key of Object.keys(raw))
      if (!allowed.includes(key)) this.add(`${path}/${escapePointer(key)}`, 'is not allowed');
    if (kind === 'engagement') return this.engagementCondition(raw, path);
    if (kind === 'all' || kind === 'any') {
      const members = raw[kind];
      if (!Array.isArray(members)) return this.add(`${path}/${kind}`, 'must be an array of filters');
      members.forEach((m, i) => this.node(m, `${path}/${kind}/${i}`, level + 1));
    } else if (kind === 'topic') {
      this.topicCondition(raw, path);
    } else if (kind === 'tag') {
      this.tagCondition(raw, path);
    } else {
      this.fieldCondition(raw, path);
    }
  }

  topicCondition(raw: Record<string, unknown>, path: string): void {
    const { topic, subscribed } = raw;
    if (typeof topic !== 'string') this.add(`${path}/topic`, 'must be a string (a topic id)');
    else if (topic.length < 1 || topic.length > 64)
      this.add(`${path}/topic`, 'must be a topic id of 1 to 64 characters');
    if (!Object.hasOwn(raw, 'subscribed')) this.add(`${path}/subscribed`, 'is required');
    else if (typeof subscribed !== 'boolean') this.add(`${path}/subscribed`, 'must be a boolean');
  }

  tagCondition(raw: Record<string, unknown>, path: string): void {
    const { tag, has } = raw;
    if (typeof tag !== 'string') this.add(`${path}/tag`, 'must be a string (a tag)');
    else {
      const problem = tagProblem(tag.trim());
      if (problem) this.add(`${path}/tag`, problem);
    }
    if (!Object.hasOwn(raw, 'has')) this.add(`${path}/has`, 'is required');
    else if (typeof has !== 'boolean') this.add(`${path}/has`, 'must be a boolean');
  }

  engagementCondition(raw: Record<string, unknown>, path: string): void {
    const { engagement, broadcastId, withinDays, happened } = raw;
    if (typeof engagement !== 'string' || !(ENGAGEMENTS as readonly string[]).includes(engagement))
      this.add(`${path}/engagement`, `must be one of ${ENGAGEMENTS.map((e) => `"${e}"`).join(', ')}`);
    if (
      Object.hasOwn(raw, 'broadcastId') &&
      (typeof broadcastId !== 'string' || broadcastId.length < 1 || broadcastId.length > 64)
    )
      this.add(`${path}/broadcastId`, 'must be a broadcast id of 1 to 64 characters');
    if (
      Object.hasOwn(raw, 'withinDays') &&
      (typeof withinDays !== 'number' ||
        !Number.isInteger(withinDays) ||
        withinDays < 1 ||
        withinDays > MAX_WITHIN_DAYS)
    )
      this.add(`${path}/withinDays`, `must be a whole number of days from 1 to ${MAX_WITHIN_DAYS}`);
    if (!Object.hasOwn(raw, 'happened')) this.add(`${path}/happened`, 'is required');
    else if (typeof happened !== 'boolean') this.add(`${path}/happened`, 'must be a boolean');
  }

  fieldCondition(raw: Record<string, unknown>, path: string): void {
    const { field, op } = raw;
    let kind: FieldKind | undefined;
    if (typeof field !== 'string') {
      this.add(`${path}/field`, 'must be a string');
    } else {
      kind = fieldKind(field);
      if (!kind) {
        this.add(
          `${path}/field`,
          field.startsWith('properties.')
            ? `must name a property key matching ${PROPERTY_KEY_PATTERN} after "properties."`
            : 'must be one of "email", "firstName", "lastName", "status", "createdAt" or "properties.<key>"',
        );
      }
    }
    let validOp: Op | undefined;
    if (!Object.hasOwn(raw, 'op')) this.add(`${path}/op`, 'is required');
    else if (typeof op !== 'string' || !(OPS as readonly string[]).includes(op))
      this.add(`${path}/op`, `must be one of ${OPS.map((o) => `"${o}"`).join(', ')}`);
    else validOp = op as Op;
    if (!validOp) return;

    const hasValue = Object.hasOwn(raw, 'value');
    if (validOp === 'exists' || validOp === 'notExists') {
      if (hasValue) this.add(`${path}/value`, `is not allowed with ${validOp}`);
      return;
    }
    if (!hasValue) return this.add(`${path}/value`, 'is required');
    if (!kind) return;
    if (kind.kind === 'date' && TEXT_MATCH_OPS.has(validOp)) {
      return this.add(`${path}/op`, `${validOp} is not supported for createdAt: compare dates with gt, gte, lt or lte`);
    }
    const value = raw.value;
    if (validOp === 'in') {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES) {
        return this.add(`${path}/value`, `must be an array of 1 to ${MAX_IN_VALUES} values`);
      }
      this.values += value.length;
      value.forEach((v, i) => {
        const p = scalarProblem(kind, 'in', v);
        if (p) this.add(`${path}/value/${i}`, p);
      });
      return;
    }
    const p = scalarProblem(kind, validOp, value);
    if (p) this.add(`${path}/value`, p);
  }
}

/**
 * Checks `raw` against the grammar: one error per violation (the first 100), JSON Pointers under
 * `basePath` (`/filter/all/2/op`). A node nested deeper than MAX_DEPTH is reported and not looked into.
 */
export function validateFilter(raw: unknown, basePath = '/filter'): FieldError[] {
  const v = new Validator();
  v.node(raw, basePath, 1);
  if (v.errors.length === 0) {
    // Measured once the shape is known to be sane (a filter too deep to stringify stops above).
    const bytes = Buffer.byteLength(JSON.stringify(raw), 'utf8');
    if (bytes > MAX_FILTER_BYTES)
      return [{ path: basePath, message: `must be at most ${MAX_FILTER_BYTES} bytes as JSON (it is ${bytes})` }];
  }
  if (v.nodes > MAX_NODES)
    v.errors.unshift({ path: basePath, message: `must have at most ${MAX_NODES} conditions and groups in total` });
  if (v.values > MAX_TOTAL_VALUES)
    v.errors.unshift({
      path: basePath,
      message: `must have at most ${MAX_TOTAL_VALUES} values in all its in lists together (it has ${v.values})`,
    });
  return v.errors;
}

/**
 * What evaluating a valid filter costs per contact, in rough units of one simple comparison: the
 * segments' queries size their slices of contacts by it (segments/slices.ts), so that no statement does
 * more than a bounded amount of work. A text match reads the whole property; a topic condition is two
 * index probes; an `in` list is one probe of a list built once per statement.
 */
export function filterCost(filter: Filter): number {
  if ('all' in filter) return 1 + filter.all.reduce((n, m) => n + filterCost(m), 0);
  if ('any' in filter) return 1 + filter.any.reduce((n, m) => n + filterCost(m), 0);
  if ('topic' in filter) return 4;
  if ('tag' in filter) return 2;
  // Without a broadcast, a column of the contact. With one, in a slice: a lookup in the slice's part of the
  // broadcast's list, read once per statement (broadcastEngagementSql; ~0.1 µs a contact at 1,000,000 contacts on
  // SQLite, bench:engagement), as a topic's two probes. (Unsliced, as for one contact, a probe of the index: ~3 µs.)
  if ('engagement' in filter) return filter.broadcastId === undefined ? 1 : 4;
  if (TEXT_MATCH_OPS.has(filter.op)) return 12;
  return filter.field.startsWith('properties.') ? 3 : 1;
}

/** The topics a valid filter's topic conditions name, each with the path of its `topic` key. */
export function topicReferences(filter: Filter, basePath = '/filter'): { topic: string; path: string }[] {
  if ('all' in filter) return filter.all.flatMap((m, i) => topicReferences(m, `${basePath}/all/${i}`));
  if ('any' in filter) return filter.any.flatMap((m, i) => topicReferences(m, `${basePath}/any/${i}`));
  return 'topic' in filter ? [{ topic: filter.topic, path: `${basePath}/topic` }] : [];
}

/** The broadcasts a valid filter's engagement conditions name, each with the path of its `broadcastId` key. */
export function broadcastReferences(filter: Filter, basePath = '/filter'): { broadcastId: string; path: string }[] {
  if ('all' in filter) return filter.all.flatMap((m, i) => broadcastReferences(m, `${basePath}/all/${i}`));
  if ('any' in filter) return filter.any.flatMap((m, i) => broadcastReferences(m, `${basePath}/any/${i}`));
  return 'engagement' in filter && filter.broadcastId !== undefined
    ? [{ broadcastId: filter.broadcastId, path: `${basePath}/broadcastId` }]
    : [];
}

// ---------------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------------

type Sql = RawBuilder<unknown>;

const TRUE = sql<SqlBool>`(1 = 1)`;
const FALSE = sql<SqlBool>`(1 = 0)`;

/** ASCII-only lower-casing: what SQLite's lower() and PostgreSQL's lower(… collate "C") do. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** `(expr) is not true`: the negation that treats NULL (unknown, missing) as false first. */
const isNotTrue = (e: Sql) => sql<SqlBool>`((${e}) is not true)`;

interface Dialectal {
  /** A text expression in code point order (SQLite's default BINARY collation; "C" on PostgreSQL). */
  ordered(e: Sql): Sql;
  contains(haystack: Sql, needle: string): Sql;
  startsWith(haystack: Sql, needle: string): Sql;
  endsWith(haystack: Sql, needle: string): Sql;
  /** `e` is one of `values` (passed as one JSON array parameter, however many there are). */
  inStrings(e: Sql, values: string[]): Sql;
  inTimestamps(e: Sql, isoValues: string[]): Sql;
  timestamp(iso: string): Sql;
  property: PropertyOps;
}

interface PropertyOps {
  exists(key: string): Sql;
  eq(key: string, v: Scalar): Sql;
  in(key: string, values: Scalar[]): Sql;
  order(key: string, cmp: string, v: number | string): Sql;
  textMatch(key: string, op: 'contains' | 'startsWith' | 'endsWith', v: string): Sql;
}

const CMP: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

const sqlite: Dialectal = {
  ordered: (e) => e,
  contains: (h, n) => sql`(instr(lower(${h}), ${n}) > 0)`,
  startsWith: (h, n) => sql`(substr(lower(${h}), 1, ${codePoints(n)}) = ${n})`,
  endsWith: (h, n) => sql`(substr(lower(${h}), ${-codePoints(n)}) = ${n})`,
  inStrings: (e, values) => sql`(${e} in (select value from json_each(${JSON.stringify(values)})))`,
  inTimestamps: (e, values) => sql`(${e} in (select value from json_each(${JSON.stringify(values)})))`,
  // Timestamps are stored as RFC 3339 UTC text with milliseconds: text order is chronological order.
  timestamp: (iso) => sql`${iso}`,
  property: (() => {
    const path = (key: string) => sql`'$.' || ${key}`;
    const type = (key: string) => sql`json_type(contacts.properties, ${path(key)})`;
    const value = (key: string) => sql`json_extract(contacts.properties, ${path(key)})`;
    const typeGuard = (key: string, v: Scalar) =>
      typeof v === 'string'
        ? sql`${type(key)} = 'text'`
        : typeof v === 'number'
          ? sql`${type(key)} in ('integer', 'real')`
          : sql`${type(key)} = ${v ? 'true' : 'false'}`;
    return {
      exists: (key) => sql`(coalesce(${type(key)}, 'null') <> 'null')`,
      eq: (key, v) =>
        typeof v === 'boolean' ? sql`(${typeGuard(key, v)})` : sql`(${typeGuard(key, v)} and ${value(key)} = ${v})`,
      // One uncorrelated list per JSON type: SQLite builds each once per statement (an ephemeral index) and
      // probes it per contact. json_extract gives true/false as 1/0, so booleans are matched by type alone.
      in: (key, values) => {
        const strings = values.filter((v): v is string => typeof v === 'string');
        const numbers = values.filter((v): v is number => typeof v === 'number');
        const parts: Sql[] = [];
        if (strings.length)
          parts.push(
            sql`(${type(key)} = 'text' and ${value(key)} in (select value from json_each(${JSON.stringify(strings)})))`,
          );
        if (numbers.length)
          parts.push(
            sql`(${type(key)} in ('integer', 'real') and ${value(key)} in (select value from json_each(${JSON.stringify(numbers)})))`,
          );
        for (const b of [true, false])
          if (values.includes(b)) parts.push(sql`(${type(key)} = ${b ? 'true' : 'false'})`);
        return sql`(${sql.join(parts, sql` or `)})`;
      },
      order: (key, cmp, v) => sql`(${typeGuard(key, v)} and ${value(key)} ${sql.raw(cmp)} ${v})`,
      textMatch: (key, op, v) => sql`(${type(key)} = 'text' and ${sqlite[op](value(key), v)})`,
    } satisfies PropertyOps;
  })(),
};

const postgres: Dialectal = {
  ordered: (e) => sql`(${e}) collate "C"`,
  contains: (h, n) => sql`(strpos(lower((${h}) collate "C"), ${n}::text) > 0)`,
  startsWith: (h, n) => sql`(left(lower((${h}) collate "C"), ${codePoints(n)}::int) = ${n}::text)`,
  endsWith: (h, n) => sql`(right(lower((${h}) collate "C"), ${codePoints(n)}::int) = ${n}::text)`,
  inStrings: (e, values) => sql`(${e} in (select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb)))`,
  inTimestamps: (e, values) =>
    sql`(${e} in (select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb)::timestamptz))`,
  timestamp: (iso) => sql`${iso}::timestamptz`,
  property: (() => {
    const json = (key: string) => sql`(contacts.properties -> ${key}::text)`;
    const text = (key: string) => sql`(contacts.properties ->> ${key}::text)`;
    const type = (key: string) => sql`jsonb_typeof(${json(key)})`;
    return {
      exists: (key) => sql`(coalesce(${type(key)}, 'null') <> 'null')`,
      // jsonb equality compares type and value (numbers numerically).
      eq: (key, v) => sql`(${json(key)} = ${JSON.stringify(v)}::jsonb)`,
      // An uncorrelated list: hashed once per statement, probed per contact (jsonb equality compares types).
      in: (key, values) => sql`(${json(key)} in (select jsonb_array_elements(${JSON.stringify(values)}::jsonb)))`,
      // jsonb order between numbers is numeric, and comparing jsonb never fails on a type: no casts to guard.
      order: (key, cmp, v) =>
        typeof v === 'number'
          ? sql`(${type(key)} = 'number' and ${json(key)} ${sql.raw(cmp)} ${JSON.stringify(v)}::jsonb)`
          : sql`(${type(key)} = 'string' and ${text(key)} collate "C" ${sql.raw(cmp)} ${v}::text)`,
      textMatch: (key, op, v) => sql`(${type(key)} = 'string' and ${postgres[op](text(key), v)})`,
    } satisfies PropertyOps;
  })(),
};

const COLUMNS: Record<TextField, string> = {
  email: 'email',
  firstName: 'first_name',
  lastName: 'last_name',
  status: 'status',
};

/** The default subscription of the topics a filter names, as read from the workspace (topicDefaults); a topic not in it matches no contact. */
export type TopicDefaults = ReadonlyMap<string, DefaultSubscription>;

function compileTopic(c: TopicCondition, workspaceId: string, topics: TopicDefaults): Sql {
  const defaultSubscription = topics.get(c.topic);
  return defaultSubscription === undefined
    ? FALSE
    : subscribedToSql(workspaceId, { id: c.topic, defaultSubscription }, c.subscribed);
}

function compileField(c: FieldCondition, d: Dialectal): Sql {
  const kind = fieldKind(c.field);
  if (!kind) throw new Error(`invalid filter field ${c.field}`);
  const op = c.op;
  if (op === 'neq') return isNotTrue(compileField({ ...c, op: 'eq' }, d));
  if (op === 'notExists') return isNotTrue(compileField({ ...c, op: 'exists' }, d));

  if (kind.kind === 'property') {
    const p = d.property;
    switch (op) {
      case 'exists':
        return p.exists(kind.key);
      case 'eq':
        return p.eq(kind.key, c.value as Scalar);
      case 'in':
        return p.in(kind.key, c.value as Scalar[]);
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        const v = asciiLower(c.value as string);
        // Every string contains, starts and ends with "" (contains is the form both dialects agree on).
        return p.textMatch(kind.key, v === '' ? 'contains' : op, v);
      }
      default:
        return p.order(kind.key, CMP[op]!, c.value as number | string);
    }
  }

  if (kind.kind === 'date') {
    const col = sql.ref('contacts.created_at');
    switch (op) {
      case 'exists':
        return TRUE;
      case 'in':
        return d.inTimestamps(
          col,
          (c.value as string[]).map((v) => normalizeDateTime(v)!),
        );
      case 'eq':
        return sql`(${col} = ${d.timestamp(normalizeDateTime(c.value as string)!)})`;
      default:
        return sql`(${col} ${sql.raw(CMP[op]!)} ${d.timestamp(normalizeDateTime(c.value as string)!)})`;
    }
  }

  // email, firstName, lastName, status. Stored emails are lower-case (lib/email.ts): so are the values.
  const col = sql.ref(`contacts.${COLUMNS[kind.field]}`);
  const norm = (v: string) => (kind.field === 'email' ? v.toLowerCase() : v);
  switch (op) {
    case 'exists':
      return sql`(${col} is not null)`;
    case 'eq':
      return sql`(${col} = ${norm(c.value as string)})`;
    case 'in':
      return d.inStrings(col, (c.value as string[]).map(norm));
    case 'contains':
    case 'startsWith':
    case 'endsWith': {
      const v = asciiLower(norm(c.value as string));
      return v === '' ? sql`(${col} is not null)` : d[op](col, v);
    }
    default:
      return sql`(${d.ordered(col)} ${sql.raw(CMP[op]!)} ${norm(c.value as string)})`;
  }
}

/**
 * A group's members, cheapest first (filterCost; stable). SQLite evaluates the terms of a WHERE clause in the
 * order written and stops at the first that decides: with the createdAt range of a segment before its property
 * and topic conditions, a count over 1,000,000 contacts takes ~30% less CPU (bench/README.md, bench:segments).
 * AND and OR give the same result in any order, NULLs included.
 */
const cheapestFirst = (members: Filter[]) =>
  members
    .map((m) => ({ m, cost: filterCost(m) }))
    .sort((a, b) => a.cost - b.cost)
    .map((x) => x.m);

const DAY_MS = 86_400_000;

/**
 * Without a broadcast: a comparison of the contact's summary column (audience/contacts/contacts.engagement.ts, kept
 * from its human `email.sent`, `email.opened`, `email.clicked` events). With one: whether the
 * broadcast's events hold the contact (outbox/events/events.engagement.ts); a resend's `until` always names one. withinDays counts back from now, the
 * service's clock (`Date.now()`), to the millisecond: `withinDays: 7` is the last 7 × 24 hours.
 */
function compileEngagement(
  c: FrozenEngagementCondition,
  dialect: Dialect,
  workspaceId: string,
  within: IdRange | undefined,
): Sql {
  const since = c.withinDays !== undefined ? new Date(Date.now() - c.withinDays * DAY_MS).toISOString() : undefined;
  if (c.broadcastId === undefined) {
    if (c.until !== undefined) throw new Error('an engagement condition bounded by `until` names its broadcast');
    const column = sql.ref(`contacts.${ENGAGEMENT_COLUMN[c.engagement]}`);
    const at = since === undefined ? null : dialect === 'postgres' ? sql`${since}::timestamptz` : sql`${since}`;
    const happened = at === null ? sql`${column} is not null` : sql`${column} >= ${at}`;
    return c.happened
      ? sql`(${happened})`
      : at === null
        ? sql`(${column} is null)`
        : sql`(${column} is null or ${column} < ${at})`;
  }
  const exists = broadcastEngagementSql(
    dialect,
    workspaceId,
    {
      kind: c.engagement,
      broadcastId: c.broadcastId,
      ...(since !== undefined ? { since } : {}),
      ...(c.until !== undefined ? { until: c.until } : {}),
    },
    dialect === 'sqlite' ? within : undefined,
  );
  return c.happened ? sql`(${exists})` : sql`(not ${exists})`;
}

function compileNode(
  f: Filter,
  d: Dialectal,
  workspaceId: string,
  topics: TopicDefaults,
  within: IdRange | undefined,
): Sql {
  if ('all' in f)
    return f.all.length === 0
      ? TRUE
      : sql`(${sql.join(
          cheapestFirst(f.all).map((m) => compileNode(m, d, workspaceId, topics, within)),
          sql` and `,
        )})`;
  if ('any' in f)
    return f.any.length === 0
      ? FALSE
      : sql`(${sql.join(
          cheapestFirst(f.any).map((m) => compileNode(m, d, workspaceId, topics, within)),
          sql` or `,
        )})`;
  if ('topic' in f) return compileTopic(f, workspaceId, topics);
  if ('tag' in f) return hasTagSql(workspaceId, f.tag.trim(), f.has);
  if ('engagement' in f) return compileEngagement(f, d === postgres ? 'postgres' : 'sqlite', workspaceId, within);
  return compileField(f, d);
}

/**
 * A boolean SQL expression over the `contacts` table (referenced by that name, unaliased) that is true
 * exactly for the contacts the filter matches. `filter` must be valid (validateFilter): a stored
 * segment's filter was validated when it was saved. `topics` holds the default subscription of the topics
 * it names that are in the workspace (segments.repository.ts compiledFilter reads them); the statement
 * checks again that each still exists.
 *
 * `within`: the range of contact ids the statement is narrowed to (a slice, on SQLite), when it is. Conditions on
 * one broadcast's events then read only that range of the broadcast's list (broadcastEngagementSql); the caller
 * narrows the statement to the same range (inRange).
 */
export function compileFilter(
  filter: Filter,
  dialect: Dialect,
  workspaceId: string,
  topics: TopicDefaults,
  within?: IdRange,
): Expression<SqlBool> {
  return sql<SqlBool>`${compileNode(filter, dialect === 'postgres' ? postgres : sqlite, workspaceId, topics, within)}`;
}
