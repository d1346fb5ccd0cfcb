/**
 * Automations (contract §15, docs/automations.md): the API's shapes, the editor's draft of a step tree and the
 * conversions between them, ISO 8601 durations as a number and a unit, the live checks of each step, and the
 * mapping of the API's error pointers (`/steps/2/then/0/from`) to the step they name.
 *
 * The editor edits a draft (DraftStep), not the API's JSON: a branch keeps its filter as the FilterBuilder's
 * tree (whose node ids must stay put while the user types), a wait its number and unit as typed, an update its
 * properties as rows. `toSteps` turns the draft back into the API's steps. Steps are named by their `id`
 * everywhere (selection, errors, stats, the simulator's path), never by their position, so they can move.
 */
import { api, unwrap, type ProblemFieldError } from '../api/client';
import { sentenceFor } from './problems';
import type { components, paths } from '../api/generated/schema';
import { newGroup, toFilter, toTree, type Filter, type Node } from '../components/FilterBuilder';
import { isBlockDocument } from '../components/email-editor/document';
import { forSaving, newDocument } from '../components/email-editor/operations';
import { count } from './format';

/* ------------------------------------------------------------------ API shapes (api/schema.d.ts) */

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** An automation as the API answers it: its trigger and steps as stored (every field there). */
export type Automation = Json<paths['/v1/automations/{automationId}']['get']['responses'][200]>;
export type AutomationStatus = Automation['status'];
export type Trigger = components['schemas']['AutomationTrigger'];
export type TriggerType = Trigger['type'];
export type Step = components['schemas']['AutomationStep'];
export type StepType = Step['type'];
/** What a request may give: ids, a send's fields and arms may be left out. */
export type TriggerInput = components['schemas']['AutomationTriggerInput'];
export type StepInput = components['schemas']['AutomationStepInput'];
type CreateBody = NonNullable<paths['/v1/automations']['post']['requestBody']>['content']['application/json'];
type UpdateBody = NonNullable<
  paths['/v1/automations/{automationId}']['put']['requestBody']
>['content']['application/json'];
type SimulateBody = NonNullable<
  paths['/v1/automations/{automationId}/simulate']['post']['requestBody']
>['content']['application/json'];

export type Run = Json<paths['/v1/automations/{automationId}/runs']['get']['responses'][200]>['data'][number];
export type RunStatus = Run['status'];
export type StepStats = Json<paths['/v1/automations/{automationId}/stats']['get']['responses'][200]>['steps'][number];
export type Simulation = Json<paths['/v1/automations/{automationId}/simulate']['post']['responses'][200]>;
export type SimulatedStep = Simulation['steps'][number];

const path = (automationId: string) => ({ params: { path: { automationId } } });

export const automationsApi = {
  list: async (query: { cursor?: string; limit?: number; status?: AutomationStatus }) =>
    unwrap(await api.GET('/v1/automations', { params: { query } })),
  get: async (id: string) => unwrap(await api.GET('/v1/automations/{automationId}', path(id))),
  create: async (body: CreateBody) => unwrap(await api.POST('/v1/automations', { body })),
  update: async (id: string, body: UpdateBody) =>
    unwrap(await api.PUT('/v1/automations/{automationId}', { ...path(id), body })),
  remove: async (id: string) => {
    unwrap(await api.DELETE('/v1/automations/{automationId}', path(id)));
  },
  activate: async (id: string) => unwrap(await api.POST('/v1/automations/{automationId}/activate', path(id))),
  pause: async (id: string) => unwrap(await api.POST('/v1/automations/{automationId}/pause', path(id))),
  stats: async (id: string) => unwrap(await api.GET('/v1/automations/{automationId}/stats', path(id))),
  runs: async (id: string, query: { cursor?: string; limit?: number; status?: RunStatus; contactId?: string }) =>
    unwrap(await api.GET('/v1/automations/{automationId}/runs', { params: { path: { automationId: id }, query } })),
  simulate: async (id: string, body: SimulateBody) =>
    unwrap(await api.POST('/v1/automations/{automationId}/simulate', { ...path(id), body })),
};

/* ------------------------------------------------------------------ Words */

