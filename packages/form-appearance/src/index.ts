/**
 * How a form looks and what it asks (docs/forms.md): the public heading and button, the questions in the order
 * they are shown, the service's own markup of the form, and the stylesheet of a theme and brand colour, shared by
 * the hosted page and both embeds.
 *
 * A package of its own, imported by the server (src/forms) and by the console (its form editor's live preview,
 * console/src/components/FormPreview.tsx), so the preview is what visitors get without the console importing server
 * source. Browser-safe on purpose: no import, no Node API. The types below are the shapes of forms.schemas.ts,
 * restated so that nothing else is pulled in.
 */

export type FieldType = 'text' | 'email' | 'textarea' | 'select' | 'radio' | 'checkbox' | 'number' | 'date';

export interface FormAppearance {
  heading?: string;
  intro?: string;
  buttonLabel?: string;
  consentText?: string;
  brandColor?: string;
  logoUrl?: string;
  theme?: 'light' | 'dark' | 'auto';
}

export interface FieldDefinition {
  label: string;
  type: FieldType;
  options?: string[];
  required?: boolean;
  placeholder?: string;
}

/** What of a form its look depends on. */
export interface Form {
  type: 'SIGN_UP' | 'SURVEY';
  seoTitle: string | null;
  fieldMapping: Record<string, string>;
  settings: { appearance?: FormAppearance; fields?: Record<string, FieldDefinition> };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text as HTML (src/lib/html.ts escapes the server's other pages the same way; this package imports nothing). */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** The checkbox of `appearance.consentText`: required, its acceptance stored with the submission. */
export const CONSENT_FIELD = '_fc_consent';
export const DEFAULT_BRAND = '#0969da';

type Looks = Pick<Form, 'type' | 'seoTitle' | 'settings'>;

/** The heading visitors see. Never the form's name, which is internal: the appearance's, the SEO title, or a default. */
export function publicHeading(form: Looks): string {
  return (
    form.settings.appearance?.heading ??
    form.seoTitle ??
    (form.type === 'SURVEY' ? 'We would love your feedback' : 'Subscribe to our newsletter')
  );
}

export function buttonLabel(form: Pick<Form, 'type' | 'settings'>): string {
  return form.settings.appearance?.buttonLabel ?? (form.type === 'SURVEY' ? 'Send' : 'Subscribe');
}

export interface Question {
  name: string;
  label: string;
  type: FieldType;
  options: string[] | null;
  required: boolean;
  placeholder: string | null;
  /** The contact property the field fills, or null for an answer stored with the submission only. */
  property: string | null;
}

const LABELS: Record<string, string> = { email: 'Email', firstName: 'First name', lastName: 'Last name' };

/** A label from a field's contact property (or name): `favourite_colour` → "Favourite colour", `companyName` → "Company name". */
export function labelFromName(name: string): string {
  const words = name
    .replace(/[_.[\]-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim()
    .toLowerCase();
  return words ? words.replace(/^./, (c) => c.toUpperCase()) : name;
}

/**
 * The form's questions in the order they are shown: the mapped fields without a definition first (in mapping order,
 * labelled from their contact property), then `settings.fields` in its order. A field mapped to `email` is an email
 * field, required on a SIGN_UP form whatever its definition says.
 */
export function formQuestions(form: Pick<Form, 'type' | 'fieldMapping' | 'settings'>): Question[] {
  const defs: Record<string, FieldDefinition> = form.settings.fields ?? {};
  const out: Question[] = [];
  const make = (name: string, def: FieldDefinition | undefined): Question => {
    // Own keys only: a field may be named `constructor` or `toString` (FIELD_NAME_PATTERN allows them).
    const property = Object.hasOwn(form.fieldMapping, name) ? form.fieldMapping[name]! : null;
    const isEmail = property === 'email';
    return {
      name,
      label: def?.label ?? (property ? (LABELS[property] ?? labelFromName(property)) : labelFromName(name)),
      type: isEmail ? 'email' : (def?.type ?? 'text'),
      options: def?.options ?? null,
      required: (isEmail && form.type === 'SIGN_UP') || def?.required === true,
      placeholder: def?.placeholder ?? null,
      property,
    };
  };
  for (const name of Object.keys(form.fieldMapping)) if (!Object.hasOwn(defs, name)) out.push(make(name, undefined));
  for (const [name, def] of Object.entries(defs)) out.push(make(name, def));
  return out;
}

// ---- markup ---------------------------------------------------------------------------------------------------

const AUTOCOMPLETE: Record<string, string> = { email: 'email', firstName: 'given-name', lastName: 'family-name' };

/** Plain text with line breaks as HTML: a blank line starts a paragraph, a line break is kept. */
function paragraphs(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .trim()
    .split(/\n{2,}/)
    .map((p) => `<p>${p.split('\n').map(escapeHtml).join('<br>')}</p>`)
    .join('');
}

function questionHtml(q: Question, i: number): string {
  const id = `fc-field-${i}`;
  const name = escapeHtml(q.name);
  const mark = q.required ? '<span class="fc-required" aria-hidden="true">*</span>' : '';
  const label = `${escapeHtml(q.label)}${mark}`;
  const req = q.required ? ' required' : '';
  const ph = q.placeholder !== null ? ` placeholder="${escapeHtml(q.placeholder)}"` : '';
  const error = `    <p class="fc-error" data-formcast-error="${name}"></p>\n`;
  if (q.type === 'radio' || (q.type === 'checkbox' && q.options)) {
    const boxes = (q.options ?? [])
      .map(
        (o, j) =>
          `    <div class="fc-choice"><input id="${id}-${j}" name="${name}" type="${q.type}" value="${escapeHtml(o)}"><label for="${id}-${j}">${escapeHtml(o)}</label></div>\n`,
      )
      .join('');
    const group = q.required && q.type === 'radio' ? ' role="radiogroup" aria-required="true"' : '';
    return `  <fieldset class="fc-field fc-choices"${group}>\n    <legend>${label}</legend>\n${boxes}${error}  </fieldset>`;
  }
  if (q.type === 'checkbox') {
    return `  <div class="fc-field">\n    <div class="fc-choice"><input id="${id}" name="${name}" type="checkbox" value="yes"${req}><label for="${id}">${label}</label></div>\n${error}  </div>`;
  }
  let control: string;
  if (q.type === 'textarea') control = `<textarea id="${id}" name="${name}" rows="4"${ph}${req}></textarea>`;
  else if (q.type === 'select') {
    const opts = (q.options ?? []).map((o) => `<option value="${escapeHtml(o)}">${escapeHtml(o)}</option>`).join('');
    control = `<select id="${id}" name="${name}"${req}><option value="">${escapeHtml(q.placeholder ?? 'Choose…')}</option>${opts}</select>`;
  } else {
    const auto = q.property && AUTOCOMPLETE[q.property] ? ` autocomplete="${AUTOCOMPLETE[q.property]}"` : '';
    // A number is typed as text (inputmode gives the number keyboard): a value that is not one is kept and shown
    // with its error, where type=number would show nothing.
    const type = q.type === 'number' ? 'text' : q.type;
    const extra = q.type === 'number' ? ' inputmode="decimal"' : '';
    control = `<input id="${id}" name="${name}" type="${type}"${auto}${extra}${ph}${req}>`;
  }
  return `  <div class="fc-field">\n    <label for="${id}">${label}</label>\n    ${control}\n${error}  </div>`;
}

/**
 * The form the service renders when no custom HTML is deployed: the appearance's logo, heading and intro, the
 * questions (formQuestions), the consent box, the button. Every text is escaped here; the
 * theme is a stylesheet (themeCss) of the page or of the embed's shadow root.
 */
export function renderDefaultHtml(form: Pick<Form, 'type' | 'fieldMapping' | 'settings' | 'seoTitle'>): string {
  const a = form.settings.appearance ?? {};
  const header = [
    a.logoUrl ? `    <img class="fc-logo" src="${escapeHtml(a.logoUrl)}" alt="">` : '',
    `    <h1 class="fc-heading">${escapeHtml(publicHeading(form))}</h1>`,
    a.intro ? `    <div class="fc-intro">${paragraphs(a.intro)}</div>` : '',
  ].filter(Boolean);
  const consent = a.consentText
    ? `  <div class="fc-field fc-consent">\n    <div class="fc-choice"><input id="fc-consent" name="${CONSENT_FIELD}" type="checkbox" value="yes" required><label for="fc-consent">${escapeHtml(a.consentText)}<span class="fc-required" aria-hidden="true">*</span></label></div>\n` +
      `    <p class="fc-error" data-formcast-error="${CONSENT_FIELD}"></p>\n  </div>`
    : '';
  return [
    `<form class="fc-form" method="post">`,
    `  <div class="fc-header">`,
    ...header,
    `  </div>`,
    `  <div data-formcast-error-summary></div>`,
    ...formQuestions(form).map(questionHtml),
    consent,
    `  <button class="fc-submit" type="submit">${escapeHtml(buttonLabel(form))}</button>`,
    `</form>`,
  ]
    .filter(Boolean)
    .join('\n');
}

// ---- colour ------------------------------------------------------------------------------------------------------

type Rgb = [number, number, number];

function rgb(hex: string): Rgb {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function hex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG 2 relative luminance. */
function luminance(color: string): number {
  const [r, g, b] = rgb(color).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
  return (x + 0.05) / (y + 0.05);
}

/** The text colour on a background of `color`: white or black, whichever contrasts more (always at least 4.58:1). */
export function textOn(color: string): string {
  return contrastRatio(color, '#ffffff') >= contrastRatio(color, '#000000') ? '#ffffff' : '#000000';
}

/** `color`, mixed toward `toward` just enough to contrast `min`:1 with `bg` (focus rings and links on the page). */
export function readableOn(color: string, bg: string, min: number): string {
  if (contrastRatio(color, bg) >= min) return color;
  const toward = luminance(bg) > 0.4 ? rgb('#000000') : rgb('#ffffff');
  const from = rgb(color);
  for (let t = 0.05; t <= 1; t += 0.05) {
    const mixed = hex(from.map((c, i) => c + (toward[i]! - c) * t) as Rgb);
    if (contrastRatio(mixed, bg) >= min) return mixed;
  }
  return hex(toward);
}

// ---- themes ------------------------------------------------------------------------------------------------------

interface Palette {
  bg: string;
  surface: string;
  text: string;
  muted: string;
  border: string;
  inputBg: string;
  inputBorder: string;
  error: string;
  errorBg: string;
  success: string;
  successBg: string;
  shadow: string;
}

const LIGHT: Palette = {
  bg: '#f3f4f6',
  surface: '#ffffff',
  text: '#1f2328',
  muted: '#59636e',
  border: '#d1d9e0',
  inputBg: '#ffffff',
  inputBorder: '#6e7781',
  error: '#b42318',
  errorBg: '#fef3f2',
  success: '#116329',
  successBg: '#dafbe1',
  shadow: '0 1px 2px rgba(31,35,40,.06), 0 8px 24px rgba(31,35,40,.08)',
};
const DARK: Palette = {
  bg: '#0d1117',
  surface: '#161b22',
  text: '#e6edf3',
  muted: '#9198a1',
  border: '#3d444d',
  inputBg: '#0d1117',
  inputBorder: '#8b949e',
  error: '#ff8a80',
  errorBg: '#2d1214',
  success: '#56d364',
  successBg: '#12261e',
  shadow: '0 8px 24px rgba(0,0,0,.45)',
};

function variables(p: Palette, brand: string): string {
  const accent = readableOn(brand, p.surface, 3);
  return [
    `--fc-bg:${p.bg}`,
    `--fc-surface:${p.surface}`,
    `--fc-text:${p.text}`,
    `--fc-muted:${p.muted}`,
    `--fc-border:${p.border}`,
    `--fc-input-bg:${p.inputBg}`,
    `--fc-input-border:${p.inputBorder}`,
    `--fc-error:${p.error}`,
    `--fc-error-bg:${p.errorBg}`,
    `--fc-success:${p.success}`,
    `--fc-success-bg:${p.successBg}`,
    `--fc-shadow:${p.shadow}`,
    `--fc-brand:${brand}`,
    `--fc-on-brand:${textOn(brand)}`,
    `--fc-accent:${accent}`,
    // The button's edge, where the brand colour itself is too close to the card (a pale brand on white).
    `--fc-brand-edge:${contrastRatio(brand, p.surface) >= 3 ? brand : accent}`,
    `color-scheme:${p === DARK ? 'dark' : 'light'}`,
  ].join(';');
}

/**
 * The rules of the service's own form markup (forms.html.ts), for the hosted page (`scope` `html body`, `main`)
 * and for the embeds (`:host`, inside their shadow root). Every colour comes from the variables above; the brand
 * colour only ever arrives as a checked `#rrggbb`, so nothing from the form can end a rule.
 */
export function themeCss(appearance: FormAppearance | undefined, where: 'page' | 'embed'): string {
  const brand =
    appearance?.brandColor && /^#[0-9a-f]{6}$/i.test(appearance.brandColor)
      ? appearance.brandColor.toLowerCase()
      : DEFAULT_BRAND;
  const theme = appearance?.theme ?? 'light';
  const root = where === 'page' ? ':root' : ':host';
  const first = theme === 'dark' ? DARK : LIGHT;
  let css = `${root}{${variables(first, brand)}}\n`;
  if (theme === 'auto') css += `@media (prefers-color-scheme: dark){${root}{${variables(DARK, brand)}}}\n`;
  const page =
    where === 'page'
      ? `html body{max-width:none;margin:0;padding:3rem 1rem;min-height:100vh;box-sizing:border-box;background:var(--fc-bg);color:var(--fc-text)}
html body>main{max-width:34rem;margin:0 auto}
html body main>[data-formcast-success]{box-sizing:border-box;max-width:34rem;margin:0 auto;padding:2.5rem 2rem;text-align:center;background:var(--fc-surface);color:var(--fc-text);border:1px solid var(--fc-border);border-radius:.875rem;box-shadow:var(--fc-shadow);font-size:1.125rem}
html body main>[data-formcast-success]::before{content:"\\2713";display:block;width:3rem;height:3rem;margin:0 auto 1rem;border-radius:50%;background:var(--fc-success-bg);color:var(--fc-success);font-size:1.5rem;line-height:3rem;font-weight:700}
html body main>[data-formcast-success] p{margin:0}
html body main>[data-formcast-success]:empty{display:none}
@media (max-width:30rem){html body{padding:1rem .75rem}}
`
      : '';
  return `${css}${page}.fc-form{box-sizing:border-box;background:var(--fc-surface);color:var(--fc-text);border:1px solid var(--fc-border);border-radius:.875rem;box-shadow:var(--fc-shadow);padding:2rem;margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;text-align:left}
.fc-form *,.fc-form *::before,.fc-form *::after{box-sizing:border-box}
.fc-form .fc-header{margin:0 0 1.5rem}
.fc-form .fc-logo{display:block;max-height:3rem;max-width:12rem;width:auto;margin:0 0 1.25rem}
.fc-form .fc-heading{font-size:1.5rem;line-height:1.25;font-weight:700;letter-spacing:-.01em;margin:0;padding:0;color:var(--fc-text)}
.fc-form .fc-intro{margin:.5rem 0 0;color:var(--fc-muted)}
.fc-form .fc-intro p{margin:0 0 .5rem}
.fc-form .fc-intro p:last-child{margin:0}
.fc-form .fc-field{margin:0 0 1.1rem;padding:0;border:0;min-width:0}
.fc-form .fc-field>label,.fc-form .fc-field>legend{display:block;font-weight:600;font-size:.95rem;margin:0 0 .35rem;padding:0;color:var(--fc-text)}
.fc-form .fc-required{color:var(--fc-error);margin-left:.15rem}
.fc-form input:not([type=checkbox]):not([type=radio]),.fc-form select,.fc-form textarea{display:block;width:100%;min-height:2.75rem;margin:0;padding:.6rem .75rem;font:inherit;color:var(--fc-text);background:var(--fc-input-bg);border:1px solid var(--fc-input-border);border-radius:.5rem;box-shadow:none}
.fc-form textarea{min-height:6.5rem;resize:vertical}
.fc-form ::placeholder{color:var(--fc-muted);opacity:1}
.fc-form input[type=checkbox],.fc-form input[type=radio]{width:1.15rem;height:1.15rem;margin:.2rem 0 0;flex:none;accent-color:var(--fc-accent)}
.fc-form .fc-choice{display:flex;gap:.6rem;align-items:flex-start;margin:.4rem 0}
.fc-form .fc-choice label{display:block;margin:0;font-weight:400;color:var(--fc-text)}
.fc-form .fc-consent{font-size:.9rem;color:var(--fc-muted)}
.fc-form .fc-consent label{color:var(--fc-muted)}
.fc-form :focus-visible{outline:3px solid var(--fc-accent);outline-offset:2px}
.fc-form .fc-field [aria-invalid=true]:not([type=checkbox]):not([type=radio]){border-color:var(--fc-error);box-shadow:0 0 0 1px var(--fc-error)}
.fc-form .fc-error,.fc-form [data-formcast-error]{color:var(--fc-error);font-size:.875rem;margin:.35rem 0 0}
.fc-form [data-formcast-error]:empty{display:none}
.fc-form [data-formcast-error-summary]:empty{display:none}
.fc-form [data-formcast-error-summary]:not(:empty){margin:0 0 1.25rem;padding:.75rem 1rem;color:var(--fc-error);background:var(--fc-error-bg);border-left:4px solid var(--fc-error);border-radius:.25rem;font-weight:600}
.fc-form [data-formcast-error-summary] p{margin:0}
.fc-form .fc-submit{display:block;width:100%;min-height:2.9rem;margin:1.5rem 0 0;padding:.7rem 1.25rem;font:inherit;font-weight:600;color:var(--fc-on-brand);background:var(--fc-brand);border:1px solid var(--fc-brand-edge);border-radius:.5rem;cursor:pointer}
.fc-form .fc-submit:hover{filter:brightness(1.08)}
.fc-form .fc-submit:disabled{opacity:.65;cursor:progress}
.fc-form [data-formcast-success]{margin:0;padding:1rem 1.25rem;color:var(--fc-success);background:var(--fc-success-bg);border-radius:.5rem}
@media (max-width:30rem){.fc-form{padding:1.25rem 1rem}}
`;
}
