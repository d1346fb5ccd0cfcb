/**
 * The proof-of-work widget in a form's markup (docs/bot-protection.md): `<altcha-widget>` before the submit
 * button, with the address of the form's challenge, the field name the service reads (`_fc_pow`), and when to start:
 * at once on the hosted page (the visitor came for the form), at the first focus in an embed (a form in a footer
 * should not cost every reader of the site a second of CPU). It shows a labelled checkbox ("I'm not a robot") that
 * ticks itself: nobody has to do anything. The page's CSP lets this origin's scripts and workers run.
 */
import { defaultTreeAdapter, html, parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';
import type { Form } from '../forms/forms.schemas.js';
import { WIDGET_VERSION } from './protection.assets.js';
import { POW_FIELD } from './protection.pow.js';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

export const ASSETS_PATH = '/assets/altcha';

export function proofOfWorkOn(form: Pick<Form, 'settings'>): boolean {
  return form.settings.protection?.proofOfWork === true;
}

export const widgetUrl = (base: string) => `${base}${ASSETS_PATH}/widget.js?v=${WIDGET_VERSION}`;
export const challengeUrl = (publicUrl: string, slug: string) => `${publicUrl}/f/${slug}/challenge`;

const isElement = (n: Node): n is Element => 'tagName' in n;
function* walk(node: Node): Generator<Element> {
  if (isElement(node)) yield node;
  if ('childNodes' in node) for (const child of [...node.childNodes]) yield* walk(child as Node);
}
const attr = (el: Element, name: string) => el.attrs.find((a) => a.name === name)?.value;
function el(tag: string, attrs: Record<string, string>): Element {
  return defaultTreeAdapter.createElement(
    tag,
    html.NS.HTML,
    Object.entries(attrs).map(([name, value]) => ({ name, value })),
  );
}

/** The form markup with the widget in it (and the message of a refused check under it). */
export function withWidget(
  markup: string,
  opts: { challenge: string; auto: 'onload' | 'onfocus'; error?: string },
): string {
  const fragment = parseFragment(markup);
  const all = [...walk(fragment as unknown as Node)];
  const form =
    all.find((e) => e.tagName === 'form' && attr(e, 'data-formcast-form') !== undefined) ??
    all.find((e) => e.tagName === 'form');
  if (!form) return markup;
  const box = el('div', { class: 'fc-field fc-pow', 'data-formcast-pow': '' });
  defaultTreeAdapter.appendChild(
    box,
    el('altcha-widget', {
      challenge: opts.challenge,
      name: POW_FIELD,
      auto: opts.auto,
      type: 'checkbox',
      configuration: JSON.stringify({ hideFooter: true, hideLogo: true }),
    }),
  );
  const slot = el('p', { class: 'fc-error', 'data-formcast-error': POW_FIELD, id: 'fc-error-_fc_pow' });
  if (opts.error) {
    slot.attrs.push({ name: 'role', value: 'alert' });
    defaultTreeAdapter.insertText(slot, opts.error);
  }
  defaultTreeAdapter.appendChild(box, slot);
  const noscript = el('noscript', {});
  const note = el('p', { class: 'fc-error' });
  defaultTreeAdapter.insertText(
    note,
    'This form checks that you are not a robot by a small computation in your browser, which needs JavaScript.',
  );
  defaultTreeAdapter.appendChild(noscript, note);
  defaultTreeAdapter.appendChild(box, noscript);
  const submit = [...walk(form)].find(
    (e) =>
      (e.tagName === 'button' && (attr(e, 'type') ?? 'submit').toLowerCase() === 'submit') ||
      (e.tagName === 'input' && ['submit', 'image'].includes((attr(e, 'type') ?? '').toLowerCase())),
  );
  if (submit) {
    const parent = submit.parentNode!;
    parent.childNodes.splice(parent.childNodes.indexOf(submit), 0, box);
    box.parentNode = parent;
  } else {
    defaultTreeAdapter.appendChild(form, box);
  }
  return serialize(fragment);
}

/** What the hosted page's `<head>` gains: the widget's stylesheet and script, from this origin. */
export function widgetHead(): string {
  return `<link rel="stylesheet" href="${ASSETS_PATH}/altcha.css?v=${WIDGET_VERSION}">\n<script type="module" src="${widgetUrl('')}"></script>\n`;
}

/** The hosted page's CSP with this origin's scripts, workers, stylesheets and fetches allowed (the challenge). */
export function widgetCsp(csp: string): string {
  return csp
    .replace("style-src 'unsafe-inline'", "style-src 'self' 'unsafe-inline'")
    .replace("default-src 'none';", "default-src 'none'; script-src 'self'; worker-src 'self'; connect-src 'self';");
}