export const TRIGGER_TYPES: { value: TriggerType; label: string; hint: string }[] = [
  {
    value: 'form.submitted',
    label: 'A form is submitted',
    hint: 'Someone signs up through one of your forms (any of its versions).',
  },
  {
    value: 'contact.subscribed',
    label: 'A contact subscribes',
    hint: 'A contact becomes subscribed, or subscribes to a topic.',
  },
  { value: 'contact.created', label: 'A contact is added', hint: 'Any new contact: a form, an import or the API.' },
  { value: 'segment.entered', label: 'A contact enters a segment', hint: 'A contact starts to match a segment.' },
  { value: 'event', label: 'A custom event is tracked', hint: 'POST /v1/events/track with this event name.' },
  { value: 'api', label: 'Started through the API', hint: 'POST /v1/automations/{id}/trigger with a contact id.' },
];

export const STEP_TYPES: { value: StepType; label: string; hint: string }[] = [
  { value: 'send', label: 'Send email', hint: 'An email like a broadcast, personalised with Liquid.' },
  { value: 'wait', label: 'Wait', hint: 'Minutes, hours or days before the next step.' },
  { value: 'branch', label: 'If / else', hint: 'Two paths: contacts who match a filter, and the rest.' },
  { value: 'split', label: 'A/B split', hint: '2 to 5 paths by percentage, the same for a contact every time.' },
  { value: 'topic', label: 'Topic', hint: 'Subscribe to or unsubscribe from a topic.' },
  { value: 'update', label: 'Update contact', hint: 'Set or remove properties of the contact.' },
  { value: 'webhook', label: 'Webhook', hint: 'A signed POST to your endpoint.' },
  { value: 'exit', label: 'Exit', hint: 'The run ends here.' },
];

export function stepLabel(type: StepType): string {
  return STEP_TYPES.find((t) => t.value === type)?.label ?? type;
}

export function triggerLabel(type: string): string {
  return TRIGGER_TYPES.find((t) => t.value === type)?.label ?? type;
}

/** The trigger in a few words, with the name of what it names when the pickers know it. */
export function triggerSummary(
  t: TriggerInput,
  names: { forms?: Map<string, string>; topics?: Map<string, string>; segments?: Map<string, string> } = {},
): string {
  const label = triggerLabel(t.type);
  const filtered = t.filter ? ', with a filter' : '';
  if (t.type === 'form.submitted' && t.formGroupId)
    return `${label}: ${names.forms?.get(t.formGroupId) ?? t.formGroupId}${filtered}`;
  if (t.type === 'contact.subscribed' && t.topicId)
    return `Subscribes to ${names.topics?.get(t.topicId) ?? t.topicId}${filtered}`;
  if (t.type === 'segment.entered' && t.segmentId)
    return `Enters ${names.segments?.get(t.segmentId) ?? t.segmentId}${filtered}`;
  if (t.type === 'event' && t.name) return `Event ${t.name}${filtered}`;
  return `${label}${filtered}`;
}

/* ------------------------------------------------------------------ Durations */

export type DurationUnit = 'minutes' | 'hours' | 'days' | 'weeks';
export const DURATION_UNITS: { value: DurationUnit; label: string; seconds: number }[] = [
  { value: 'minutes', label: 'minutes', seconds: 60 },
  { value: 'hours', label: 'hours', seconds: 3600 },
  { value: 'days', label: 'days', seconds: 86_400 },
  { value: 'weeks', label: 'weeks', seconds: 604_800 },
];

/** Seconds in an ISO 8601 duration of weeks, days, hours, minutes and seconds (`P1DT12H`), or null (years, months, junk). */
export function durationSeconds(iso: string): number | null {
  const m =
    /^([+-])?P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(
      iso.trim(),
    );
  if (!m || iso.trim() === 'P' || iso.trim().endsWith('T')) return null;
  const [, sign, w, d, h, min, s] = m;
  if ([w, d, h, min, s].every((x) => x === undefined)) return null;
  const total =
    Number(w ?? 0) * 604_800 + Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60 + Number(s ?? 0);
  return sign === '-' ? -total : total;
}

/** A duration as a number and the largest unit that divides it (36 hours, not 1.5 days). */
export function splitDuration(iso: string): { amount: string; unit: DurationUnit } {
  const s = durationSeconds(iso);
  if (s == null || s <= 0) return { amount: '', unit: 'days' };
  for (const u of [...DURATION_UNITS].reverse()) {
    if (s % u.seconds === 0) return { amount: String(s / u.seconds), unit: u.value };
  }
  return { amount: String(Math.max(1, Math.round(s / 60))), unit: 'minutes' };
}

