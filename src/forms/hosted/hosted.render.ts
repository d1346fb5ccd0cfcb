import { defaultTreeAdapter, html, parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';
import { escapeHtml, renderDefaultHtml } from '../forms/forms.html.js';
import type { Form } from '../forms/forms.schemas.js';
import { publicHeading, themeCss } from '@formcast/form-appearance';
import { HONEYPOT_FIELD, TIMEZONE_FIELD, type FieldProblem } from '../submissions/submissions.service.js';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];

export interface FormState {
  values?: Record<string, unknown>;
  errors?: FieldProblem[];
}

const isElement = (n: Node): n is Element => 'tagName' in n;
const attr = (el: Element, name: string) => el.attrs.find((a) => a.name === name)?.value;
function setAttr(el: Element, name: string, value: string): void {
  const existing = el.attrs.find((a) => a.name === name);
  if (existing) existing.value = value;
  else el.attrs.push({ name, value });
}
function removeAttr(el: Element, name: string): void {
  el.attrs = el.attrs.filter((a) => a.name !== name);
}
function* walk(node: Node): Generator<Element> {
  if (isElement(node)) yield node;
  if ('childNodes' in node) for (const child of [...node.childNodes]) yield* walk(child as Node);
}
function setText(el: Element, text: string): void {
  for (const c of [...el.childNodes]) defaultTreeAdapter.detachNode(c);
  defaultTreeAdapter.insertText(el, text);
}
function element(tag: string, attrs: Record<string, string>, parent: ParentNode): Element {
  const el = defaultTreeAdapter.createElement(
    tag,
    html.NS.HTML,
    Object.entries(attrs).map(([name, value]) => ({ name, value })),
  );
  defaultTreeAdapter.appendChild(parent, el);
  return el;
}
function insertAfter(ref: Element, el: Element): void {
  const parent = ref.parentNode!;
  const index = parent.childNodes.indexOf(ref);
  defaultTreeAdapter.detachNode(el);
  parent.childNodes.splice(index + 1, 0, el);
  el.parentNode = parent;
}
const asList = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(String) : v === undefined || v === null ? [] : [String(v)];

/**
 * The form's markup as served: the deployed HTML (sanitised when deployed) or the service's own, with the
 * form pointed at the service (`method=post`, `action`), the honeypot, and, after a failed submission, the
 * entered values kept and each error written where the page asks for it (`data-formcast-error="<field>"`),
 * or else just after the control. Every value goes in through the DOM, so it is escaped on the way out.
 */
