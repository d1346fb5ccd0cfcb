import { contactEmail } from '../../audience/index.js';
import { CONSENT_FIELD, formQuestions, type Question } from '@formcast/form-appearance';
import type { Form } from '../forms/forms.schemas.js';

/**
 * What a submission says, checked against the form's questions (docs/forms.md, "Fields"): the same rules for the
 * hosted page, the embeds and the API. Mapped fields without a definition keep the rules of their contact property;
 * a question of `settings.fields` is checked by its type (a select or radio value must be one of its options, a
 * number must parse, a date must be a calendar date), and `required` is enforced. Unknown keys are ignored.
 */

export interface FieldProblem {
  field: string;
  message: string;
}

export type Value = string | number | boolean | string[];

const MAX_TEXT = 2000;
const MAX_LONG_TEXT = 10_000;
const MAX_NAME = 200;
const MAX_VALUES = 50;
const TRUE = new Set(['yes', 'on', 'true', '1']);

const isBlank = (v: unknown) =>
  v === undefined || v === null || v === '' || (Array.isArray(v) && v.every((x) => x === '' || x === null));
const chars = (s: string) => [...s].length;

/** A checked box, whatever sent it: a form posts its value ("yes", or "on" without one), JSON may say true. */
export function isTicked(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(isTicked);
  return v === true || v === 1 || (typeof v === 'string' && TRUE.has(v.trim().toLowerCase()));
}

function validDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

function requiredMessage(q: Question): string {
  if (q.property === 'email' || q.type === 'email') return 'Enter your email address.';
  if (q.type === 'select' || q.type === 'radio') return 'Choose an option.';
  if (q.type === 'checkbox') return q.options ? 'Choose at least one option.' : 'Tick this box to continue.';
  return 'Fill in this field.';
}

/** One question's value, or a problem. `undefined`: nothing to store. */
function readOne(q: Question, defined: boolean, raw: unknown): { value?: Value; error?: string } {
  const multi = q.type === 'checkbox' && q.options !== null;
  let v = raw;
  if (!multi && Array.isArray(v) && (v.length === 1 || q.property === 'email')) v = v[0];
  if (typeof v === 'string') v = v.trim();
  if (q.property === 'email' || (defined && q.type === 'email')) {
    if (isBlank(v)) return q.required ? { error: requiredMessage(q) } : {};
    const email = typeof v === 'string' ? contactEmail(v) : null;
    return email ? { value: email } : { error: 'Enter a valid email address, like name@example.com.' };
  }
  if (defined && q.type === 'checkbox' && !multi) {
    if (!isTicked(v)) return q.required ? { error: requiredMessage(q) } : {};
    return { value: true };
  }
  if (isBlank(v)) return q.required ? { error: requiredMessage(q) } : {};
  const nameLike = q.property === 'firstName' || q.property === 'lastName';
  if (!defined) {
    // A mapped field without a definition: the rules of its contact property (text, numbers or booleans from JSON, lists).
    const limit = nameLike ? MAX_NAME : MAX_TEXT;
    if (typeof v === 'string') return chars(v) > limit ? { error: `Use at most ${limit} characters.` } : { value: v };
    if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean')
      return nameLike ? { error: 'Enter text.' } : { value: v };
    if (
      Array.isArray(v) &&
      !nameLike &&
      v.length <= MAX_VALUES &&
      v.every((x) => typeof x === 'string' && chars(x) <= MAX_TEXT)
    )
      return { value: (v as string[]).map((x) => x.trim()) };
    return { error: 'This value is not valid.' };
  }
  switch (q.type) {
    case 'select':
    case 'radio':
      return typeof v === 'string' && q.options!.includes(v) ? { value: v } : { error: 'Choose one of the options.' };
    case 'checkbox': {
      const list = (Array.isArray(v) ? v : [v]).filter((x) => !isBlank(x));
      if (!list.every((x) => typeof x === 'string' && q.options!.includes(x.trim())))
        return { error: 'Choose from the options.' };
      const chosen = q.options!.filter((o) => list.some((x) => (x as string).trim() === o));
      return chosen.length ? { value: chosen } : q.required ? { error: requiredMessage(q) } : {};
    }
    case 'number': {
      const n =
        typeof v === 'number'
          ? v
          : typeof v === 'string' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)
            ? Number(v)
            : NaN;
      return Number.isFinite(n) ? { value: n } : { error: 'Enter a number.' };
    }
    case 'date':
      return typeof v === 'string' && validDate(v) ? { value: v } : { error: 'Enter a date, like 2026-01-31.' };
    default: {
      const limit = nameLike ? MAX_NAME : q.type === 'textarea' && !q.property ? MAX_LONG_TEXT : MAX_TEXT;
      const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
      if (typeof text !== 'string') return { error: 'Enter text.' };
      return chars(text) > limit ? { error: `Use at most ${limit} characters.` } : { value: text };
    }
  }
}