/** A number and a unit as an ISO 8601 duration the API takes: `PT30M`, `PT3H`, `P2D` (weeks as days). */
export function joinDuration(amount: string, unit: DurationUnit): string {
  const n = Number(amount);
  if (!Number.isInteger(n) || n <= 0) return '';
  if (unit === 'minutes') return `PT${n}M`;
  if (unit === 'hours') return `PT${n}H`;
  if (unit === 'days') return `P${n}D`;
  return `P${n * 7}D`;
}

/** "2 days", "1 day 12 hours", "right away" for an ISO duration. */
export function describeDuration(iso: string): string {
  const s = durationSeconds(iso.replace(/^\+/, ''));
  if (s == null) return iso;
  if (s === 0) return 'right away';
  const parts: string[] = [];
  let rest = Math.abs(s);
  for (const [unit, size] of [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(count(n, unit));
      rest -= n * size;
    }
  }
  return parts.slice(0, 2).join(' ');
}

/* ------------------------------------------------------------------ The draft */

export type PropKind = 'text' | 'number' | 'boolean' | 'remove';
export interface PropRow {
  key: number;
  name: string;
  kind: PropKind;
  value: string;
}

export interface DraftSend {
  id: string;
  type: 'send';
  from: string;
  replyTo: string;
  subject: string;
  previewText: string;
  html: string;
  text: string;
  editorContent: unknown;
}
export interface DraftArm {
  key: number;
  percent: string;
  steps: DraftStep[];
}
export type DraftStep =
  | DraftSend
  | { id: string; type: 'wait'; amount: string; unit: DurationUnit }
  | { id: string; type: 'topic'; topicId: string; subscribed: boolean }
  | { id: string; type: 'update'; rows: PropRow[] }
  | { id: string; type: 'branch'; tree: Node; then: DraftStep[]; else: DraftStep[] }
  | { id: string; type: 'split'; arms: DraftArm[] }
  | { id: string; type: 'webhook'; url: string }
  | { id: string; type: 'exit' };

export interface DraftTrigger {
  type: TriggerType;
  formGroupId: string;
  topicId: string;
  segmentId: string;
  name: string;
  useFilter: boolean;
  tree: Node;
}

let nextKey = 1;

/** A fresh step id: `s-` and 8 random base-36 characters (letters, digits and `-`, as the API allows). */
export function newStepId(taken?: Set<string>): string {
  for (;;) {
    const bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    const id = `s-${Array.from(bytes, (b) => (b % 36).toString(36)).join('')}`;
    if (!taken?.has(id)) return id;
  }
}

function rootGroup(filter: Filter | null): Node {
  if (filter == null) return newGroup('all', []);
  const t = toTree(filter);
  return t.kind === 'group' ? t : newGroup('all', [t]);
}

export function toRows(props: Record<string, string | number | boolean | null>): PropRow[] {
  return Object.entries(props).map(([name, v]) => ({
    key: nextKey++,
    name,
    kind: v === null ? 'remove' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text',
    value: v === null ? '' : String(v),
  }));
}

export function newPropRow(): PropRow {
  return { key: nextKey++, name: '', kind: 'text', value: '' };
}

export function newArm(percent: number): DraftArm {
  return { key: nextKey++, percent: String(percent), steps: [] };
}

export function toDraft(s: Step): DraftStep {
  switch (s.type) {
    case 'send':
      return {
        id: s.id,
        type: 'send',
        from: s.from ?? '',
        replyTo: s.replyTo ?? '',
        subject: s.emailContent.subject ?? '',
        previewText: s.emailContent.previewText ?? '',
        html: s.emailContent.html ?? '',
        text: s.emailContent.text ?? '',
        editorContent: s.emailContent.editorContent ?? null,
      };
    case 'wait':
      return { id: s.id, type: 'wait', ...splitDuration(s.duration) };
    case 'topic':
      return { id: s.id, type: 'topic', topicId: s.topicId, subscribed: s.subscribed };
    case 'update':
      return { id: s.id, type: 'update', rows: toRows(s.properties) };
    case 'branch':
      return {
        id: s.id,
        type: 'branch',
        tree: rootGroup(s.filter),
        then: s.then.map(toDraft),
        else: s.else.map(toDraft),
      };
    case 'split':
      return {
        id: s.id,
        type: 'split',
        arms: s.arms.map((a) => ({ key: nextKey++, percent: String(a.percent), steps: a.steps.map(toDraft) })),
      };
    case 'webhook':
      return { id: s.id, type: 'webhook', url: s.url };
    default:
      return { id: s.id, type: 'exit' };
  }
}

