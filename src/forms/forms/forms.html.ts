import { parse, type DefaultTreeAdapterMap } from 'parse5';
import type sanitizeHtml from 'sanitize-html';
import { lazyRequire } from '../../lib/lazy.js';

// The sanitiser (with postcss and htmlparser2) loads with the first HTML deployed, not at start (lib/lazy.ts).
const sanitizer = lazyRequire<typeof sanitizeHtml>('sanitize-html');
import { CONSENT_FIELD } from '@formcast/form-appearance';
import type { FormSettings, HtmlValidation } from './forms.schemas.js';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

export const MAX_HTML_BYTES = 512 * 1024;

/**
 * What deployed HTML may contain: ordinary content, form controls and their labels, `data-*` and
 * `aria-*` attributes (the `data-formcast-*` conventions live there). No script, no style element,
 * no event handler, no `javascript:` (or any non-web) URL. A form's `action` is dropped: the service
 * points the form at its own submission endpoint when it serves the page.
 */
const sanitizeOptions = (): sanitizeHtml.IOptions => ({
  allowedTags: [
    ...sanitizer().defaults.allowedTags,
    'img',
    'form',
    'input',
    'select',
    'option',
    'optgroup',
    'textarea',
    'button',
    'label',
    'fieldset',
    'legend',
    'datalist',
    'output',
    'progress',
    'meter',
  ],
  allowedAttributes: {
    '*': ['id', 'class', 'title', 'lang', 'dir', 'role', 'hidden', 'tabindex', 'data-*', 'aria-*'],
    a: ['href', 'name', 'target', 'rel'],
    img: ['src', 'alt', 'width', 'height', 'loading'],
    form: ['method', 'novalidate', 'autocomplete', 'name'],
    input: [
      'type',
      'name',
      'value',
      'placeholder',
      'required',
      'pattern',
      'min',
      'max',
      'minlength',
      'maxlength',
      'step',
      'checked',
      'disabled',
      'readonly',
      'multiple',
      'autocomplete',
      'inputmode',
      'size',
      'accept',
      'list',
      'form',
    ],
    select: ['name', 'required', 'multiple', 'disabled', 'size', 'autocomplete', 'form'],
    option: ['value', 'selected', 'disabled', 'label'],
    optgroup: ['label', 'disabled'],
    textarea: [
      'name',
      'placeholder',
      'required',
      'rows',
      'cols',
      'minlength',
      'maxlength',
      'disabled',
      'readonly',
      'autocomplete',
      'form',
    ],
    button: ['type', 'name', 'value', 'disabled', 'form'],
    label: ['for', 'form'],
    fieldset: ['name', 'disabled', 'form'],
    output: ['for', 'name', 'form'],
    progress: ['value', 'max'],
    meter: ['value', 'min', 'max', 'low', 'high', 'optimum'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https', 'data'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
});
let SANITIZE: sanitizeHtml.IOptions | undefined;

export function sanitizeFormHtml(html: string): string {
  return sanitizer()(html, (SANITIZE ??= sanitizeOptions()));
}

/** Input types that submit nothing of their own: they never count as a field. */
const NON_FIELD_INPUTS = new Set(['submit', 'button', 'reset', 'image']);

/** The names of the controls that submit a value: input (but submit/button/reset/image), select, textarea. */
export function namedControls(html: string): Set<string> {
  const names = new Set<string>();
  const walk = (node: Node): void => {
    if ('tagName' in node) {
      const el = node as Element;
      const attr = (n: string) => el.attrs.find((a) => a.name === n)?.value;
      const name = attr('name');
      if (name) {
        if (el.tagName === 'input' && !NON_FIELD_INPUTS.has((attr('type') ?? 'text').toLowerCase())) names.add(name);
        else if (el.tagName === 'select' || el.tagName === 'textarea') names.add(name);
      }
      if (el.tagName === 'template') walk((el as unknown as { content: Node }).content);
    }
    if ('childNodes' in node) for (const child of node.childNodes) walk(child as Node);
  };
  walk(parse(html) as unknown as Node);
  return names;
}

/**
 * Cross-validation of a form's fieldMapping against its deployed HTML (docs/api.md §4):
 * a mapped field with no control is an error (for a SIGN_UP form that includes the email field);
 * a named control that no mapping covers is a warning.
 */
export function crossValidate(
  fieldMapping: Record<string, string>,
  html: string,
  checkedAt: string,
  settings?: Pick<FormSettings, 'appearance' | 'fields'>,
): HtmlValidation {
  const controls = namedControls(html);
  // What a submission must carry is an error too when the HTML has no control for it: the consent box of
  // `appearance.consentText` and every required question (a form nobody could submit would publish otherwise).
  const required = [
    ...Object.keys(fieldMapping),
    ...Object.entries(settings?.fields ?? {})
      .filter(([name, def]) => def.required && !Object.hasOwn(fieldMapping, name))
      .map(([name]) => name),
    ...(settings?.appearance?.consentText !== undefined ? [CONSENT_FIELD] : []),
  ];
  const errors = required.filter((f) => !controls.has(f)).map((field) => ({ code: 'field_not_in_html', field }));
  const defined = settings?.fields ?? {};
  const warnings = [...controls]
    .filter((c) => !Object.hasOwn(fieldMapping, c) && !Object.hasOwn(defined, c) && c !== CONSENT_FIELD)
    .map((field) => ({ code: 'control_not_mapped', field }));
  return { valid: errors.length === 0, checkedAt, errors, warnings };
}

export { escapeHtml } from '../../lib/html.js';

/** The form the service renders when no custom HTML is deployed (@formcast/form-appearance: the console's preview uses it too). */
export { renderDefaultHtml } from '@formcast/form-appearance';
