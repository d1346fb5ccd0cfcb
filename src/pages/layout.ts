import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../lib/html.js';
import { sendCompressed, sendCompressedOnce } from '../lib/compress.js';

/**
 * Public pages (unsubscribe, confirmation, sign-in, invitation, hosted forms): server-rendered, no script, every value
 * escaped, and a strict Content-Security-Policy so that even an escaping mistake could not run code.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * Whose page it is: a workspace's name and brand colour (PUT /v1/workspace `settings.brandColor`) on the pages a
 * workspace's contacts and invitees see (unsubscribe, confirmation, invitation). Without one a page has the console's
 * own look (sign-in, password reset, errors).
 */
export interface PageBrand {
  name: string;
  color?: string | null;
}

/** A brand colour as the layout uses it: `#rrggbb` only (anything else is ignored). */
const HEX = /^#[0-9a-fA-F]{6}$/;

function luminance(hex: string): number {
  const c = [1, 3, 5].map((i) => {
    const v = parseInt(hex.slice(i, i + 2), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
}

/** Black or white, whichever reads better on `hex` (WCAG contrast; the better of the two is always at least 4.58:1). */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000000' : '#ffffff';
}

/**
 * The look of the public pages: the console's colours (light, and dark under prefers-color-scheme), a card on a
 * quiet background, buttons in the accent colour. `--accent` is the workspace's brand colour when it has one.
 */
export const THEME_CSS = `:root { color-scheme: light dark;
  --bg: #f6f7f9; --surface: #ffffff; --surface-2: #f0f2f5; --border: #d5d9e0; --border-strong: #8a93a1;
  --text: #1b1f26; --muted: #545d6b; --link: #2f4fd6; --accent: #2f4fd6; --on-accent: #ffffff;
  --danger: #b42318; --danger-soft: #fdecea; --success: #17703a; --success-soft: #e4f5ea; --info-soft: #e5f0fa;
  --warning-soft: #fff3db; --warning-ink: #5c3800; --focus: #1f5fff; }
@media (prefers-color-scheme: dark) { :root {
  --bg: #0f1218; --surface: #171b23; --surface-2: #212735; --border: #323a4a; --border-strong: #6b768b;
  --text: #e7eaf0; --muted: #a9b2c1; --link: #93acff; --accent: #93acff; --on-accent: #0c1330;
  --danger: #ff9a8f; --danger-soft: #3b1714; --success: #79d9a1; --success-soft: #0f2f1d; --info-soft: #0f2638;
  --warning-soft: #33260b; --warning-ink: #f7d89c; --focus: #8fb0ff; } }
* { box-sizing: border-box; }
html { background: var(--bg); }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 2.5rem 1rem; color: var(--text); background: var(--bg); line-height: 1.5; overflow-wrap: anywhere; }
.fc-brand { max-width: 34rem; margin: 0 auto .9rem; display: flex; align-items: center; gap: .6rem; font-weight: 650; font-size: 1.05rem; }
.fc-mark { display: inline-flex; align-items: center; justify-content: center; width: 2rem; height: 2rem; flex: none; border-radius: .45rem; background: var(--accent); color: var(--on-accent); font-weight: 700; }
main { max-width: 34rem; margin: 0 auto; background: var(--surface); border: 1px solid var(--border); border-radius: .6rem; padding: 1.5rem; }
main.fc-wide { max-width: 60rem; }
h1 { font-size: 1.4rem; line-height: 1.3; margin: 0 0 .75rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
p { margin: .5rem 0; }
a { color: var(--link); }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.fc-muted, .fc-sender { color: var(--muted); }
.fc-sender { margin: -.25rem 0 1rem; font-size: .95rem; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; min-height: 2.6rem; border: 1px solid var(--accent); border-radius: .4rem; background: var(--accent); color: var(--on-accent); cursor: pointer; max-width: 100%; }
button.secondary { background: var(--surface); color: var(--text); border-color: var(--border-strong); }
button:hover { filter: brightness(1.08); }
main > form + form, .fc-actions > form + form { margin-top: .6rem; }
form { margin: 0; }
fieldset { border: 1px solid var(--border); border-radius: .4rem; margin: 1rem 0; padding: .5rem 1rem .75rem; min-width: 0; }
legend { padding: 0 .3rem; font-weight: 600; }
label { display: block; margin: .35rem 0; }
label.fc-check { display: flex; gap: .5rem; align-items: flex-start; }
input, select, textarea { font: inherit; width: 100%; padding: .5rem; border: 1px solid var(--border-strong); border-radius: .4rem; background: var(--surface); color: var(--text); }
input[type=checkbox], input[type=radio] { width: 1.1rem; height: 1.1rem; margin: .2rem 0 0; flex: none; accent-color: var(--accent); }
input:disabled + span { color: var(--muted); }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .9em; }
.fc-field { margin: 0 0 1rem; }
.fc-error { color: var(--danger); margin: .25rem 0 0; font-size: .95rem; }
.fc-state { border-radius: .4rem; padding: .75rem 1rem; margin: 0 0 1rem; border: 1px solid var(--border); background: var(--surface-2); }
.fc-state strong { display: block; }
.fc-state.ok { background: var(--success-soft); }
.fc-state.off { background: var(--warning-soft); color: var(--warning-ink); }
.fc-state.blocked { background: var(--danger-soft); }
.fc-notice { border-left: 4px solid var(--accent); background: var(--info-soft); padding: .6rem .9rem; border-radius: .3rem; margin: 0 0 1rem; }
.fc-foot { max-width: 34rem; margin: 1rem auto 0; font-size: .85rem; color: var(--muted); text-align: center; }
details { margin: .75rem 0; }
summary { cursor: pointer; color: var(--link); }
`;

/** The CSS that makes `color` the page's accent (buttons, the brand mark), light and dark alike. */
export function brandCss(color: string | null | undefined): string {
  if (!color || !HEX.test(color)) return '';
  const c = color.toLowerCase();
  const vars = `--accent: ${c}; --on-accent: ${textOn(c)};`;
  return `:root { ${vars} }\n@media (prefers-color-scheme: dark) { :root { ${vars} } }\n`;
}

/** The hosted forms' own base styles (their appearance settings add the rest: forms/hosted). */
const FORM_CSS = `
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1f2328; line-height: 1.5; }
  h1 { font-size: 1.4rem; }
  button { font: inherit; padding: .6rem 1.2rem; border: 0; border-radius: .4rem; background: #1f6feb; color: #fff; cursor: pointer; }
  button.secondary { background: #eaeef2; color: #1f2328; }
  main > form + form { margin-top: .6rem; }
  fieldset { border: 1px solid #d0d7de; border-radius: .4rem; margin: 1rem 0; }
  label { display: block; margin: .3rem 0; }
  input, select, textarea { font: inherit; width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #8c959f; border-radius: .4rem; }
  input[type=checkbox], input[type=radio] { width: auto; }
  .fc-field { margin: 0 0 1rem; }
  .fc-error, [data-formcast-error] { color: #cf222e; margin: .25rem 0 0; font-size: .9rem; }
  [data-formcast-error-summary]:not(:empty) { color: #cf222e; font-weight: 600; }
  [aria-invalid=true] { border-color: #cf222e; }
  [data-formcast-success] { font-size: 1.1rem; }
  .fc-hp { position: absolute; left: -10000px; top: auto; width: 1px; height: 1px; overflow: hidden; }
`;

export interface PageOptions {
  head?: string;
  lang?: string;
  /** The workspace the page speaks for; none: the console's look with Formcast's name. */
  brand?: PageBrand | null;
  /** A hosted form's page: its own base styles, which its appearance settings complete (no theme, no brand header). */
  form?: boolean;
  /** A page of tables (the error catalogue): a wider card. */
  wide?: boolean;
}

/** The header of a themed page: the workspace's initial in its colour and its name (or Formcast's). */
function brandHeader(brand: PageBrand | null | undefined): string {
  const name = brand?.name?.trim() || 'Formcast';
  const initial = [...name][0]!.toUpperCase();
  return `<header class="fc-brand"><span class="fc-mark" aria-hidden="true">${escapeHtml(initial)}</span><span>${escapeHtml(name)}</span></header>\n`;
}

export function page(title: string, body: string, head = '', lang = 'en', opts: PageOptions = {}): string {
  if (opts.form)
    return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${head}<style>${FORM_CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${head}<style>
${THEME_CSS}${brandCss(opts.brand?.color)}</style>
</head>
<body>
${brandHeader(opts.brand)}<main${opts.wide ? ' class="fc-wide"' : ''}>
${body}
</main>
</body>
</html>
`;
}

/**
 * Sends a page. `once` names a page that is the same every time for its key (a hosted form's page or success
 * page, keyed by the cached form): it is made and compressed once (http/compress.ts, sendCompressedOnce).
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string | (() => string),
  opts: {
    head?: string | (() => string);
    csp?: string;
    lang?: string;
    once?: { key: object; name: string };
    brand?: PageBrand | null;
    form?: boolean;
    wide?: boolean;
  } = {},
): FastifyReply {
  reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', opts.csp ?? PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
  const make = () =>
    page(
      title,
      typeof body === 'function' ? body() : body,
      typeof opts.head === 'function' ? opts.head() : opts.head,
      opts.lang,
      { brand: opts.brand, form: opts.form, wide: opts.wide },
    );
  // Compressed (br or gzip) for browsers that accept it.
  if (opts.once) return sendCompressedOnce(reply.request, reply, opts.once.key, opts.once.name, make);
  return sendCompressed(reply.request, reply, make());
}