/** A new step of a type, with the defaults a person would pick (a send: a new document of the visual editor). */
export function newStep(
  type: StepType,
  id: string,
  defaults: { from?: string; brandColor?: string | null } = {},
): DraftStep {
  switch (type) {
    case 'send':
      return {
        id,
        type,
        from: defaults.from ?? '',
        replyTo: '',
        subject: '',
        previewText: '',
        html: '',
        text: '',
        editorContent: newDocument({ brandColor: defaults.brandColor }),
      };
    case 'wait':
      return { id, type, amount: '1', unit: 'days' };
    case 'topic':
      return { id, type, topicId: '', subscribed: true };
    case 'update':
      return { id, type, rows: [newPropRow()] };
    case 'branch':
      return { id, type, tree: newGroup('all', []), then: [], else: [] };
    case 'split':
      return { id, type, arms: [newArm(50), newArm(50)] };
    case 'webhook':
      return { id, type, url: '' };
    default:
      return { id, type: 'exit' };
  }
}

function orNull(s: string): string | null {
  const t = s.trim();
  return t === '' ? null : t;
}

function rowValue(r: PropRow): string | number | boolean | null {
  if (r.kind === 'remove') return null;
  if (r.kind === 'boolean') return r.value === 'true';
  if (r.kind === 'number') {
    const n = Number(r.value);
    return r.value.trim() !== '' && Number.isFinite(n) ? n : r.value;
  }
  return r.value;
}

/** The draft as the API takes it: what the user left empty is sent empty, for the API to name (`/steps/0/topicId`). */
export function toStep(d: DraftStep): StepInput {
  switch (d.type) {
    case 'send': {
      // With a block document the service renders html and text from it (what is sent in them is ignored).
      const visual = isBlockDocument(d.editorContent);
      return {
        id: d.id,
        type: 'send',
        from: orNull(d.from),
        replyTo: orNull(d.replyTo),
        emailContent: {
          subject: d.subject === '' ? null : d.subject,
          html: visual || d.html === '' ? null : d.html,
          text: visual || d.text === '' ? null : d.text,
          previewText: d.previewText === '' ? null : d.previewText,
          editorContent: isBlockDocument(d.editorContent) ? forSaving(d.editorContent) : (d.editorContent ?? null),
        },
      };
    }
    case 'wait':
      return { id: d.id, type: 'wait', duration: joinDuration(d.amount, d.unit) };
    case 'topic':
      return { id: d.id, type: 'topic', topicId: d.topicId, subscribed: d.subscribed };
    case 'update': {
      const properties: Record<string, string | number | boolean | null> = {};
      for (const r of d.rows) if (r.name.trim()) properties[r.name.trim()] = rowValue(r);
      return { id: d.id, type: 'update', properties };
    }
    case 'branch':
      return { id: d.id, type: 'branch', filter: toFilter(d.tree), then: d.then.map(toStep), else: d.else.map(toStep) };
    case 'split':
      return {
        id: d.id,
        type: 'split',
        arms: d.arms.map((a) => ({ percent: Number(a.percent), steps: a.steps.map(toStep) })),
      };
    case 'webhook':
      return { id: d.id, type: 'webhook', url: d.url.trim() };
    default:
      return { id: d.id, type: 'exit' };
  }
}

export function toDraftTrigger(t: Trigger | null): DraftTrigger {
  return {
    type: t?.type ?? 'contact.created',
    formGroupId: t?.type === 'form.submitted' ? t.formGroupId : '',
    topicId: t?.type === 'contact.subscribed' ? (t.topicId ?? '') : '',
    segmentId: t?.type === 'segment.entered' ? t.segmentId : '',
    name: t?.type === 'event' ? t.name : '',
    useFilter: t?.filter != null,
    tree: rootGroup(t?.filter ?? null),
  };
}

