/**
 * The console's one way of turning an API problem (application/problem+json: `code`, `detail`, `errors[]` with a JSON
 * pointer, and the `keyword`/`params` the API adds to each) into sentences for people: each error next to the field
 * it is about, named by that field's label, and a banner only for what no field shows. No error code, JSON pointer,
 * HTTP method or scope name reaches the page.
 *
 * A form passes the fields it shows, pointer → label (`{ '/name': 'Name', '/emails/*': 'Address' }`); `*` stands for
 * one segment (an array index), and an error under a labelled pointer (`/settings/x/y` under `/settings/x`) goes to it;
 * `/x/**` takes every error under `/x`, each kept at its own pointer (an editor that shows errors where they are).
 * `fields` also holds every error at its own pointer, for such editors.
 */
import { ApiError, type Problem, type ProblemFieldError } from '../api/client';
import { count } from './format';

export interface FieldLabel {
  label: string;
  /** A sentence of the form's own for one keyword (`pattern`: "Use lowercase letters, digits and hyphens."). */
  messages?: Partial<Record<string, string>>;
  /** The item's number follows the label ("Address 2" for `/emails/1`): set for `*` pointers. */
  numbered?: boolean;
}
export type FieldLabels = Record<string, string | FieldLabel>;

export interface DescribedProblem {
  /** Sentences by the pointer the form labelled (or the error's own pointer when no label matched). */
  fields: Record<string, string>;
  /** The banner's lead: null when every error sits next to a field the form shows. */
  message: string | null;
  /** Sentences for errors no shown field takes (the banner lists them). */
  rest: string[];
}

/** Names for pointers the form does not label (the banner still names the field in words). */
const KNOWN: Record<string, string> = {
  name: 'Name',
  email: 'Email address',
  emails: 'Email addresses',
  from: 'From',
  replyTo: 'Reply-to',
  subject: 'Subject',
  previewText: 'Preview text',
  html: 'HTML',
  text: 'Plain text',
  emailContent: 'The email',
  editorContent: 'The email',
  slug: 'Address',
  url: 'URL',
  sendAt: 'Send time',
  segmentId: 'Segment',
  topicId: 'Topic',
  topics: 'Topics',
  tags: 'Tags',
  tag: 'Tag',
  ids: 'Selected contacts',
  role: 'Role',
  scopes: 'Permissions',
  password: 'Password',
  description: 'Description',
  eventTypes: 'Events',
  defaultFrom: 'Default sender',
  postalAddress: 'Postal address',
  filter: 'Filter',
  trigger: 'Trigger',
  steps: 'Steps',
  firstName: 'First name',
  lastName: 'Last name',
  properties: 'Properties',
  fieldMapping: 'Field mapping',
  doubleOptInEmailId: 'Confirmation email',
  defaultSubscription: 'Default subscription',
  timezone: 'Time zone',
  contactId: 'Contact',
  file: 'File',
  columns: 'Columns',
  header: 'The file’s first line',
};

/** Codes whose error belongs to a field the form may show. */
const CODE_POINTER: Record<string, string> = {
  slug_taken: '/slug',
  alias_taken: '/alias',
  contact_exists: '/email',
  domain_exists: '/name',
  sender_domain_not_verified: '/from',
};

/** What a code means, in a sentence (the problem's `detail` is written for programs). */
const CODE_SENTENCE: Record<string, string> = {
  not_found: 'This no longer exists: it may have been deleted.',
  unauthorized: 'You are signed out. Sign in again.',
  csrf_failed: 'Your session changed in another tab. Reload the page and try again.',
  insufficient_scope: 'Your role does not allow this. An admin or the owner of the workspace can do it.',
  slug_taken: 'Another form already uses this address.',
  alias_taken: 'Another template already uses this alias.',
  contact_exists: 'A contact with this email address already exists.',
  domain_exists: 'This domain has already been added.',
  resource_in_use: 'It is still in use, so it cannot be deleted.',
  broadcast_not_editable: 'This broadcast can no longer be changed: it is sending or has been sent.',
  form_not_editable: 'This version is published, so it cannot be changed: create a new version to edit it.',
  form_already_published: 'This form is already published.',
  form_not_published: 'Publish this form before creating a new version of it.',
  draft_version_exists: 'This form already has a draft version: edit that one.',
  invalid_state: 'This cannot be done in its current state.',
  ab_winner_chosen: 'The winning variant has already been chosen.',
  ab_test_missing: 'This broadcast has no A/B test.',
  idempotency_conflict: 'The same request is still being handled. Wait a moment.',
  payload_too_large: 'This is larger than the server accepts.',
  unsupported_media_type: 'The server did not accept this kind of content.',
  invalid_json: 'The request could not be read by the server.',
  sender_domain_not_verified:
    'The sender’s address is not on a verified domain. Verify its domain under Domains first.',
  invalid_reference: 'Something it refers to no longer exists. Choose another.',
  form_incomplete: 'The form is not ready yet:',
  broadcast_incomplete: 'The broadcast is not ready to go out:',
  validation_failed: 'Some details need fixing:',
  rate_limited: 'Too many requests in a short time. Wait a moment and try again.',
  internal_error: 'Something went wrong on the server. Try again; if it keeps happening, tell your administrator.',
  unavailable: 'The server cannot reach its database right now. Try again in a moment.',
};

