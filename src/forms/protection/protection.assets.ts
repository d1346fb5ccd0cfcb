/**
 * The ALTCHA widget (the `altcha` package, MIT), served from this origin: never from a CDN, so a visitor's browser
 * talks to nobody but the service. `GET /assets/altcha/<name>`:
 * - `widget.js`: the widget's ES module build without bundled workers or styles (`altcha/external`), followed by a few
 *   lines of ours (GLUE) that register the PBKDF2 worker and, on the hosted page, make a submit that comes before the
 *   check has finished wait for it;
 * - `pbkdf2.js`: the worker that solves the challenge;
 * - `altcha.css`: the widget's stylesheet (the embeds carry it in their shadow root's stylesheet instead).
 * Read once, and compressed once per encoding (http/compress.ts).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { WidgetFile } from './protection.schemas.js';

/** Changes when the package does: the assets' addresses carry it, so they can be cached for long. */
export const WIDGET_VERSION = '3.2.2';

const GLUE = `
;(() => {
  const A = globalThis.$altcha;
  if (!A) return;
  const worker = new URL('pbkdf2.js', import.meta.url).href;
  let made = null;
  const create = () => {
    if (new URL(worker).origin === location.origin) return new Worker(worker);
    // On another site (an embed) a worker must come from the page's own origin: it is made from the script's text.
    made = made || fetch(worker, { credentials: 'omit' }).then((r) => r.text()).then((t) => URL.createObjectURL(new Blob([t], { type: 'text/javascript' })));
    return made.then((u) => new Worker(u));
  };
  A.algorithms.set('PBKDF2/SHA-256', create);
  const settled = (w) => new Promise((resolve) => {
    const s = w.getState();
    if (s === 'verified' || s === 'error') return resolve();
    if (s !== 'verifying') { Promise.resolve(w.verify()).then(() => resolve(), () => resolve()); return; }
    const on = (ev) => { const st = ev.detail && ev.detail.state; if (st === 'verified' || st === 'error') { w.removeEventListener('statechange', on); resolve(); } };
    w.addEventListener('statechange', on);
  });
  // The hosted page: a person who sends the form before the check has finished waits for it instead of being refused.
  document.addEventListener('submit', (ev) => {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-formcast-form')) return;
    const w = form.querySelector('altcha-widget');
    if (!w || typeof w.getState !== 'function' || w.getState() === 'verified') return;
    ev.preventDefault();
    ev.stopImmediatePropagation();
    const submitter = ev.submitter || undefined;
    settled(w).then(() => { if (w.getState() === 'verified') form.requestSubmit(submitter); });
  }, true);
})();
`;

export interface Asset {
  body: Buffer;
  type: string;
}

let assets: Map<WidgetFile, Asset> | undefined;

function load(): Map<WidgetFile, Asset> {
  const external = path.dirname(createRequire(import.meta.url).resolve('altcha/external'));
  const read = (...p: string[]) => fs.readFileSync(path.join(external, ...p), 'utf8');
  // Keyed by the names the route's schema allows (protection.schemas.ts), so the two cannot drift apart.
  return new Map<WidgetFile, Asset>([
    [
      'widget.js',
      {
        body: Buffer.from(
          `/* ALTCHA ${WIDGET_VERSION} (MIT, https://altcha.org), served by Formcast */\n${read('altcha.min.js')}\n${GLUE}`,
        ),
        type: 'text/javascript; charset=utf-8',
      },
    ],
    ['pbkdf2.js', { body: Buffer.from(read('..', 'workers', 'pbkdf2.js')), type: 'text/javascript; charset=utf-8' }],
    ['altcha.css', { body: Buffer.from(read('altcha.css')), type: 'text/css; charset=utf-8' }],
  ]);
}

/** An asset by name (the route's schema admits only these names). */
export function widgetAsset(name: WidgetFile): Asset {
  assets ??= load();
  const asset = assets.get(name);
  if (!asset) throw new Error(`the widget has no file ${name}`);
  return asset;
}

/** The widget's stylesheet for an embed's shadow root: its custom properties on the host instead of the document. */
export function widgetCssForShadow(): string {
  return widgetAsset('altcha.css')
    .body.toString('utf8')
    .replace(/:root\b/g, ':host');
}