export function toTrigger(t: DraftTrigger): TriggerInput {
  const filter = t.useFilter ? toFilter(t.tree) : null;
  switch (t.type) {
    case 'form.submitted':
      return { type: t.type, formGroupId: t.formGroupId, filter };
    case 'contact.subscribed':
      return t.topicId ? { type: t.type, topicId: t.topicId, filter } : { type: t.type, filter };
    case 'segment.entered':
      return { type: t.type, segmentId: t.segmentId, filter };
    case 'event':
      return { type: t.type, name: t.name.trim(), filter };
    default:
      return { type: t.type, filter };
  }
}

/* ------------------------------------------------------------------ Tree edits (by list and by step id) */

/** A list of steps: `root`, `<stepId>:then`, `<stepId>:else` or `<stepId>:arm:<n>`. */
export type ListId = string;

/** The lists directly under a step, with their ids and labels. */
export function childLists(s: DraftStep): { listId: ListId; steps: DraftStep[] }[] {
  if (s.type === 'branch')
    return [
      { listId: `${s.id}:then`, steps: s.then },
      { listId: `${s.id}:else`, steps: s.else },
    ];
  if (s.type === 'split') return s.arms.map((a, i) => ({ listId: `${s.id}:arm:${i}`, steps: a.steps }));
  return [];
}

function withList(s: DraftStep, listId: ListId, fn: (steps: DraftStep[]) => DraftStep[]): DraftStep {
  if (s.type === 'branch') {
    if (listId === `${s.id}:then`) return { ...s, then: fn(s.then) };
    if (listId === `${s.id}:else`) return { ...s, else: fn(s.else) };
    return { ...s, then: mapList(s.then, listId, fn), else: mapList(s.else, listId, fn) };
  }
  if (s.type === 'split') {
    return {
      ...s,
      arms: s.arms.map((a, i) => ({
        ...a,
        steps: listId === `${s.id}:arm:${i}` ? fn(a.steps) : mapList(a.steps, listId, fn),
      })),
    };
  }
  return s;
}

/** Applies `fn` to the list `listId` wherever it is in the tree. */
export function mapList(steps: DraftStep[], listId: ListId, fn: (steps: DraftStep[]) => DraftStep[]): DraftStep[] {
  if (listId === 'root') return fn(steps);
  return steps.map((s) => withList(s, listId, fn));
}

/** Replaces the step `id` with what `fn` returns (null removes it). */
export function mapStep(steps: DraftStep[], id: string, fn: (s: DraftStep) => DraftStep | null): DraftStep[] {
  const out: DraftStep[] = [];
  for (const s of steps) {
    if (s.id === id) {
      const r = fn(s);
      if (r) out.push(r);
      continue;
    }
    if (s.type === 'branch') out.push({ ...s, then: mapStep(s.then, id, fn), else: mapStep(s.else, id, fn) });
    else if (s.type === 'split')
      out.push({ ...s, arms: s.arms.map((a) => ({ ...a, steps: mapStep(a.steps, id, fn) })) });
    else out.push(s);
  }
  return out;
}

/** Moves the step `id` up (-1) or down (+1) within its own list. */
export function moveStep(steps: DraftStep[], id: string, delta: number): DraftStep[] {
  const i = steps.findIndex((s) => s.id === id);
  if (i >= 0) {
    const to = i + delta;
    if (to < 0 || to >= steps.length) return steps;
    const next = [...steps];
    [next[i], next[to]] = [next[to]!, next[i]!];
    return next;
  }
  return steps.map((s) => {
    if (s.type === 'branch') return { ...s, then: moveStep(s.then, id, delta), else: moveStep(s.else, id, delta) };
    if (s.type === 'split') return { ...s, arms: s.arms.map((a) => ({ ...a, steps: moveStep(a.steps, id, delta) })) };
    return s;
  });
}

export function insertStep(steps: DraftStep[], listId: ListId, index: number, step: DraftStep): DraftStep[] {
  return mapList(steps, listId, (list) => [...list.slice(0, index), step, ...list.slice(index)]);
}

/** Every step of the tree, depth first, in the order a reader sees them. */
export function allSteps(steps: DraftStep[]): DraftStep[] {
  const out: DraftStep[] = [];
  const walk = (list: DraftStep[]) => {
    for (const s of list) {
      out.push(s);
      for (const c of childLists(s)) walk(c.steps);
    }
  };
  walk(steps);
  return out;
}

export function findStep(steps: DraftStep[], id: string): DraftStep | null {
  return allSteps(steps).find((s) => s.id === id) ?? null;
}