/** Plain sentences for the preflight checks a send or schedule fails on (`keyword: preflight_<id>`). */
export const PREFLIGHT_SENTENCE: Record<string, string> = {
  from: 'Add a sender (From).',
  subject: 'Add a subject.',
  body: 'Add the content of the email.',
  sender_domain: 'The sender’s address must be on a verified domain.',
  render: 'The email takes too long to render: simplify its template.',
};

function labelOf(l: string | FieldLabel): FieldLabel {
  return typeof l === 'string' ? { label: l } : l;
}

function matches(pattern: string, pointer: string): boolean {
  const a = pattern.split('/');
  const b = pointer.split('/');
  return a.length === b.length && a.every((s, i) => s === '*' || s === b[i]);
}

/** The labelled pointer an error goes to: its own, a `*` pattern, or the nearest labelled ancestor. */
function placeOf(pointer: string, labels: FieldLabels): string | undefined {
  for (let p = pointer; p; p = p.slice(0, p.lastIndexOf('/'))) {
    if (p in labels) return p;
    const pattern = Object.keys(labels).find((k) => k.includes('*') && !k.endsWith('/**') && matches(k, p));
    if (pattern) return pattern;
    if (p !== pointer && `${p}/**` in labels) return `${p}/**`;
  }
  return undefined;
}

/** "Address 2" for `/emails/1`: the field's name, with the item's number when the pointer ends in an index. */
function nameFor(pointer: string, label: FieldLabel | undefined): string {
  const parts = pointer.split('/').filter(Boolean);
  const index = parts.length && /^\d+$/.test(parts[parts.length - 1]!) ? Number(parts.pop()) : null;
  let name = label?.label;
  if (!name) {
    const known = [...parts].reverse().find((s) => !/^\d+$/.test(s) && KNOWN[s]);
    name = known ? KNOWN[known]! : parts.length ? humanize(parts[parts.length - 1]!) : 'This';
  }
  return index === null || (label && !label.numbered) ? name : `${name} ${index + 1}`;
}

function humanize(segment: string): string {
  const words = segment
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const lower = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);

/** A program's message made readable: no pointers, HTTP calls or schema jargon in it. */
export function plain(message: string): string {
  let m = message
    .replace(/\s*\([^)]*(\/v1\/|POST |PUT |GET |DELETE |PATCH )[^)]*\)/g, '')
    .replace(/\s*:?\s*(POST|PUT|GET|DELETE|PATCH) \/v1\/\S*( \{[^}]*\})?/g, '')
    .replace(/(^|\s)\/[A-Za-z0-9_~/.-]+/g, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  if (!m) return 'Something is not right.';
  m = m.charAt(0).toUpperCase() + m.slice(1);
  return /[.!?:]$/.test(m) ? m : `${m}.`;
}

function formatSentence(name: string, format: string): string {
  switch (format) {
    case 'email':
    case 'idn-email':
      return `${name} must be an email address, like jane@example.com.`;
    case 'mailbox':
      return `${name} must be an email address, like news@example.com or “Acme <news@example.com>”.`;
    case 'uri':
    case 'url':
    case 'http-url':
      return `${name} must be a full web address, starting with https://.`;
    case 'date-time':
      return `${name} must be a date and a time.`;
    case 'date':
      return `${name} must be a date.`;
    case 'hostname':
      return `${name} must be a domain name, like example.com.`;
    default:
      return `${name} is not written the expected way.`;
  }
}

