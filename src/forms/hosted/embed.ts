/**
 * `GET /f/{slug}/embed.js`: the script a site includes to show a published form, inline where the
 * `<script>` tag stands (INLINE_EMBED) or as an accessible popup dialog (POPUP). See docs/embedding.md.
 *
 * The script is one self-contained IIFE: a fixed runtime (src/forms/hosted/embed.runtime.ts, browser TypeScript, no
 * framework, no eval, compiled by scripts/build-embed.mjs into dist/embed/runtime.js) called with the form's
 * configuration as a JSON literal. The configuration carries the fragment markup of the form
 * (`GET /f/{slug}?fragment=1`, server-sanitised); it is JSON-encoded with `<`, `>`, `&`, U+2028 and U+2029
 * written as `\uXXXX`, so nothing in it can close a `<script>` element or end the literal, whatever the
 * markup holds.
 *
 * In the browser:
 * - the form lives in a Shadow DOM (open), so the host page's CSS does not reach it and its CSS does not
 *   leak out; the markup is parsed into an inert `<template>` and stripped again of anything active
 *   (script-like elements, `on*` attributes, `javascript:` URLs) before it is attached: defence in depth;
 *   styling is a constructed stylesheet of the shadow root plus the CSSOM, and the markup carries no `style`
 *   attributes (embedMarkup), so a host page's strict CSP (no `style-src 'unsafe-inline'`) blocks nothing;
 * - submitting is intercepted and sent as JSON to `action` (CORS), answers are shown in the
 *   `data-formcast-*` elements of the markup (field errors, error summary, success message), a REDIRECT
 *   success action is followed;
 * - POPUP: a modal dialog (role="dialog", aria-modal, labelled by the form's heading or the title, focus
 *   moved in and trapped, Esc / close button / backdrop close it, focus returns), shown automatically once
 *   per visitor (localStorage `formcast:popup:<slug>`; without storage once per page view) after
 *   `data-formcast-delay` ms on the script tag (default 2000; `off` shows it only on demand), and on click
 *   of any host-page element with `data-formcast-open` (empty, or the slug);
 * - globals: `window.Formcast` (`open(slug?)`, `close(slug?)`), only when the page has no such name, and a
 *   registry under `Symbol.for('formcast.embed')` shared by every copy of the script, so including the
 *   script twice does not create a second popup or a second set of listeners.
 */