/** Each step's JSON Pointer in the API's body: `/steps/2`, `/steps/2/then/0`, `/steps/3/arms/1/steps/0`. */
export function stepPointers(steps: DraftStep[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (list: DraftStep[], prefix: string) => {
    list.forEach((s, i) => {
      const p = `${prefix}/${i}`;
      out.set(s.id, p);
      if (s.type === 'branch') {
        walk(s.then, `${p}/then`);
        walk(s.else, `${p}/else`);
      }
      if (s.type === 'split') s.arms.forEach((a, n) => walk(a.steps, `${p}/arms/${n}/steps`));
    });
  };
  walk(steps, '/steps');
  return out;
}

/* ------------------------------------------------------------------ Problems */

/** Problems keyed by step id, then by the field's pointer inside the step (`/from`, `/emailContent/subject`, `` for the step). */
export type StepProblems = Record<string, Record<string, string>>;

export interface ServerProblems {
  steps: StepProblems;
  /** Pointers outside any step (`/name`, `/trigger/formGroupId`, `/steps`). */
  other: Record<string, string>;
}

/**
 * The API's errors of a request, each given to the deepest step whose pointer (in the body that was sent) starts
 * it: `/steps/2/then/0/from` is the `from` of the first step of the then-arm of the third step. From then on
 * they follow the step by its id, wherever it is moved.
 */
export function mapServerErrors(errors: ProblemFieldError[], pointers: Map<string, string>): ServerProblems {
  const byPointer = [...pointers.entries()].map(([id, p]) => ({ id, p })).sort((a, b) => b.p.length - a.p.length);
  const out: ServerProblems = { steps: {}, other: {} };
  for (const e of errors) {
    const hit = byPointer.find(({ p }) => e.path === p || e.path.startsWith(`${p}/`));
    if (hit) {
      const field = e.path.slice(hit.p.length);
      (out.steps[hit.id] ??= {})[field] ??= sentenceFor(e);
    } else out.other[e.path] ??= sentenceFor(e);
  }
  return out;
}

const PROPERTY_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/** The address in `Name <a@b.c>` or `a@b.c`, or null. */
export function addressOf(from: string): string | null {
  const t = from.trim();
  const m = /<([^<>]+)>\s*$/.exec(t);
  const addr = (m ? m[1]! : t).trim();
  return EMAIL.test(addr) ? addr : null;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The problems of one step that the console can see before the API does. */
export function checkStep(s: DraftStep, ctx: { verifiedDomains?: string[] | null }): Record<string, string> {
  const p: Record<string, string> = {};
  switch (s.type) {
    case 'send': {
      if (!s.from.trim()) p['/from'] = 'Enter the sender, such as News <news@example.com>.';
      else {
        const addr = addressOf(s.from);
        if (!addr) p['/from'] = 'This is not an email address (Name <name@example.com> or name@example.com).';
        else if (
          ctx.verifiedDomains &&
          !ctx.verifiedDomains.some((d) => addr.toLowerCase().endsWith(`@${d.toLowerCase()}`))
        ) {
          p['/from'] =
            `${addr.split('@')[1]} is not a verified domain of this workspace: the automation cannot be activated.`;
        }
      }
      if (s.replyTo.trim() && !EMAIL.test(s.replyTo.trim()))
        p['/replyTo'] = 'Enter one email address, or leave it empty.';
      if (!s.subject.trim()) p['/emailContent/subject'] = 'The subject is empty.';
      if (!isBlockDocument(s.editorContent) && !s.html.trim() && !s.text.trim())
        p['/emailContent/html'] = 'Write the HTML or the plain text.';
      break;
    }
    case 'wait': {
      const n = Number(s.amount);
      if (s.amount.trim() === '') p['/duration'] = 'Enter how long to wait.';
      else if (!Number.isInteger(n) || n < 1) p['/duration'] = 'Enter a whole number, 1 or more.';
      else if (n * DURATION_UNITS.find((u) => u.value === s.unit)!.seconds > 366 * 86_400)
        p['/duration'] = 'At most 366 days.';
      break;
    }
    case 'topic':
      if (!s.topicId) p['/topicId'] = 'Choose a topic.';
      break;
    case 'update': {
      const named = s.rows.filter((r) => r.name.trim() || r.value.trim());
      if (named.length === 0) p['/properties'] = 'Add at least one property to set or remove.';
      const seen = new Set<string>();
      for (const r of named) {
        const name = r.name.trim();
        if (!PROPERTY_KEY.test(name)) {
          p[`row:${r.key}`] =
            `"${name || '(empty)'}": a key is letters, digits and _ (up to 64), not starting with a digit.`;
          continue;
        }
        if (seen.has(name)) {
          p[`row:${r.key}`] = `"${name}" is listed twice.`;
          continue;
        }
        seen.add(name);
        if (r.kind === 'number' && (r.value.trim() === '' || !Number.isFinite(Number(r.value))))
          p[`row:${r.key}`] = `"${name}": enter a number.`;
      }
      break;
    }
    case 'branch':
      break;
    case 'split': {
      if (s.arms.length < 2 || s.arms.length > 5) p['/arms'] = 'A split has 2 to 5 paths.';
      let sum = 0;
      s.arms.forEach((a, i) => {
        const n = Number(a.percent);
        if (a.percent.trim() === '' || !Number.isInteger(n) || n < 1 || n > 99)
          p[`/arms/${i}/percent`] = 'A whole percentage from 1 to 99.';
        else sum += n;
      });
      if (!Object.keys(p).some((k) => k.endsWith('/percent')) && sum !== 100)
        p['/arms'] = `The percentages add up to ${sum}, not 100.`;
      break;
    }
    case 'webhook':
      if (!s.url.trim()) p['/url'] = 'Enter the URL to POST to.';
      else if (!isHttpUrl(s.url.trim()))
        p['/url'] = 'Enter an absolute http(s) URL, such as https://hooks.example.com/onboarded.';
      break;
    default:
      break;
  }
  return p;
}

/** Every step's live problems, plus a note on steps that can never be reached (after an exit in the same list). */
export function checkSteps(steps: DraftStep[], ctx: { verifiedDomains?: string[] | null }): StepProblems {
  const out: StepProblems = {};
  const walk = (list: DraftStep[]) => {
    let exited = false;
    for (const s of list) {
      const p = checkStep(s, ctx);
      if (exited) p[''] = 'Never reached: an exit step comes before it.';
      if (Object.keys(p).length) out[s.id] = p;
      if (s.type === 'exit') exited = true;
      for (const c of childLists(s)) walk(c.steps);
    }
  };
  walk(steps);
  return out;
}

export function checkTrigger(t: DraftTrigger): Record<string, string> {
  const p: Record<string, string> = {};
  if (t.type === 'form.submitted' && !t.formGroupId) p['/trigger/formGroupId'] = 'Choose a form.';
  if (t.type === 'segment.entered' && !t.segmentId) p['/trigger/segmentId'] = 'Choose a segment.';
  if (t.type === 'event' && !t.name.trim()) p['/trigger/name'] = 'Enter the event name.';
  else if (t.type === 'event' && !/^[A-Za-z0-9][A-Za-z0-9 ._:/-]{0,63}$/.test(t.name.trim()))
    p['/trigger/name'] = 'Up to 64 letters, digits, spaces and . _ : / -, starting with a letter or digit.';
  return p;
}

/** The filter in a few words: "all of 3 conditions". */
export function describeFilter(f: Filter | null): string {
  if (!f) return 'every contact';
  if ('field' in f)
    return `${f.field.replace(/^properties\./, '')} ${f.op} ${f.value === undefined ? '' : JSON.stringify(f.value)}`.trim();
  if ('topic' in f) return f.subscribed === false ? 'not subscribed to a topic' : 'subscribed to a topic';
  if ('tag' in f) return f.has ? `tagged ${f.tag}` : `not tagged ${f.tag}`;
  if ('engagement' in f) {
    const what = f.happened
      ? { delivered: 'was sent', opened: 'opened', clicked: 'clicked' }[f.engagement]
      : { delivered: 'was not sent', opened: 'did not open', clicked: 'did not click' }[f.engagement];
    const when = f.withinDays === undefined ? '' : ` in the last ${count(f.withinDays, 'day')}`;
    return `${what} ${f.broadcastId ? 'a broadcast' : 'an email'}${when}`;
  }
  const [mode, items] = 'all' in f ? (['all', f.all] as const) : (['any', f.any] as const);
  if (items.length === 0) return mode === 'all' ? 'every contact' : 'no contact';
  if (items.length === 1) return describeFilter(items[0]!);
  return `${mode} of ${count(items.length, 'condition')}`;
}
