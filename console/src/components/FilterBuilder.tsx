/**
 * A visual editor for the segment filter grammar (contract §7, src/audience/segments/CONTEXT.md): all/any groups nested up
 * to 8 levels, field conditions with the input each field takes (a date for createdAt, a select for status, a
 * free key for properties.<key>), topic conditions with a topic picker, tag conditions (has / has not a tag),
 * engagement conditions (sent, opened, clicked; one broadcast or any; within some days or ever; contract §18). Items
 * are added, removed and moved
 * up or down. Errors from the API (JSON Pointers such as /filter/all/2/value) show next to their condition.
 */
import { useId } from 'react';
import type { components } from '../api/generated/schema';
import { Button } from './Button';

export type Filter = components['schemas']['SegmentFilter'];
type Op = components['schemas']['SegmentFieldCondition']['op'];
type Scalar = string | number | boolean;

export type Node =
  | { kind: 'group'; id: number; mode: 'all' | 'any'; children: Node[] }
  | {
      kind: 'field';
      id: number;
      field: string;
      key: string;
      op: Op;
      value: string;
      valueType: 'string' | 'number' | 'boolean';
    }
  | { kind: 'topic'; id: number; topic: string; subscribed: boolean }
  | { kind: 'tag'; id: number; tag: string; has: boolean }
  | {
      kind: 'engagement';
      id: number;
      engagement: Engagement;
      /** '' for any message. */
      broadcastId: string;
      /** '' for ever; else a whole number of days, as typed. */
      withinDays: string;
      happened: boolean;
    };

type Engagement = components['schemas']['SegmentEngagementCondition']['engagement'];
const ENGAGEMENT_LABELS: Record<Engagement, string> = {
  delivered: 'been sent',
  opened: 'opened',
  clicked: 'clicked a link in',
};