/** One field error as a sentence naming the field. */
export function sentenceFor(e: ProblemFieldError, label?: FieldLabel): string {
  const name = nameFor(e.path, label);
  const keyword = e.keyword ?? inferKeyword(e.message);
  const own = keyword ? label?.messages?.[keyword] : undefined;
  if (own) return own;
  const limit = Number(e.params?.limit);
  switch (keyword) {
    case 'required':
      return `${name} is required.`;
    case 'minLength':
      return limit <= 1 ? `${name} cannot be empty.` : `${name} needs at least ${count(limit, 'character')}.`;
    case 'maxLength':
      return `${name} can be at most ${count(limit, 'character')} long.`;
    case 'minItems':
      return limit <= 1
        ? `Choose at least one for ${lower(name)}.`
        : `${name} needs at least ${count(limit, 'entry')}.`;
    case 'maxItems':
      return `${name} can have at most ${count(limit, 'entry')}.`;
    case 'minimum':
      return `${name} must be at least ${limit.toLocaleString()}.`;
    case 'exclusiveMinimum':
      return `${name} must be more than ${limit.toLocaleString()}.`;
    case 'maximum':
      return `${name} must be at most ${limit.toLocaleString()}.`;
    case 'exclusiveMaximum':
      return `${name} must be less than ${limit.toLocaleString()}.`;
    case 'format':
      return formatSentence(name, String(e.params?.format ?? ''));
    case 'pattern':
      return `${name} is not written the expected way.`;
    case 'enum':
      return `Choose one of the offered options for ${lower(name)}.`;
    case 'type':
    case 'anyOf':
    case 'oneOf':
      return `${name} is not valid.`;
    case 'additionalProperties':
      return e.params?.readOnly ? `${name} cannot be changed.` : `${name} is not accepted here.`;
    case 'future':
      return `${name} must be in the future. To send right away, use “Send now”.`;
    case 'reference':
      return `${name} no longer exists. Choose another.`;
    case 'verified_domain':
      return `${name} must be an address on one of your verified domains.`;
    case 'blank':
      return `${name} cannot be empty.`;
  }
  if (keyword?.startsWith('preflight_') && PREFLIGHT_SENTENCE[keyword.slice('preflight_'.length)])
    return PREFLIGHT_SENTENCE[keyword.slice('preflight_'.length)]!;
  // A sentence the API wrote for people already (public form messages: "Choose one of the options.").
  if (/^[A-Z]/.test(e.message) && /[.!?]$/.test(e.message) && !/\/v1\//.test(e.message)) return e.message;
  return plain(`${name} ${e.message}`);
}

/** For errors written without a keyword: the common phrasings of the service's own checks. */
function inferKeyword(message: string): string | undefined {
  if (/^is required\b/.test(message)) return 'required';
  if (/^names no\b/.test(message)) return 'reference';
  if (/^must (be a valid email address|be an email address$)/.test(message)) return 'format-email';
  if (/^must not be (blank|empty)/.test(message)) return 'blank';
  if (/^is not on a verified domain/.test(message)) return 'verified_domain';
  return undefined;
}

/** The sentence for a problem as a whole (what a banner, a toast or an error panel says). */
export function problemSentence(problem: Problem, status?: number): string {
  const code = problem.code ?? '';
  if (CODE_SENTENCE[code]) {
    const s = CODE_SENTENCE[code]!;
    // A conflict's detail names what is in the way ("used by 2 broadcasts"): worth keeping, made plain.
    if ((code === 'resource_in_use' || code === 'invalid_state') && problem.detail)
      return `${s.replace(/\.$/, ':')} ${lower(plain(problem.detail))}`;
    return s;
  }
  if (problem.detail) return plain(problem.detail);
  if (status && status >= 500) return CODE_SENTENCE.internal_error!;
  return 'That did not work. Try again.';
}

/**
 * A failed request, described for a form that shows the fields in `labels`: each error's sentence at its field, and
 * the banner (`message` and `rest`) only for what no shown field takes.
 */
export function describeProblem(err: unknown, labels: FieldLabels = {}): DescribedProblem {
  if (!err) return { fields: {}, message: null, rest: [] };
  if (!(err instanceof ApiError)) {
    const text = err instanceof Error ? err.message : 'Something went wrong.';
    return { fields: {}, message: /^[A-Z]/.test(text) ? text : plain(text), rest: [] };
  }
  const problem = err.problem;
  const items: ProblemFieldError[] = [...(problem.errors ?? [])];
  const codePointer = CODE_POINTER[problem.code ?? ''];
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  const fix = (e: ProblemFieldError, at: string | undefined) => {
    const keyword = e.keyword === undefined && inferKeyword(e.message) === 'format-email' ? 'format' : e.keyword;
    const item = keyword === 'format' && !e.params ? { ...e, keyword, params: { format: 'email' } } : { ...e, keyword };
    const label = at && !at.endsWith('/**') ? { ...labelOf(labels[at]!), numbered: at.includes('*') } : undefined;
    const sentence = sentenceFor(item, label);
    if (at) fields[at] ??= sentence;
    else if (!rest.includes(sentence)) rest.push(sentence);
    fields[e.path] ??= sentence;
  };
  for (const e of items) fix(e, placeOf(e.path, labels));
  // A code about one field (slug_taken, contact_exists …) without errors[]: at that field when the form shows it.
  if (!items.length && codePointer) {
    const at = placeOf(codePointer, labels);
    if (at) fields[at] = CODE_SENTENCE[problem.code!]!;
  }
  const placedAll = Object.keys(fields).length > 0 && rest.length === 0;
  return { fields, message: placedAll ? null : problemSentence(problem, err.status), rest };
}

/** A failed request as one paragraph (error panels, toasts): the lead and every error's sentence. */
export function describeError(err: unknown): string {
  const d = describeProblem(err);
  return [d.message, ...d.rest].filter(Boolean).join(' ');
}