export function renderFormMarkup(
  form: Pick<Form, 'type' | 'fieldMapping' | 'settings' | 'seoTitle'>,
  customHtml: string | null,
  action: string,
  state: FormState = {},
): string {
  const fragment = parseFragment(customHtml ?? renderDefaultHtml(form));
  let formEl = [...walk(fragment as unknown as Node)].find((e) => e.tagName === 'form');
  if (!formEl) {
    // Custom HTML without a <form>: wrap it in one.
    const wrapper = defaultTreeAdapter.createElement('form', html.NS.HTML, []);
    for (const child of [...fragment.childNodes]) {
      defaultTreeAdapter.detachNode(child);
      defaultTreeAdapter.appendChild(wrapper, child);
    }
    defaultTreeAdapter.appendChild(fragment, wrapper);
    formEl = wrapper;
  }
  setAttr(formEl, 'method', 'post');
  setAttr(formEl, 'action', action);
  setAttr(formEl, 'data-formcast-form', '');
  setAttr(formEl, 'novalidate', ''); // the service's messages, next to the fields, for everyone
  // Hidden by a class, not an inline style, so that a host page whose CSP forbids inline styles still hides it.
  const trap = element('div', { class: 'fc-hp', 'aria-hidden': 'true' }, formEl);
  const trapLabel = element('label', {}, trap);
  defaultTreeAdapter.insertText(trapLabel, 'Leave this field empty ');
  element('input', { type: 'text', name: HONEYPOT_FIELD, tabindex: '-1', autocomplete: 'off', value: '' }, trapLabel);
  // The visitor's time zone (settings.captureTimezone, docs/forms.md): the embed fills it from the browser on submit.
  if (form.settings.captureTimezone)
    element('input', { type: 'hidden', name: TIMEZONE_FIELD, value: '', 'data-formcast-tz': '' }, formEl);

  // Where the success message goes (an embed writes it there); the page's own, if it has one.
  if (![...walk(fragment as unknown as Node)].some((e) => attr(e, 'data-formcast-success') !== undefined)) {
    const success = defaultTreeAdapter.createElement('div', html.NS.HTML, [
      { name: 'data-formcast-success', value: '' },
      { name: 'role', value: 'status' },
      { name: 'aria-live', value: 'polite' },
    ]);
    insertAfter(formEl, success);
  }

  const values = state.values ?? {};
  const errors = new Map((state.errors ?? []).map((e) => [e.field, e.message]));
  const all = [...walk(formEl)];
  const errorSlots = new Map(
    all.filter((e) => attr(e, 'data-formcast-error') !== undefined).map((e) => [attr(e, 'data-formcast-error')!, e]),
  );
  for (const el of all) {
    const name = attr(el, 'name');
    if (!name || name === HONEYPOT_FIELD || name === TIMEZONE_FIELD) continue;
    const given = asList(values[name]);
    if (state.values && name in values) {
      if (el.tagName === 'input') {
        const type = (attr(el, 'type') ?? 'text').toLowerCase();
        if (type === 'checkbox' || type === 'radio') {
          if (given.includes(attr(el, 'value') ?? 'on')) setAttr(el, 'checked', '');
          else removeAttr(el, 'checked');
        } else if (!['password', 'file', 'submit', 'button', 'reset', 'image'].includes(type)) {
          setAttr(el, 'value', given[0] ?? '');
        }
      } else if (el.tagName === 'textarea') {
        setText(el, given[0] ?? '');
      } else if (el.tagName === 'select') {
        for (const opt of [...walk(el)].filter((o) => o.tagName === 'option')) {
          if (given.includes(attr(opt, 'value') ?? '')) setAttr(opt, 'selected', '');
          else removeAttr(opt, 'selected');
        }
      }
    }
    const message = errors.get(name);
    if (message && ['input', 'select', 'textarea'].includes(el.tagName)) {
      const id = `fc-error-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
      let slot = errorSlots.get(name);
      if (!slot) {
        slot = defaultTreeAdapter.createElement('p', html.NS.HTML, [
          { name: 'class', value: 'fc-error' },
          { name: 'data-formcast-error', value: name },
        ]);
        insertAfter(el, slot);
        errorSlots.set(name, slot);
      }
      setAttr(slot, 'id', attr(slot, 'id') ?? id);
      setText(slot, message);
      setAttr(el, 'aria-invalid', 'true');
      setAttr(el, 'aria-describedby', attr(slot, 'id')!);
      errors.delete(name);
    }
  }
  const summary = all.find((e) => attr(e, 'data-formcast-error-summary') !== undefined);
  if (summary && state.errors?.length) {
    setAttr(summary, 'role', 'alert');
    setText(
      summary,
      state.errors.length === 1
        ? 'Please correct the field marked below.'
        : `Please correct the ${state.errors.length} fields marked below.`,
    );
  }
  return serialize(fragment);
}

/**
 * The hosted page's one script, for a form that keeps the visitor's time zone (settings.captureTimezone): it fills the
 * hidden `_fc_tz` field from the browser (the embed's runtime does the same). Served from this origin
 * (`GET /assets/forms/timezone.js`), cached for long: its address carries a version; the page's CSP lets it run.
 */
export const TIMEZONE_SCRIPT =
  "for(const i of document.querySelectorAll('input[data-formcast-tz]')){try{i.value=Intl.DateTimeFormat().resolvedOptions().timeZone||''}catch(e){}}\n";
export const TIMEZONE_SCRIPT_PATH = '/assets/forms/timezone.js';
export const timezoneHead = () => `<script src="${TIMEZONE_SCRIPT_PATH}?v=1" defer></script>\n`;
/** The page's CSP with this origin's scripts allowed (the proof-of-work widget's CSP has them already). */
export const timezoneCsp = (csp: string) =>
  csp.includes('script-src') ? csp : csp.replace("default-src 'none';", "default-src 'none'; script-src 'self';");

/** The page's `<title>`: the SEO title, or the public heading; never the form's (internal) name. */
export function pageTitle(form: Pick<Form, 'type' | 'settings' | 'seoTitle'>): string {
  return form.seoTitle ?? publicHeading(form);
}

/** The theme of the hosted page (@formcast/form-appearance): the colour scheme, and the stylesheet of its variables. */
export function appearanceHead(form: Pick<Form, 'settings'>): string {
  const theme = form.settings.appearance?.theme ?? 'light';
  return `<meta name="color-scheme" content="${theme === 'auto' ? 'light dark' : theme}">\n<style>\n${themeCss(form.settings.appearance, 'page')}</style>\n`;
}

/** `<head>` tags from the SEO fields: title is set by the page shell; all values escaped. */
export function seoHead(
  form: Pick<Form, 'type' | 'settings' | 'seoTitle' | 'seoDescription' | 'seoImageUrl' | 'seoFaviconUrl'>,
  canonicalUrl: string,
): string {
  const title = pageTitle(form);
  const tags = [
    `<link rel="canonical" href="${escapeHtml(canonicalUrl)}">`,
    `<meta property="og:type" content="website">`,
    `<meta property="og:url" content="${escapeHtml(canonicalUrl)}">`,
    `<meta property="og:title" content="${escapeHtml(title)}">`,
    `<meta name="twitter:card" content="${form.seoImageUrl ? 'summary_large_image' : 'summary'}">`,
    `<meta name="twitter:title" content="${escapeHtml(title)}">`,
  ];
  if (form.seoDescription) {
    tags.push(`<meta name="description" content="${escapeHtml(form.seoDescription)}">`);
    tags.push(`<meta property="og:description" content="${escapeHtml(form.seoDescription)}">`);
    tags.push(`<meta name="twitter:description" content="${escapeHtml(form.seoDescription)}">`);
  }
  if (form.seoImageUrl) {
    tags.push(`<meta property="og:image" content="${escapeHtml(form.seoImageUrl)}">`);
    tags.push(`<meta name="twitter:image" content="${escapeHtml(form.seoImageUrl)}">`);
  }
  if (form.seoFaviconUrl) tags.push(`<link rel="icon" href="${escapeHtml(form.seoFaviconUrl)}">`);
  return `${tags.join('\n')}\n`;
}
