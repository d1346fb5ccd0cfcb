import crypto from 'node:crypto';
import type { FieldError } from '../../errors/errors.js';
import { parseMailbox } from '../../lib/email.js';
import { liquidErrors } from '../../lib/liquid.js';
import { isBlockDocument } from '../../mail/blocks/grammar.js';
import { validateDocument } from '../../mail/blocks/validate.js';
import { validateFilter, type Filter } from '../../audience/index.js';

/**
 * An automation's trigger and step tree (docs/automations.md, contract §15): the types, the checks of their shape
 * (with a JSON Pointer for every problem), and the walk a run makes through them. Pure: no database, no clock.
 */

export const TRIGGER_TYPES = [
  'form.submitted',
  'contact.subscribed',
  'contact.created',
  'segment.entered',
  'event',
  'api',
] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const STEP_TYPES = ['wait', 'send', 'topic', 'update', 'branch', 'split', 'webhook', 'exit'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export interface Trigger {
  type: TriggerType;
  formGroupId?: string;
  topicId?: string;
  segmentId?: string;
  name?: string;
  filter?: Filter | null;
}

export interface EmailContent {
  subject: string | null;
  html: string | null;
  text: string | null;
  previewText: string | null;
  editorContent: unknown;
}

export type Step =
  | { id: string; type: 'wait'; duration: string }
  | { id: string; type: 'send'; from: string | null; replyTo: string | null; emailContent: EmailContent }
  | { id: string; type: 'topic'; topicId: string; subscribed: boolean }
  | { id: string; type: 'update'; properties: Record<string, string | number | boolean | null> }
  | { id: string; type: 'branch'; filter: Filter; then: Step[]; else: Step[] }
  | { id: string; type: 'split'; arms: { percent: number; steps: Step[] }[] }
  | { id: string; type: 'webhook'; url: string }
  | { id: string; type: 'exit' };

export const MAX_STEPS = 100;
export const MAX_STEP_DEPTH = 6;
const MAX_WAIT_MS = 366 * 86_400_000;
const STEP_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY_BYTES = 2 * 1024 * 1024;

// ---- durations ---------------------------------------------------------------------------------

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** An ISO 8601 duration of weeks, days, hours, minutes and seconds in milliseconds (years and months vary: refused). */
export function durationMs(text: string): number | null {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return null;
  const [w, d, h, min, s] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  const ms = ((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + s!) * 1000;
  return Number.isSafeInteger(ms) ? ms : null;
}

/** Milliseconds as an ISO 8601 duration (`P2DT3H`, `PT0S`): the simulator's offsets. */
export function isoDuration(ms: number): string {
  let s = Math.round(ms / 1000);
  const d = Math.floor(s / 86_400);
  s -= d * 86_400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  return `P${d ? `${d}D` : ''}${time ? `T${time}` : d ? '' : 'T0S'}`;
}

// ---- checking the shape ------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 64;

function only(o: Record<string, unknown>, keys: readonly string[], path: string, errors: FieldError[]): void {
  for (const k of Object.keys(o))
    if (!keys.includes(k)) errors.push({ path: `${path}/${k}`, message: 'is not a field of this step' });
}

/** Checks a trigger's shape; returns it normalised (filter null when absent). */
export function checkTrigger(raw: unknown, errors: FieldError[], path = '/trigger'): Trigger | null {
  if (!isObject(raw)) return (errors.push({ path, message: 'must be an object with a type' }), null);
  const type = raw.type as TriggerType;
  if (!TRIGGER_TYPES.includes(type))
    return (errors.push({ path: `${path}/type`, message: `must be one of ${TRIGGER_TYPES.join(', ')}` }), null);
  const need: Partial<Record<TriggerType, keyof Trigger>> = {
    'form.submitted': 'formGroupId',
    'segment.entered': 'segmentId',
    event: 'name',
  };
  const allowed = [
    'type',
    'filter',
    ...(need[type] ? [need[type]!] : []),
    ...(type === 'contact.subscribed' ? ['topicId'] : []),
  ];
  for (const k of Object.keys(raw))
    if (!allowed.includes(k)) errors.push({ path: `${path}/${k}`, message: `is not a field of a ${type} trigger` });
  const t: Trigger = { type, filter: null };
  const key = need[type];
  if (key) {
    if (!isId(raw[key]) || (key === 'name' && !/^[A-Za-z0-9][A-Za-z0-9 ._:/-]*$/.test(raw[key] as string)))
      errors.push({
        path: `${path}/${key}`,
        message: key === 'name' ? 'must be an event name (1-64 letters, digits, space . _ : / -)' : 'must be an id',
      });
    else (t as unknown as Record<string, unknown>)[key] = raw[key];
  }
  if (type === 'contact.subscribed' && raw.topicId !== undefined && raw.topicId !== null) {
    if (!isId(raw.topicId)) errors.push({ path: `${path}/topicId`, message: 'must be a topic id' });
    else t.topicId = raw.topicId as string;
  }
  if (raw.filter !== undefined && raw.filter !== null) {
    const fe = validateFilter(raw.filter, `${path}/filter`);
    if (fe.length) errors.push(...fe);
    else t.filter = raw.filter as Filter;
  }
  return t;
}

/**
 * A send step's content. A block document in `editorContent` (contract §16) is checked here (its errors at their
 * pointers under `…/emailContent/editorContent`) and its html and text sent beside it are left out: the service renders
 * them from the document (AutomationsService, renderDocuments) before anything is stored.
 */
function content(raw: unknown, path: string, errors: FieldError[]): EmailContent {
  const c: EmailContent = { subject: null, html: null, text: null, previewText: null, editorContent: null };
  if (raw === undefined || raw === null) return c;
  if (!isObject(raw)) return (errors.push({ path, message: 'must be an object' }), c);
  only(raw, ['subject', 'html', 'text', 'previewText', 'editorContent'], path, errors);
  const limits = { subject: 998, previewText: 500, html: MAX_BODY_BYTES, text: MAX_BODY_BYTES } as const;
  const document = isBlockDocument(raw.editorContent);
  if (document) errors.push(...validateDocument(raw.editorContent, `${path}/editorContent`));
  for (const k of document
    ? (['subject', 'previewText'] as const)
    : (['subject', 'html', 'text', 'previewText'] as const)) {
    const v = raw[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') errors.push({ path: `${path}/${k}`, message: 'must be a string or null' });
    else if ((k === 'html' || k === 'text' ? Buffer.byteLength(v, 'utf8') : v.length) > limits[k])
      errors.push({
        path: `${path}/${k}`,
        message: `must be at most ${limits[k]} ${k === 'html' || k === 'text' ? 'bytes' : 'characters'}`,
      });
    else c[k] = v;
  }
  c.editorContent = raw.editorContent ?? null;
  errors.push(...liquidErrors({ subject: c.subject, html: c.html, text: c.text, previewText: c.previewText }, path));
  return c;
}

class StepChecker {
  count = 0;
  readonly ids = new Map<string, string>();
  constructor(readonly errors: FieldError[]) {}

  list(raw: unknown, path: string, depth: number): Step[] {
    if (!Array.isArray(raw)) return (this.errors.push({ path, message: 'must be an array of steps' }), []);
    if (depth > MAX_STEP_DEPTH)
      return (this.errors.push({ path, message: `branches and splits nest at most ${MAX_STEP_DEPTH} deep` }), []);
    return raw.flatMap((s, i) => {
      const step = this.step(s, `${path}/${i}`, depth);
      return step ? [step] : [];
    });
  }

  step(raw: unknown, path: string, depth: number): Step | null {
    const e = this.errors;
    if (++this.count > MAX_STEPS) {
      if (this.count === MAX_STEPS + 1) e.push({ path, message: `an automation has at most ${MAX_STEPS} steps` });
      return null;
    }
    if (!isObject(raw)) return (e.push({ path, message: 'must be a step object with a type' }), null);
    let id = raw.id;
    if (id === undefined || id === null) id = `s${crypto.randomBytes(5).toString('hex')}`;
    else if (typeof id !== 'string' || !STEP_ID.test(id))
      return (e.push({ path: `${path}/id`, message: 'must be 1-64 letters, digits, - or _' }), null);
    if (this.ids.has(id as string))
      e.push({
        path: `${path}/id`,
        message: `is the id of the step at ${this.ids.get(id as string)} too; step ids are unique within an automation`,
      });
    this.ids.set(id as string, path);
    const sid = id as string;
    switch (raw.type) {
      case 'wait': {
        only(raw, ['id', 'type', 'duration'], path, e);
        const ms = typeof raw.duration === 'string' ? durationMs(raw.duration) : null;
        if (ms === null)
          e.push({
            path: `${path}/duration`,
            message: 'must be an ISO 8601 duration of weeks, days, hours, minutes or seconds, such as P2D or PT3H',
          });
        else if (ms <= 0 || ms > MAX_WAIT_MS)
          e.push({ path: `${path}/duration`, message: 'must be more than 0 and at most 366 days' });
        return { id: sid, type: 'wait', duration: String(raw.duration) };
      }
      case 'send': {
        only(raw, ['id', 'type', 'from', 'replyTo', 'emailContent'], path, e);
        const from = raw.from ?? null;
        const replyTo = raw.replyTo ?? null;
        if (from !== null && (typeof from !== 'string' || !parseMailbox(from)))
          e.push({
            path: `${path}/from`,
            message: 'must be an email address, optionally with a display name: "Name <addr@domain>"',
          });
        if (replyTo !== null && (typeof replyTo !== 'string' || !parseMailbox(replyTo)))
          e.push({ path: `${path}/replyTo`, message: 'must be an email address' });
        return {
          id: sid,
          type: 'send',
          from: from as string | null,
          replyTo: replyTo as string | null,
          emailContent: content(raw.emailContent, `${path}/emailContent`, e),
        };
      }
      case 'topic':
        only(raw, ['id', 'type', 'topicId', 'subscribed'], path, e);
        if (!isId(raw.topicId)) e.push({ path: `${path}/topicId`, message: 'must be a topic id' });
        if (typeof raw.subscribed !== 'boolean')
          e.push({ path: `${path}/subscribed`, message: 'must be true or false' });
        return { id: sid, type: 'topic', topicId: String(raw.topicId), subscribed: raw.subscribed === true };
      case 'update': {
        only(raw, ['id', 'type', 'properties'], path, e);
        const p = raw.properties;
        if (!isObject(p) || Object.keys(p).length === 0)
          e.push({
            path: `${path}/properties`,
            message: 'must be an object of at least one property (null removes one)',
          });
        else {
          for (const k of Object.keys(p)) {
            if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(k))
              e.push({
                path: `${path}/properties/${k}`,
                message: 'is not a property name (letters, digits, _; up to 64)',
              });
            const v = p[k];
            if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
              e.push({ path: `${path}/properties/${k}`, message: 'must be a string, number, boolean or null' });
          }
        }
        return {
          id: sid,
          type: 'update',
          properties: isObject(p) ? (p as Record<string, string | number | boolean | null>) : {},
        };
      }
      case 'branch': {
        only(raw, ['id', 'type', 'filter', 'then', 'else'], path, e);
        const fe = validateFilter(raw.filter, `${path}/filter`);
        e.push(...fe);
        return {
          id: sid,
          type: 'branch',
          filter: raw.filter as Filter,
          then: this.list(raw.then ?? [], `${path}/then`, depth + 1),
          else: this.list(raw.else ?? [], `${path}/else`, depth + 1),
        };
      }
      case 'split': {
        only(raw, ['id', 'type', 'arms'], path, e);
        if (!Array.isArray(raw.arms) || raw.arms.length < 2 || raw.arms.length > 5) {
          e.push({ path: `${path}/arms`, message: 'must be 2 to 5 arms' });
          return null;
        }
        const arms = raw.arms.map((a: unknown, i: number) => {
          const ap = `${path}/arms/${i}`;
          if (!isObject(a))
            return (e.push({ path: ap, message: 'must be an object { percent, steps }' }), { percent: 0, steps: [] });
          only(a, ['percent', 'steps'], ap, e);
          if (!Number.isInteger(a.percent) || (a.percent as number) < 1 || (a.percent as number) > 99)
            e.push({ path: `${ap}/percent`, message: 'must be a whole number from 1 to 99' });
          return { percent: Number(a.percent), steps: this.list(a.steps ?? [], `${ap}/steps`, depth + 1) };
        });
        const sum = arms.reduce(
          (n: number, a: { percent: number }) => n + (Number.isFinite(a.percent) ? a.percent : 0),
          0,
        );
        if (sum !== 100) e.push({ path: `${path}/arms`, message: `percents must sum to 100 (they sum to ${sum})` });
        return { id: sid, type: 'split', arms };
      }
      case 'webhook':
        only(raw, ['id', 'type', 'url'], path, e);
        if (typeof raw.url !== 'string' || raw.url.length > 2048 || !/^https?:\/\//i.test(raw.url))
          e.push({ path: `${path}/url`, message: 'must be an http(s) URL of at most 2048 characters' });
        return { id: sid, type: 'webhook', url: String(raw.url) };
      case 'exit':
        only(raw, ['id', 'type'], path, e);
        return { id: sid, type: 'exit' };
      default:
        e.push({ path: `${path}/type`, message: `must be one of ${STEP_TYPES.join(', ')}` });
        return null;
    }
  }
}

/** Checks a step tree's shape: the steps with every id filled in, and one error per problem. */
export function checkSteps(raw: unknown, errors: FieldError[], path = '/steps'): Step[] {
  return new StepChecker(errors).list(raw, path, 1);
}

// ---- the walk ----------------------------------------------------------------------------------

interface Node {
  step: Step;
  /** Its JSON Pointer in the tree (`/steps/2/then/0`): where activation reports a problem of it. */
  path: string;
  /** The step after it (after its arms, for a branch or split), or null at the end of the automation. */
  next: string | null;
}

/** The step tree indexed by id: where a run goes from each step (a version's steps, once per process). */
export class Program {
  readonly first: string | null;
  private readonly nodes = new Map<string, Node>();

  constructor(readonly steps: readonly Step[]) {
    this.first = this.index(steps, '/steps', null);
  }

  private index(list: readonly Step[], path: string, after: string | null): string | null {
    list.forEach((step, i) => {
      const next = list[i + 1]?.id ?? after;
      this.nodes.set(step.id, { step, path: `${path}/${i}`, next });
      if (step.type === 'branch') {
        this.index(step.then, `${path}/${i}/then`, next);
        this.index(step.else, `${path}/${i}/else`, next);
      } else if (step.type === 'split') {
        step.arms.forEach((a, n) => this.index(a.steps, `${path}/${i}/arms/${n}/steps`, next));
      }
    });
    return list[0]?.id ?? after;
  }

  node(id: string): Node | undefined {
    return this.nodes.get(id);
  }

  all(): Node[] {
    return [...this.nodes.values()];
  }

  /** The step a run goes to after `id`, given the arm it took there (branches and splits). */
  after(id: string, arm?: 'then' | 'else' | number): string | null {
    const n = this.nodes.get(id)!;
    const s = n.step;
    if (s.type === 'branch' && arm !== undefined) return (arm === 'then' ? s.then : s.else)[0]?.id ?? n.next;
    if (s.type === 'split' && typeof arm === 'number') return s.arms[arm]!.steps[0]?.id ?? n.next;
    return n.next;
  }
}

/**
 * The arm of a split a contact takes: a hash of the contact and the step, so the same contact takes the same arm
 * every time (and in the simulator), and arms of different splits are independent of each other.
 */
export function splitArm(contactKey: string, stepId: string, percents: readonly number[]): number {
  const h = crypto.createHash('sha256').update(`${contactKey}\u0000${stepId}`).digest();
  const point = (h.readUInt32BE(0) / 0x1_0000_0000) * 100;
  let sum = 0;
  for (let i = 0; i < percents.length; i++) {
    sum += percents[i]!;
    if (point < sum) return i;
  }
  return percents.length - 1;
}