import fs from 'node:fs';
import path from 'node:path';
import { parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';
import { unavailable } from '../../errors/errors.js';
import { PACKAGE_ROOT } from '../../lib/paths.js';
import type { EmbedConfig } from './embed.runtime.js';
import { themeCss } from '@formcast/form-appearance';
import type { FormAppearance } from '../forms/forms.schemas.js';

export interface EmbedOptions {
  slug: string;
  /** Absolute URL the form posts to: `${publicUrl}/f/${slug}`. */
  action: string;
  display: 'POPUP' | 'INLINE_EMBED';
  /** The form markup (`GET /f/{slug}?fragment=1`), sanitised by the service. */
  formHtml: string;
  /** The form's public heading: the dialog's accessible name when the markup has no heading. */
  title: string;
  /** The form's `settings.appearance`: the theme and brand colour of the shadow root's stylesheet (@formcast/form-appearance). */
  appearance?: FormAppearance;
  /** Proof of work on (docs/bot-protection.md): the widget's module script, and its stylesheet for the shadow root. */
  widget?: { script: string; css: string };
  /** Where the script reports its impression, once per page view (with its single-use token). */
  impression?: string;
}

/** JSON that can sit inside a `<script>` element (and inside JS source) whatever the strings hold. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const CSS = `
:host { all: initial; display: block; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fc-text, #1f2328); text-align: left; }
:host([hidden]) { display: none !important; }
:host([data-formcast-popup]) { position: fixed; inset: 0; z-index: 2147483647; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.fc-root { max-width: 32rem; margin: 1rem 0; }
form { margin: 0; }
h1, h2, h3 { font-size: 1.25rem; line-height: 1.3; margin: 0 0 .75rem; }
p { margin: 0 0 .75rem; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input:not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]):not([type=reset]):not([type=image]), select, textarea {
  display: block; width: 100%; min-height: 44px; margin: 0; padding: .55rem .7rem; font: inherit; font-size: max(16px, 1em);
  color: inherit; background: var(--fc-input-bg, #fff); border: 1px solid var(--fc-input-border, #6e7781); border-radius: .4rem;
}
textarea { min-height: 6rem; }
[aria-invalid=true] { border-color: var(--fc-error, #b42318) !important; }
button, input[type=submit] {
  display: inline-block; min-height: 44px; margin: 1rem 0 0; padding: .6rem 1.25rem; font: inherit; font-weight: 600;
  color: var(--fc-on-brand, #fff); background: var(--fc-brand, #0969da); border: 0; border-radius: .4rem; cursor: pointer;
}
button:disabled, input[type=submit]:disabled { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid var(--fc-accent, #0969da); outline-offset: 2px; }
[data-formcast-error] { margin: .25rem 0 0; color: #b42318; font-size: .9rem; }
[data-formcast-error]:empty, [data-formcast-error-summary]:empty, [data-formcast-success]:empty { display: none; }
[data-formcast-error-summary] { margin: 0 0 1rem; padding: .5rem .75rem; color: #b42318; background: #fff5f5; border-left: 4px solid #b42318; }
[data-formcast-error-summary] p { margin: 0; }
[data-formcast-success] { margin: 0; padding: .75rem 1rem; color: #116329; background: #dafbe1; border-radius: .4rem; }
.fc-wrap { position: fixed; inset: 0; display: flex; align-items: center; justify-content: center; padding: 1rem; }
.fc-backdrop { position: fixed; inset: 0; background: rgba(0, 0, 0, .55); }
.fc-dialog {
  position: relative; width: 100%; max-width: 30rem; max-height: calc(100vh - 2rem); overflow: auto; padding: 1.5rem;
  color: var(--fc-text, #1f2328); background: var(--fc-surface, #fff); border-radius: .75rem; box-shadow: 0 10px 40px rgba(0, 0, 0, .3);
}
.fc-dialog:focus { outline: none; }
.fc-dialog h1, .fc-dialog h2, .fc-dialog h3 { padding-right: 2.5rem; }
.fc-close {
  position: absolute; top: .5rem; right: .5rem; min-width: 44px; min-height: 44px; margin: 0; padding: 0;
  font-size: 1.75rem; line-height: 1; color: var(--fc-text, #1f2328); background: transparent;
}
@media (max-width: 30rem) { .fc-wrap { padding: .5rem; } .fc-dialog { padding: 1.25rem 1rem; max-height: calc(100vh - 1rem); } }
`;

/** After the theme: the service's form card sits flat inside the popup's dialog; answers take the theme's colours. */
const EMBED_THEMED = `.fc-dialog .fc-form { border: 0; box-shadow: none; border-radius: 0; padding: 0; background: transparent; }
.fc-dialog .fc-form .fc-heading { padding-right: 2.5rem; }
.fc-root > [data-formcast-success], .fc-dialog > [data-formcast-success] { color: var(--fc-success); background: var(--fc-success-bg); padding: 1rem 1.25rem; border-radius: .75rem; }
.fc-root > [data-formcast-success]:empty, .fc-dialog > [data-formcast-success]:empty { display: none; }
`;

type Node = DefaultTreeAdapterMap['node'];

/**
 * The markup as the embed carries it: without `style` attributes (the service's own markup uses one to
 * hide the honeypot). On a host page whose CSP has no `style-src 'unsafe-inline'` the browser would block
 * and report each of them, even while the markup is only being parsed; the script styles through a
 * stylesheet of the shadow root and the CSSOM instead, which any CSP allows.
 */
export function embedMarkup(formHtml: string): string {
  const fragment = parseFragment(formHtml);
  const walk = (node: Node): void => {
    if ('attrs' in node) node.attrs = node.attrs.filter((a) => a.name !== 'style');
    if ('content' in node) walk(node.content as unknown as Node); // <template>
    if ('childNodes' in node) for (const child of node.childNodes) walk(child as Node);
  };
  walk(fragment as unknown as Node);
  return serialize(fragment);
}

function mtime(file: string): number | null {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** The compiled runtime, where the build puts it (scripts/build-embed.mjs), and its source; under the package root. */
export const RUNTIME_FILE = 'dist/embed/runtime.js';
export const RUNTIME_SOURCE = 'src/forms/hosted/embed.runtime.ts';

/**
 * The compiled runtime of the package at `root`: dist/embed/runtime.js as the build left it (`npm install` and
 * `npm run build` make it). It is never compiled here: the compiler is a build tool, not part of the server. Without
 * the file, embed.js answers 503 saying what to run, as /app does without the console's build, and `formcast serve`
 * says so when it starts (embedRuntimeWarning): a self-hoster finds out at once, and the rest of the service works.
 */
export async function loadRuntime(root: string): Promise<string> {
  try {
    return await fs.promises.readFile(path.join(root, RUNTIME_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw unavailable(
      `the embed runtime (${RUNTIME_FILE}) is not built: run \`npm run build\` in the Formcast directory (\`npm install\` builds it)`,
    );
  }
}

/** What `formcast serve` warns about when it starts: the runtime not built, or older than its source (an edit not built). */
export function embedRuntimeWarning(root = PACKAGE_ROOT): string | null {
  const built = mtime(path.join(root, RUNTIME_FILE));
  if (built === null)
    return `the embed runtime (${RUNTIME_FILE}) is not built: GET /f/{slug}/embed.js answers 503 until \`npm run build\` builds it`;
  if ((mtime(path.join(root, RUNTIME_SOURCE)) ?? 0) > built)
    return `the embed runtime (${RUNTIME_FILE}) is older than ${RUNTIME_SOURCE}: embed.js serves the old one until \`npm run build\``;
  return null;
}

let runtime: Promise<string> | undefined;

/** The compiled runtime, loaded on the first embed.js asked for and kept (a failure is tried again next time). */
export function embedRuntime(): Promise<string> {
  runtime ??= loadRuntime(PACKAGE_ROOT).catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  return runtime;
}

/** The text of `GET /f/{slug}/embed.js` for this form. */
export async function embedScript(opts: EmbedOptions): Promise<string> {
  const cfg: EmbedConfig = {
    slug: opts.slug,
    action: opts.action,
    display: opts.display === 'POPUP' ? 'POPUP' : 'INLINE_EMBED',
    title: opts.title,
    html: embedMarkup(opts.formHtml),
    css: CSS + themeCss(opts.appearance, 'embed') + EMBED_THEMED + (opts.widget ? opts.widget.css : ''),
    ...(opts.widget ? { widget: opts.widget.script } : {}),
    ...(opts.impression ? { impression: opts.impression } : {}),
  };
  return `/* Formcast form embed: see docs/embedding.md */\n(function (cfg) {'use strict';\n${await embedRuntime()}})(${jsonForScript(cfg)});\n`;
}