let nextId = 1;
const MAX_DEPTH = 8;
const STATUSES = ['SUBSCRIBED', 'PENDING', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED'];

const FIELDS = [
  { value: 'email', label: 'Email' },
  { value: 'firstName', label: 'First name' },
  { value: 'lastName', label: 'Last name' },
  { value: 'status', label: 'Status' },
  { value: 'createdAt', label: 'Added on' },
  { value: 'properties', label: 'Property…' },
];

const OP_LABELS: Record<Op, string> = {
  eq: 'is',
  neq: 'is not',
  contains: 'contains',
  startsWith: 'starts with',
  endsWith: 'ends with',
  in: 'is one of',
  exists: 'is set',
  notExists: 'is not set',
  gt: 'is after / greater than',
  gte: 'is on or after / at least',
  lt: 'is before / less than',
  lte: 'is on or before / at most',
};

function opsFor(field: string): Op[] {
  if (field === 'createdAt') return ['gte', 'lt', 'gt', 'lte', 'eq', 'neq'];
  if (field === 'status') return ['eq', 'neq', 'in'];
  if (field === 'email') return ['eq', 'neq', 'contains', 'startsWith', 'endsWith', 'in'];
  if (field === 'firstName' || field === 'lastName')
    return ['eq', 'neq', 'contains', 'startsWith', 'endsWith', 'in', 'exists', 'notExists'];
  return ['eq', 'neq', 'contains', 'startsWith', 'endsWith', 'in', 'gt', 'gte', 'lt', 'lte', 'exists', 'notExists'];
}

const DATE_OP_LABELS: Partial<Record<Op, string>> = {
  gt: 'is after',
  gte: 'is on or after',
  lt: 'is before',
  lte: 'is on or before',
  eq: 'is exactly',
  neq: 'is not exactly',
};
const NUMBER_OP_LABELS: Partial<Record<Op, string>> = {
  gt: 'is greater than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
};

function opLabel(field: string, op: Op): string {
  if (field === 'createdAt') return DATE_OP_LABELS[op] ?? op;
  if (field.startsWith('properties')) return NUMBER_OP_LABELS[op] ?? OP_LABELS[op];
  return OP_LABELS[op];
}

export function newCondition(): Node {
  return { kind: 'field', id: nextId++, field: 'email', key: '', op: 'endsWith', value: '', valueType: 'string' };
}
export function newEngagement(): Node {
  return { kind: 'engagement', id: nextId++, engagement: 'opened', broadcastId: '', withinDays: '30', happened: true };
}
export function newGroup(mode: 'all' | 'any' = 'all', children: Node[] = []): Node {
  return { kind: 'group', id: nextId++, mode, children };
}

/* ------------------------------------------------------------------ JSON ⇄ tree */

/** createdAt values are instants; the date input shows the local calendar day. */
function dayOf(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
function instantOf(day: string): string {
  const d = new Date(`${day}T00:00:00`);
  return Number.isNaN(d.getTime()) ? day : d.toISOString();
}

export function toTree(f: Filter): Node {
  if ('all' in f) return newGroup('all', f.all.map(toTree));
  if ('any' in f) return newGroup('any', f.any.map(toTree));
  if ('topic' in f) return { kind: 'topic', id: nextId++, topic: f.topic, subscribed: f.subscribed };
  if ('tag' in f) return { kind: 'tag', id: nextId++, tag: f.tag, has: f.has };
  if ('engagement' in f)
    return {
      kind: 'engagement',
      id: nextId++,
      engagement: f.engagement,
      broadcastId: f.broadcastId ?? '',
      withinDays: f.withinDays === undefined ? '' : String(f.withinDays),
      happened: f.happened,
    };
  const isProp = f.field.startsWith('properties.');
  const v = f.value;
  const valueType =
    typeof v === 'number' || (Array.isArray(v) && typeof v[0] === 'number')
      ? 'number'
      : typeof v === 'boolean'
        ? 'boolean'
        : 'string';
  let value = Array.isArray(v) ? v.map(String).join(', ') : v === undefined ? '' : String(v);
  if (f.field === 'createdAt' && typeof v === 'string') value = dayOf(v);
  return {
    kind: 'field',
    id: nextId++,
    field: isProp ? 'properties' : f.field,
    key: isProp ? f.field.slice(11) : '',
    op: f.op,
    value,
    valueType,
  };
}

function typed(raw: string, t: 'string' | 'number' | 'boolean'): Scalar {
  if (t === 'number') {
    const n = Number(raw);
    return raw.trim() !== '' && Number.isFinite(n) ? n : raw;
  }
  if (t === 'boolean') return raw === 'true';
  return raw;
}

export function toFilter(n: Node): Filter {
  if (n.kind === 'group')
    return n.mode === 'all' ? { all: n.children.map(toFilter) } : { any: n.children.map(toFilter) };
  if (n.kind === 'topic') return { topic: n.topic, subscribed: n.subscribed };
  if (n.kind === 'tag') return { tag: n.tag, has: n.has };
  if (n.kind === 'engagement') {
    const days = n.withinDays.trim();
    return {
      engagement: n.engagement,
      ...(n.broadcastId ? { broadcastId: n.broadcastId } : {}),
      // Sent as typed when it is not a whole number: the API says what is wrong with it, next to the condition.
      ...(days ? { withinDays: /^\d+$/.test(days) ? Number(days) : (days as unknown as number) } : {}),
      happened: n.happened,
    };
  }
  const field = n.field === 'properties' ? `properties.${n.key}` : n.field;
  if (n.op === 'exists' || n.op === 'notExists') return { field, op: n.op };
  if (n.op === 'in') {
    const items = n.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return { field, op: 'in', value: items.map((s) => (n.field === 'properties' ? typed(s, n.valueType) : s)) };
  }
  if (n.field === 'createdAt') return { field, op: n.op, value: n.value ? instantOf(n.value) : '' };
  return { field, op: n.op, value: n.field === 'properties' ? typed(n.value, n.valueType) : n.value };
}

/* ------------------------------------------------------------------ tree edits */

function mapNode(root: Node, id: number, fn: (n: Node) => Node | null): Node {
  const walk = (n: Node): Node | null => {
    if (n.id === id) return fn(n);
    if (n.kind !== 'group') return n;
    return { ...n, children: n.children.map(walk).filter((c): c is Node => c !== null) };
  };
  return walk(root) ?? newGroup('all');
}

function moveChild(root: Node, groupId: number, index: number, delta: number): Node {
  return mapNode(root, groupId, (g) => {
    if (g.kind !== 'group') return g;
    const to = index + delta;
    if (to < 0 || to >= g.children.length) return g;
    const children = [...g.children];
    [children[index], children[to]] = [children[to]!, children[index]!];
    return { ...g, children };
  });
}

/* ------------------------------------------------------------------ views */

export interface TopicOption {
  id: string;
  name: string;
}

/** A broadcast an engagement condition may name (the sent ones, newest first). */
export interface BroadcastOption {
  id: string;
  name: string;
}

interface Ctx {
  root: Node;
  onChange: (n: Node) => void;
  topics: TopicOption[];
  tags?: string[];
  broadcasts: BroadcastOption[];
  errors: Record<string, string>;
  disabled: boolean;
}

function errorsUnder(errors: Record<string, string>, path: string): string[] {
  return Object.entries(errors)
    .filter(([p]) => p === path || (p.startsWith(`${path}/`) && !/^\/(all|any)\/\d+/.test(p.slice(path.length))))
    .map(([p, m]) => {
      const part = p.slice(path.length + 1);
      return part ? `${part}: ${m}` : m;
    });
}

function ItemTools({
  ctx,
  group,
  index,
  count,
  label,
}: {
  ctx: Ctx;
  group: Node & { kind: 'group' };
  index: number;
  count: number;
  label: string;
}) {
  if (ctx.disabled) return null;
  return (
    <span className="fb-tools">
      <Button
        size="sm"
        variant="ghost"
        onClick={() => ctx.onChange(moveChild(ctx.root, group.id, index, -1))}
        disabled={index === 0}
        aria-label={`Move ${label} up`}
        title="Move up"
      >
        ↑
      </Button>
      <Button
        size="sm"
        variant="ghost"
        onClick={() => ctx.onChange(moveChild(ctx.root, group.id, index, 1))}
        disabled={index === count - 1}
        aria-label={`Move ${label} down`}
        title="Move down"
      >
        ↓
      </Button>
      <Button
        size="sm"
        variant="ghost"
        onClick={() =>
          ctx.onChange(
            mapNode(ctx.root, group.id, (g) =>
              g.kind === 'group' ? { ...g, children: g.children.filter((_, i) => i !== index) } : g,
            ),
          )
        }
        aria-label={`Remove ${label}`}
        title="Remove"
      >
        ✕
      </Button>
    </span>
  );
}

function FieldRow({
  ctx,
  node,
  path,
  label,
}: {
  ctx: Ctx;
  node: Node & { kind: 'field' };
  path: string;
  label: string;
}) {
  const id = useId();
  const set = (patch: Partial<typeof node>) =>
    ctx.onChange(mapNode(ctx.root, node.id, (n) => ({ ...n, ...patch }) as Node));
  const ops = opsFor(node.field);
  const noValue = node.op === 'exists' || node.op === 'notExists';
  const errs = errorsUnder(ctx.errors, path);
  const errId = `${id}-err`;
  const described = errs.length ? errId : undefined;
  let valueInput;
  if (noValue) valueInput = null;
  else if (node.field === 'status' && node.op !== 'in') {
    valueInput = (
      <select
        id={`${id}-value`}
        className="select"
        value={node.value}
        onChange={(e) => set({ value: e.target.value })}
        disabled={ctx.disabled}
        aria-label={`${label}: status`}
        aria-describedby={described}
      >
        <option value="">Choose…</option>
        {STATUSES.map((s) => (
          <option key={s} value={s}>
            {s.charAt(0) + s.slice(1).toLowerCase()}
          </option>
        ))}
      </select>
    );
  } else if (node.field === 'status') {
    const chosen = new Set(
      node.value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    valueInput = (
      <fieldset className="fb-statuses" aria-describedby={described}>
        <legend className="visually-hidden">{label}: statuses</legend>
        {STATUSES.map((s) => (
          <label key={s} className="fb-check">
            <input
              type="checkbox"
              checked={chosen.has(s)}
              disabled={ctx.disabled}
              onChange={(e) => {
                const next = new Set(chosen);
                if (e.target.checked) next.add(s);
                else next.delete(s);
                set({ value: STATUSES.filter((x) => next.has(x)).join(', ') });
              }}
            />
            {s.charAt(0) + s.slice(1).toLowerCase()}
          </label>
        ))}
      </fieldset>
    );
  } else if (node.field === 'createdAt') {
    valueInput = (
      <input
        id={`${id}-value`}
        type="date"
        className="input"
        value={node.value}
        onChange={(e) => set({ value: e.target.value })}
        disabled={ctx.disabled}
        aria-label={`${label}: date (midnight, your time zone)`}
        aria-describedby={described}
      />
    );
  } else if (node.field === 'properties' && node.valueType === 'boolean' && node.op !== 'in') {
    valueInput = (
      <select
        id={`${id}-value`}
        className="select"
        value={node.value || 'true'}
        onChange={(e) => set({ value: e.target.value })}
        disabled={ctx.disabled}
        aria-label={`${label}: value`}
        aria-describedby={described}
      >
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  } else {
    valueInput = (
      <input
        id={`${id}-value`}
        className="input"
        value={node.value}
        inputMode={node.valueType === 'number' ? 'decimal' : undefined}
        onChange={(e) => set({ value: e.target.value })}
        disabled={ctx.disabled}
        placeholder={node.op === 'in' ? 'a, b, c' : node.field === 'email' ? '@example.com' : ''}
        aria-label={`${label}: value${node.op === 'in' ? ' (separate with commas)' : ''}`}
        aria-describedby={described}
      />
    );
  }
  return (
    <div className="fb-condition-body">
      <div className="fb-controls">
        <select
          className="select"
          value={node.field}
          disabled={ctx.disabled}
          aria-label={`${label}: field`}
          aria-describedby={described}
          onChange={(e) => {
            const field = e.target.value;
            const nextOps = opsFor(field);
            set({
              field,
              op: nextOps.includes(node.op) ? node.op : nextOps[0]!,
              value: field === node.field ? node.value : '',
              valueType: 'string',
            });
          }}
        >
          {FIELDS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
        {node.field === 'properties' && (
          <input
            className="input fb-key"
            value={node.key}
            onChange={(e) => set({ key: e.target.value })}
            disabled={ctx.disabled}
            placeholder="key, e.g. plan"
            aria-label={`${label}: property key`}
            aria-describedby={described}
          />
        )}
        <select
          className="select"
          value={node.op}
          disabled={ctx.disabled}
          aria-label={`${label}: operator`}
          aria-describedby={described}
          onChange={(e) => set({ op: e.target.value as Op })}
        >
          {ops.map((o) => (
            <option key={o} value={o}>
              {opLabel(node.field, o)}
            </option>
          ))}
        </select>
        {node.field === 'properties' && !noValue && !['contains', 'startsWith', 'endsWith'].includes(node.op) && (
          <select
            className="select fb-type"
            value={node.valueType}
            disabled={ctx.disabled}
            aria-label={`${label}: compare as`}
            onChange={(e) =>
              set({
                valueType: e.target.value as 'string' | 'number' | 'boolean',
                value: e.target.value === 'boolean' ? 'true' : node.value,
              })
            }
          >
            <option value="string">text</option>
            <option value="number">number</option>
            {node.op !== 'in' && ['eq', 'neq'].includes(node.op) && <option value="boolean">true/false</option>}
          </select>
        )}
        {valueInput}
      </div>
      {errs.length > 0 && (
        <div className="error small" id={errId} role="alert">
          {errs.join('; ')}
        </div>
      )}
    </div>
  );
}

function TopicRow({
  ctx,
  node,
  path,
  label,
}: {
  ctx: Ctx;
  node: Node & { kind: 'topic' };
  path: string;
  label: string;
}) {
  const set = (patch: Partial<typeof node>) =>
    ctx.onChange(mapNode(ctx.root, node.id, (n) => ({ ...n, ...patch }) as Node));
  const errs = errorsUnder(ctx.errors, path);
  const errId = `fb-topic-err-${node.id}`;
  const known = ctx.topics.some((t) => t.id === node.topic);
  return (
    <div className="fb-condition-body">
      <div className="fb-controls">
        <span className="fb-word">Topic</span>
        <select
          className="select"
          value={node.topic}
          onChange={(e) => set({ topic: e.target.value })}
          disabled={ctx.disabled}
          aria-label={`${label}: topic`}
          aria-describedby={errs.length ? errId : undefined}
        >
          <option value="">Choose a topic…</option>
          {!known && node.topic && <option value={node.topic}>{node.topic} (deleted)</option>}
          {ctx.topics.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
        <select
          className="select"
          value={node.subscribed ? 'true' : 'false'}
          onChange={(e) => set({ subscribed: e.target.value === 'true' })}
          disabled={ctx.disabled}
          aria-label={`${label}: subscription`}
        >
          <option value="true">subscribed</option>
          <option value="false">not subscribed</option>
        </select>
      </div>
      {errs.length > 0 && (
        <div className="error small" id={errId} role="alert">
          {errs.join('; ')}
        </div>
      )}
    </div>
  );
}

function TagRow({ ctx, node, path, label }: { ctx: Ctx; node: Node & { kind: 'tag' }; path: string; label: string }) {
  const set = (patch: Partial<typeof node>) =>
    ctx.onChange(mapNode(ctx.root, node.id, (n) => ({ ...n, ...patch }) as Node));
  const errs = errorsUnder(ctx.errors, path);
  const errId = `fb-tag-err-${node.id}`;
  const listId = `fb-tags-${node.id}`;
  return (
    <div className="fb-condition-body">
      <div className="fb-controls">
        <select
          className="select"
          value={node.has ? 'true' : 'false'}
          onChange={(e) => set({ has: e.target.value === 'true' })}
          disabled={ctx.disabled}
          aria-label={`${label}: has or has not`}
        >
          <option value="true">has the tag</option>
          <option value="false">has not the tag</option>
        </select>
        <input
          className="input"
          value={node.tag}
          maxLength={64}
          list={ctx.tags?.length ? listId : undefined}
          placeholder="VIP"
          onChange={(e) => set({ tag: e.target.value })}
          disabled={ctx.disabled}
          aria-label={`${label}: tag`}
          aria-invalid={errs.length > 0 || undefined}
          aria-describedby={errs.length ? errId : undefined}
        />
        {ctx.tags?.length ? (
          <datalist id={listId}>
            {ctx.tags.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        ) : null}
      </div>
      {errs.length > 0 && (
        <div className="error small" id={errId} role="alert">
          {errs.join('; ')}
        </div>
      )}
    </div>
  );
}

function EngagementRow({
  ctx,
  node,
  path,
  label,
}: {
  ctx: Ctx;
  node: Node & { kind: 'engagement' };
  path: string;
  label: string;
}) {
  const set = (patch: Partial<typeof node>) =>
    ctx.onChange(mapNode(ctx.root, node.id, (n) => ({ ...n, ...patch }) as Node));
  const errs = errorsUnder(ctx.errors, path);
  const errId = `fb-engagement-err-${node.id}`;
  const described = errs.length ? errId : undefined;
  const known = ctx.broadcasts.some((b) => b.id === node.broadcastId);
  const ever = node.withinDays === '';
  return (
    <div className="fb-condition-body">
      <div className="fb-controls">
        <span className="fb-word">Contact</span>
        <select
          className="select"
          value={node.happened ? 'true' : 'false'}
          onChange={(e) => set({ happened: e.target.value === 'true' })}
          disabled={ctx.disabled}
          aria-label={`${label}: has or has not`}
          aria-describedby={described}
        >
          <option value="true">has</option>
          <option value="false">has not</option>
        </select>
        <select
          className="select"
          value={node.engagement}
          onChange={(e) => set({ engagement: e.target.value as Engagement })}
          disabled={ctx.disabled}
          aria-label={`${label}: engagement`}
          aria-describedby={described}
        >
          {(Object.keys(ENGAGEMENT_LABELS) as Engagement[]).map((k) => (
            <option key={k} value={k}>
              {ENGAGEMENT_LABELS[k]}
            </option>
          ))}
        </select>
        <select
          className="select fb-broadcast"
          value={node.broadcastId}
          onChange={(e) => set({ broadcastId: e.target.value })}
          disabled={ctx.disabled}
          aria-label={`${label}: broadcast`}
          aria-describedby={described}
        >
          <option value="">any email</option>
          {!known && node.broadcastId && <option value={node.broadcastId}>{node.broadcastId}</option>}
          {ctx.broadcasts.map((b) => (
            <option key={b.id} value={b.id}>
              {b.name}
            </option>
          ))}
        </select>
        <select
          className="select"
          value={ever ? 'ever' : 'within'}
          onChange={(e) => set({ withinDays: e.target.value === 'ever' ? '' : '30' })}
          disabled={ctx.disabled}
          aria-label={`${label}: when`}
          aria-describedby={described}
        >
          <option value="ever">ever</option>
          <option value="within">in the last</option>
        </select>
        {!ever && (
          <>
            <input
              className="input fb-days"
              value={node.withinDays}
              inputMode="numeric"
              onChange={(e) => set({ withinDays: e.target.value })}
              disabled={ctx.disabled}
              aria-label={`${label}: days (1 to 3650)`}
              aria-describedby={described}
            />
            <span className="fb-word">days</span>
          </>
        )}
      </div>
      <p className="muted small fb-note">
        Opens and clicks by machines (Apple Mail Privacy Protection, scanners) never count.
      </p>
      {errs.length > 0 && (
        <div className="error small" id={errId} role="alert">
          {errs.join('; ')}
        </div>
      )}
    </div>
  );
}

function GroupView({
  ctx,
  node,
  path,
  depth,
  label,
}: {
  ctx: Ctx;
  node: Node & { kind: 'group' };
  path: string;
  depth: number;
  label: string;
}) {
  const add = (child: Node) =>
    ctx.onChange(
      mapNode(ctx.root, node.id, (g) => (g.kind === 'group' ? { ...g, children: [...g.children, child] } : g)),
    );
  const errs = errorsUnder(ctx.errors, path);
  return (
    <div className={`fb-group fb-depth-${depth % 4}`} role="group" aria-label={label}>
      <div className="fb-group-head">
        <label className="fb-mode">
          <span>Match</span>
          <select
            className="select"
            value={node.mode}
            disabled={ctx.disabled}
            onChange={(e) =>
              ctx.onChange(mapNode(ctx.root, node.id, (g) => ({ ...g, mode: e.target.value as 'all' | 'any' }) as Node))
            }
          >
            <option value="all">all of</option>
            <option value="any">any of</option>
          </select>
          <span>these:</span>
        </label>
      </div>
      {errs.length > 0 && (
        <div className="error small" role="alert">
          {errs.join('; ')}
        </div>
      )}
      {node.children.length === 0 && (
        <p className="muted small fb-empty">
          {node.mode === 'all' ? 'No conditions: matches every contact.' : 'No conditions: matches no contact.'}
        </p>
      )}
      <ol className="fb-list">
        {node.children.map((c, i) => {
          const childPath = `${path}/${node.mode}/${i}`;
          const childLabel = `${label}, item ${i + 1}`;
          return (
            <li key={c.id} className={`fb-item fb-item-${c.kind}`}>
              {i > 0 && (
                <span className="fb-joiner" aria-hidden="true">
                  {node.mode === 'all' ? 'and' : 'or'}
                </span>
              )}
              <div className="fb-item-row">
                {c.kind === 'group' ? (
                  <GroupView ctx={ctx} node={c} path={childPath} depth={depth + 1} label={`${childLabel} (group)`} />
                ) : c.kind === 'topic' ? (
                  <TopicRow ctx={ctx} node={c} path={childPath} label={childLabel} />
                ) : c.kind === 'tag' ? (
                  <TagRow ctx={ctx} node={c} path={childPath} label={childLabel} />
                ) : c.kind === 'engagement' ? (
                  <EngagementRow ctx={ctx} node={c} path={childPath} label={childLabel} />
                ) : (
                  <FieldRow ctx={ctx} node={c} path={childPath} label={childLabel} />
                )}
                <ItemTools ctx={ctx} group={node} index={i} count={node.children.length} label={childLabel} />
              </div>
            </li>
          );
        })}
      </ol>
      {!ctx.disabled && (
        <div className="row fb-add">
          <Button size="sm" onClick={() => add(newCondition())}>
            + Condition
          </Button>
          <Button
            size="sm"
            onClick={() => add({ kind: 'topic', id: nextId++, topic: ctx.topics[0]?.id ?? '', subscribed: true })}
          >
            + Topic condition
          </Button>
          <Button size="sm" onClick={() => add({ kind: 'tag', id: nextId++, tag: ctx.tags?.[0] ?? '', has: true })}>
            + Tag condition
          </Button>
          <Button size="sm" onClick={() => add(newEngagement())}>
            + Engagement condition
          </Button>
          {depth < MAX_DEPTH - 1 && (
            <Button size="sm" onClick={() => add(newGroup(node.mode === 'all' ? 'any' : 'all', [newCondition()]))}>
              + Group
            </Button>
          )}
        </div>
      )}
    </div>
  );
}

/** The builder; `root` is always a group. `errors` are the API's, keyed by pointer with the /filter prefix. */
export function FilterBuilder({
  root,
  onChange,
  topics,
  tags,
  broadcasts = [],
  errors,
  disabled = false,
}: {
  root: Node;
  onChange: (n: Node) => void;
  topics: TopicOption[];
  /** The workspace's tags (GET /v1/tags), offered as the tag condition's suggestions. */
  tags?: string[];
  /** The broadcasts an engagement condition may name; without them it offers "any email" only. */
  broadcasts?: BroadcastOption[];
  errors: Record<string, string>;
  disabled?: boolean;
}) {
  const ctx: Ctx = { root, onChange, topics, tags, broadcasts, errors, disabled };
  if (root.kind !== 'group') return null;
  return <GroupView ctx={ctx} node={root} path="/filter" depth={1} label="Filter" />;
}