/**
 * The values of a submission by field name, the problems (one per field, in the order the form shows them), and
 * whether the consent box was ticked (required when the form shows one: `settings.appearance.consentText`).
 */
export function readAnswers(
  form: Pick<Form, 'type' | 'fieldMapping' | 'settings'>,
  raw: Record<string, unknown>,
): { values: Record<string, Value>; errors: FieldProblem[]; consented: boolean } {
  const values: Record<string, Value> = Object.create(null) as Record<string, Value>;
  const errors: FieldProblem[] = [];
  const defs = form.settings.fields ?? {};
  for (const q of formQuestions(form)) {
    const { value, error } = readOne(
      q,
      Object.hasOwn(defs, q.name),
      Object.hasOwn(raw, q.name) ? raw[q.name] : undefined,
    );
    if (error) errors.push({ field: q.name, message: error });
    else if (value !== undefined) values[q.name] = value;
  }
  const consentText = form.settings.appearance?.consentText;
  const consented = consentText !== undefined && isTicked(raw[CONSENT_FIELD]);
  if (consentText !== undefined && !consented)
    errors.push({ field: CONSENT_FIELD, message: 'Tick the box to agree before you continue.' });
  return { values, errors, consented };
}

/** One question's answer in a submission as the API lists it. */
export interface Answer {
  field: string;
  label: string;
  type: Question['type'];
  value: string | string[] | null;
}

/** The answers of a submission, question by question, as the form version it was made to asks them. */
export function answersOf(
  form: Pick<Form, 'type' | 'fieldMapping' | 'settings'>,
  data: Record<string, string | string[]>,
): Answer[] {
  return formQuestions(form).map((q) => ({
    field: q.name,
    label: q.label,
    type: q.type,
    value: (Object.hasOwn(data, q.name) ? data[q.name] : undefined) ?? null,
  }));
}

export interface QuestionSummary {
  field: string;
  label: string;
  type: Question['type'];
  /** Submissions that answered it (a single checkbox: that ticked it). */
  answered: number;
  /** select, radio and checkbox groups: each option with how many chose it, in the form's order. */
  options?: { value: string; count: number }[];
  /** Of those: answers that are none of the current options (given to an earlier version). */
  other?: number;
}

/** Counts a group's answers by the questions of one version (the summary endpoint: docs/forms.md, "Results"). */
export class AnswerCounter {
  total = 0;
  private readonly summaries: QuestionSummary[];
  private readonly byOption: Map<string, { value: string; count: number }>[];

  constructor(private readonly form: Pick<Form, 'type' | 'fieldMapping' | 'settings'>) {
    const questions = formQuestions(form);
    this.summaries = questions.map((q) => ({
      field: q.name,
      label: q.label,
      type: q.type,
      answered: 0,
      ...(q.options ? { options: q.options.map((value) => ({ value, count: 0 })), other: 0 } : {}),
    }));
    this.byOption = this.summaries.map((s) => new Map((s.options ?? []).map((o) => [o.value, o])));
  }

  add(data: Record<string, unknown>): void {
    this.total++;
    this.summaries.forEach((s, i) => {
      const v = Object.hasOwn(data, s.field) ? data[s.field] : undefined;
      if (isBlank(v) || (s.type === 'checkbox' && !s.options && !isTicked(v))) return;
      s.answered++;
      if (!s.options) return;
      let other = false;
      for (const x of new Set((Array.isArray(v) ? v : [v]).map(String))) {
        const option = this.byOption[i]!.get(x);
        if (option) option.count++;
        else other = true;
      }
      if (other) s.other!++;
    });
  }

  result(): QuestionSummary[] {
    return this.summaries;
  }
}
