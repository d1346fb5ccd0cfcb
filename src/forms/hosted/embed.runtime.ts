/**
 * The browser side of `GET /f/{slug}/embed.js` (src/forms/hosted/embed.ts says what it does and docs/embedding.md how a
 * site uses it). It never runs in Node: scripts/build-embed.mjs compiles it with esbuild for ES2018 browsers into
 * dist/embed/runtime.js, a script that calls `runEmbed(cfg)`, and the server serves that inside
 * `(function (cfg) { 'use strict'; … })(<the form's configuration>)`: one self-contained IIFE per form.
 *
 * Checked by tsconfig.embed.json (ES2018 and the DOM only: no Node globals, no newer built-ins that esbuild
 * would not lower) and linted with browser globals, no eval and no `new Function` (eslint.config.js).
 * Styling goes through the shadow root's stylesheet and the CSSOM, never `style` attributes, so a host page's
 * strict Content-Security-Policy blocks nothing.
 */

/** The configuration the server calls the runtime with (a JSON literal in the script). */
export interface EmbedConfig {
  slug: string;
  /** Absolute URL the form posts to: `${publicUrl}/f/${slug}`. */
  action: string;
  display: 'POPUP' | 'INLINE_EMBED';
  /** The form's name: the dialog's accessible name when the markup has no heading. */
  title: string;
  /** The form markup, sanitised by the service, without `style` attributes (embedMarkup). */
  html: string;
  /** The shadow root's stylesheet. */
  css: string;
  /** The proof-of-work widget's module script (docs/bot-protection.md), when the form asks for a proof of work. */
  widget?: string;
  /** Where to report this page view's impression (a signed single-use token in the address). */
  impression?: string;
}

/** The ALTCHA widget element, as far as the runtime uses it. */
interface PowWidget extends HTMLElement {
  getState(): string;
  verify(): Promise<unknown>;
  reset(): void;
}

/** A popup as the registry holds it; the shape is shared with every other copy (and version) of the script on the page. */
interface Popup {
  open(opener: HTMLElement | null): void;
  close(): void;
}

interface Registry {
  popups: Record<string, Popup>;
  seen: Record<string, boolean>;
  listening: boolean;
  uid: number;
  /** Slugs whose impression this page view reported (absent in registries made by older copies of the script). */
  counted?: Record<string, boolean>;
  /** The widget's script was added to the page. */
  widget?: boolean;
}

interface FormcastApi {
  version: number;
  open(slug?: string): boolean;
  close(slug?: string): boolean;
}

/** What a submission is answered with (docs/embedding.md, "Submitting from your own code"). */
interface Answer {
  ok?: unknown;
  message?: unknown;
  redirect?: unknown;
  errors?: unknown;
  /** A problem document (proof_of_work_failed). */
  code?: unknown;
  detail?: unknown;
}

interface Hooks {
  success(): void;
}

const MSG = {
  network: 'The form could not be sent. Please check your connection and try again.',
  failed: 'Something went wrong. Please try again in a moment.',
  rate: 'Too many attempts. Please wait a little and try again.',
  thanks: 'Thank you!',
};

// Second line of defence: the markup is sanitised by the service; strip anything active again.
const DROP = /^(script|iframe|frame|frameset|object|embed|applet|base|meta|link|noscript|portal)$/;
const URL_ATTRS = /^(href|src|action|formaction|xlink:href|poster|background|ping|cite|data)$/;
// Browsers ignore control characters and spaces inside a URL's scheme (`java\0script:`): they go before the test.
// eslint-disable-next-line no-control-regex
const IGNORED_IN_SCHEME = /[\u0000-\u0020]/g;

function attr(el: Element, name: string): string | null {
  return el.getAttribute(name);
}

function all<E extends Element = HTMLElement>(root: ParentNode, selector: string): E[] {
  return Array.prototype.slice.call(root.querySelectorAll(selector));
}

function has(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function clean(root: ParentNode): void {
  const els = root.querySelectorAll('*');
  for (let i = 0; i < els.length; i++) {
    const el = els[i]!;
    if (DROP.test(el.localName)) {
      el.remove();
      continue;
    }
    for (let j = el.attributes.length - 1; j >= 0; j--) {
      const a = el.attributes[j]!,
        name = a.name.toLowerCase(),
        value = a.value.replace(IGNORED_IN_SCHEME, '').toLowerCase();
      // style attributes too: a host page whose CSP has no 'unsafe-inline' would block (and report) them;
      // the stylesheet and the CSSOM (allowed under any CSP) do the styling.
      if (name.indexOf('on') === 0 || name === 'srcdoc' || name === 'style') el.removeAttribute(a.name);
      else if (
        URL_ATTRS.test(name) &&
        /^(javascript|vbscript|data):/.test(value) &&
        !(el.localName === 'img' && name === 'src' && value.indexOf('data:image/') === 0)
      )
        el.removeAttribute(a.name);
    }
  }
}

function focusables(root: ParentNode): HTMLElement[] {
  return all<HTMLElement & { disabled?: boolean; type?: string }>(
    root,
    'a[href], area[href], button, input, select, textarea, iframe, [tabindex], [contenteditable=true]',
  ).filter((el) => {
    if (el.disabled || el.tabIndex < 0 || el.getAttribute('aria-hidden') === 'true' || el.type === 'hidden')
      return false;
    for (let n: Node | null = el; n && n.nodeType === 1; n = n.parentNode) {
      if ((n as HTMLElement).hidden || (n as Element).getAttribute('aria-hidden') === 'true') return false;
    }
    return el.getClientRects().length > 0;
  });
}

/** Shows the form of `cfg` on this page: inline where the script tag stands, or as a popup. */
export function runEmbed(cfg: EmbedConfig): void {
  const win = window as Window & { Formcast?: FormcastApi };
  const slots = window as unknown as Record<string | symbol, Registry | undefined>;
  const doc = document;
  const script = doc.currentScript;
  const slug = String(cfg.slug);
  const REG_KEY = typeof Symbol === 'function' && Symbol.for ? Symbol.for('formcast.embed') : '__formcastEmbed';
  let reg = slots[REG_KEY];
  if (!reg) {
    reg = { popups: {}, seen: {}, listening: false, uid: 0 };
    try {
      Object.defineProperty(win, REG_KEY, { value: reg });
    } catch {
      slots[REG_KEY] = reg;
    }
  }
  const registry: Registry = reg;
  if (!('Formcast' in win)) {
    const pick = (s?: string): Popup | null => {
      if (s) return registry.popups[s] || null;
      for (const k in registry.popups) if (has(registry.popups, k)) return registry.popups[k]!;
      return null;
    };
    win.Formcast = {
      version: 1,
      open(s) {
        const p = pick(s);
        if (p) p.open(null);
        return !!p;
      },
      close(s) {
        const p = pick(s);
        if (p) p.close();
        return !!p;
      },
    };
  }

  // The impression of this page view: once per form, however often the script is included or the popup opened.
  const counted = registry.counted || (registry.counted = {});
  if (cfg.impression && !counted[slug]) {
    counted[slug] = true;
    try {
      // A simple cross-origin request (no body, no custom header): no preflight; the answer does not matter.
      fetch(cfg.impression, { method: 'POST', mode: 'cors', credentials: 'omit', keepalive: true }).catch(() => {
        /* not counted */
      });
    } catch {
      /* not counted */
    }
  }
  // The proof-of-work widget (a custom element): its script once per page, from the service's origin.
  if (cfg.widget && !registry.widget && !(win.customElements && win.customElements.get('altcha-widget'))) {
    registry.widget = true;
    const s = doc.createElement('script');
    s.type = 'module';
    s.src = cfg.widget;
    s.crossOrigin = 'anonymous';
    (doc.head || doc.documentElement).appendChild(s);
  }

  function uid(prefix: string): string {
    registry.uid += 1;
    return prefix + registry.uid;
  }

  function whenReady(fn: () => void): void {
    if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', fn, { once: true });
    else fn();
  }

  function isHttpUrl(value: string): boolean {
    try {
      const u = new URL(value, cfg.action);
      return u.protocol === 'https:' || u.protocol === 'http:';
    } catch {
      return false;
    }
  }

  function attachStyles(root: ShadowRoot): void {
    try {
      if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function') {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(cfg.css);
        root.adoptedStyleSheets = [sheet];
        return;
      }
    } catch {
      /* fall back to a style element */
    }
    const style = doc.createElement('style');
    style.textContent = cfg.css;
    root.appendChild(style);
  }

  function shadowOf(host: HTMLElement): ShadowRoot {
    let root: ShadowRoot;
    try {
      root = host.attachShadow({ mode: 'open' });
    } catch {
      const inner = doc.createElement('div');
      host.appendChild(inner);
      root = inner.attachShadow({ mode: 'open' });
    }
    attachStyles(root);
    return root;
  }

  /** The form markup as a detached fragment. */
  function markup(): DocumentFragment {
    const tpl = doc.createElement('template');
    tpl.innerHTML = cfg.html;
    clean(tpl.content); // while still inert, before anything in it can load or apply
    return doc.importNode(tpl.content, true);
  }

  /** Wires the form found under root: JSON submission and the data-formcast-* elements. */
  function wire(root: ShadowRoot, hooks: Hooks | null): HTMLFormElement | null {
    const form = root.querySelector<HTMLFormElement>('form[data-formcast-form]') || root.querySelector('form');
    if (!form) return null;
    form.setAttribute('action', cfg.action);
    form.setAttribute('method', 'post');

    let summary = root.querySelector<HTMLElement>('[data-formcast-error-summary]');
    if (!summary) {
      summary = doc.createElement('div');
      summary.setAttribute('data-formcast-error-summary', '');
      form.insertBefore(summary, form.firstChild);
    }
    summary.setAttribute('role', 'alert');
    summary.setAttribute('tabindex', '-1');
    const theSummary: HTMLElement = summary;

    let success = root.querySelector<HTMLElement>('[data-formcast-success]');
    if (!success) {
      success = doc.createElement('p');
      success.setAttribute('data-formcast-success', '');
      form.parentNode!.insertBefore(success, form.nextSibling);
    }
    success.setAttribute('role', 'status');
    success.setAttribute('aria-live', 'polite');
    success.setAttribute('tabindex', '-1');
    const theSuccess: HTMLElement = success;

    // The honeypot stays in the form (bots fill it) but out of sight and out of the tab order.
    const hp = form.querySelector<HTMLElement>('[name="_fc_hp"]');
    if (hp) {
      // The outermost wrapper that holds nothing else a person fills in.
      let box = hp;
      while (
        box.parentElement &&
        box.parentElement !== form &&
        !box.parentElement.querySelector('input:not([name="_fc_hp"]), select, textarea, button')
      )
        box = box.parentElement;
      box.setAttribute('aria-hidden', 'true');
      const hide: Record<string, string> = {
        position: 'absolute',
        left: '-10000px',
        top: 'auto',
        width: '1px',
        height: '1px',
        overflow: 'hidden',
      };
      for (const p in hide) box.style.setProperty(p, hide[p]!, 'important');
      hp.setAttribute('tabindex', '-1');
      hp.setAttribute('autocomplete', 'off');
    }

    let busy = false;
    let described: { control: HTMLElement; id: string }[] = [];

    function control(field: string): HTMLElement | null {
      let c: unknown = form!.elements.namedItem(field);
      // Several controls of that name (radio buttons): the first. A <select> has a length too, and a tag name.
      if (c && typeof (c as RadioNodeList).length === 'number' && !(c as Element).tagName) c = (c as RadioNodeList)[0];
      return c && (c as Element).setAttribute ? (c as HTMLElement) : null;
    }
    function errorElement(field: string): HTMLElement | null {
      const els = all(root, '[data-formcast-error]');
      for (let i = 0; i < els.length; i++) if (attr(els[i]!, 'data-formcast-error') === field) return els[i]!;
      return null;
    }
    function clearErrors(): void {
      all(root, '[data-formcast-error]').forEach((el) => {
        el.textContent = '';
      });
      all(form!, '[aria-invalid]').forEach((el) => {
        el.removeAttribute('aria-invalid');
      });
      described.forEach((d) => {
        const ids = (attr(d.control, 'aria-describedby') || '').split(/\s+/).filter((id) => id && id !== d.id);
        if (ids.length) d.control.setAttribute('aria-describedby', ids.join(' '));
        else d.control.removeAttribute('aria-describedby');
      });
      described = [];
      theSummary.textContent = '';
    }
    function showSummary(messages: string[]): void {
      theSummary.textContent = '';
      messages.forEach((m) => {
        const p = doc.createElement('p');
        p.textContent = m;
        theSummary.appendChild(p);
      });
      theSummary.hidden = false;
    }
    function showErrors(errors: unknown[]): void {
      const loose: string[] = [];
      let first: HTMLElement | null = null;
      for (const e of errors) {
        const error = e && typeof e === 'object' ? (e as { field?: unknown; message?: unknown }) : null;
        const field = error && typeof error.field === 'string' ? error.field : null;
        const message = error && typeof error.message === 'string' ? error.message : MSG.failed;
        let el = field !== null ? errorElement(field) : null;
        const c = field !== null ? control(field) : null;
        if (c) {
          c.setAttribute('aria-invalid', 'true');
          if (!first) first = c;
        }
        if (!el && c) {
          // No place marked for it: right after the control, as the hosted page does.
          el = doc.createElement('p');
          el.setAttribute('data-formcast-error', field!);
          c.parentNode!.insertBefore(el, c.nextSibling);
        }
        if (!el) {
          loose.push(message);
          continue;
        }
        el.textContent = el.textContent ? el.textContent + ' ' + message : message;
        el.hidden = false;
        if (!el.id) el.id = uid('fc-error-');
        if (c) {
          const ids = (attr(c, 'aria-describedby') || '').split(/\s+/).filter(Boolean);
          if (ids.indexOf(el.id) < 0) {
            ids.push(el.id);
            c.setAttribute('aria-describedby', ids.join(' '));
            described.push({ control: c, id: el.id });
          }
        }
      }
      if (loose.length) showSummary(loose);
      if (first) first.focus();
      else if (loose.length) theSummary.focus();
    }
    function showSuccess(message: string): void {
      theSuccess.textContent = message;
      theSuccess.hidden = false;
      if (form!.contains(theSuccess)) {
        Array.prototype.forEach.call(form!.children, (el: HTMLElement) => {
          if (el !== theSuccess && !el.contains(theSuccess)) el.hidden = true;
        });
      } else form!.hidden = true;
      theSuccess.focus();
    }
    function setBusy(on: boolean): void {
      busy = on;
      if (on) form!.setAttribute('aria-busy', 'true');
      else form!.removeAttribute('aria-busy');
      all<HTMLButtonElement | HTMLInputElement>(form!, 'button, input[type=submit]').forEach((b) => {
        if (on) {
          if (!b.disabled) {
            b.disabled = true;
            b.setAttribute('data-formcast-busy', '');
          }
        } else if (b.hasAttribute('data-formcast-busy')) {
          b.disabled = false;
          b.removeAttribute('data-formcast-busy');
        }
      });
    }
    function body(): string {
      // The browser's time zone, for a form that asks for it (settings.captureTimezone, docs/forms.md).
      const tz = form!.querySelector<HTMLInputElement>('input[data-formcast-tz]');
      if (tz) {
        try {
          tz.value = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
        } catch {
          tz.value = '';
        }
      }
      const out: Record<string, string | string[]> = Object.create(null);
      new FormData(form!).forEach((value, key) => {
        if (typeof value !== 'string') return;
        if (has(out, key)) out[key] = ([] as string[]).concat(out[key]!, value);
        else out[key] = value;
      });
      return JSON.stringify(out);
    }

    /** Resolves once the form's proof of work (if it has one) is done, successfully or not: the server has the last word. */
    function proved(): Promise<void> {
      const w = form!.querySelector('altcha-widget') as PowWidget | null;
      if (!w || typeof w.getState !== 'function') return Promise.resolve();
      const state = w.getState();
      if (state === 'verified') return Promise.resolve();
      return new Promise<void>((resolve) => {
        if (state !== 'verifying') {
          w.verify().then(
            () => resolve(),
            () => resolve(),
          );
          return;
        }
        const on = (ev: Event): void => {
          const s =
            (ev as CustomEvent<{ state?: string }>).detail && (ev as CustomEvent<{ state?: string }>).detail.state;
          if (s === 'verified' || s === 'error') {
            w.removeEventListener('statechange', on);
            resolve();
          }
        };
        w.addEventListener('statechange', on);
      });
    }

    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (busy) return;
      clearErrors();
      setBusy(true);
      proved().then(() => {
        send(false);
      });
    });

    function send(retried: boolean): void {
      const payload = body();
      fetch(cfg.action, {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
      })
        .then((res) => {
          return res.json().then(
            (data: unknown) => ({ status: res.status, data }),
            () => ({ status: res.status, data: null }),
          );
        })
        .then(
          (r) => {
            const data = r.data && typeof r.data === 'object' ? (r.data as Answer) : null;
            const w = form!.querySelector('altcha-widget') as PowWidget | null;
            if (data && data.code === 'proof_of_work_failed' && !retried && w && typeof w.reset === 'function') {
              // Expired, or already used: a new check, and the same submission once more, without the visitor doing anything.
              w.reset();
              proved().then(() => {
                send(true);
              });
              return;
            }
            setBusy(false);
            if (data && data.ok === true && r.status < 300) {
              if (hooks && hooks.success) hooks.success();
              if (typeof data.redirect === 'string' && isHttpUrl(data.redirect)) {
                win.location.assign(data.redirect);
                return;
              }
              showSuccess(typeof data.message === 'string' && data.message ? data.message : MSG.thanks);
            } else if (data && Array.isArray(data.errors) && data.errors.length) {
              showErrors(data.errors);
            } else if (data && data.code === 'proof_of_work_failed' && typeof data.detail === 'string') {
              if (w && typeof w.reset === 'function') w.reset();
              showSummary([data.detail]);
              theSummary.focus();
            } else {
              showSummary([r.status === 429 ? MSG.rate : MSG.failed]);
              theSummary.focus();
            }
          },
          () => {
            setBusy(false);
            showSummary([MSG.network]);
            theSummary.focus();
          },
        );
    }
    return form;
  }

  /** The element that has focus, looking into shadow roots. */
  function activeElement(): HTMLElement | null {
    let a = doc.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a as HTMLElement | null;
  }

  function renderInline(): void {
    const host = doc.createElement('div');
    host.setAttribute('data-formcast-embed', slug);
    host.setAttribute('data-formcast-ready', '');
    function place(): HTMLElement {
      const target = script && script.parentNode && doc.body && doc.body.contains(script) ? script : null;
      if (target) {
        target.parentNode!.insertBefore(host, target.nextSibling);
        return host;
      }
      // The script is in <head> (or was run without a currentScript): an empty placeholder for this
      // slug, else the end of <body>.
      const holders = all(doc, '[data-formcast-embed]');
      for (let i = 0; i < holders.length; i++) {
        const holder = holders[i]!;
        if (attr(holder, 'data-formcast-embed') === slug && !holder.hasAttribute('data-formcast-ready')) {
          holder.setAttribute('data-formcast-ready', '');
          return holder;
        }
      }
      doc.body.appendChild(host);
      return host;
    }
    function render(): void {
      const where = place();
      const root = shadowOf(where);
      const wrap = doc.createElement('div');
      wrap.className = 'fc-root';
      wrap.appendChild(markup());
      root.appendChild(wrap);
      wire(root, null);
    }
    if (script && doc.body && doc.body.contains(script)) render();
    else whenReady(render);
  }

  function storageKey(): string {
    return 'formcast:popup:' + slug;
  }
  function seen(): boolean {
    if (registry.seen[slug]) return true;
    try {
      return win.localStorage.getItem(storageKey()) !== null;
    } catch {
      return false;
    }
  }
  function markSeen(): void {
    registry.seen[slug] = true;
    try {
      win.localStorage.setItem(storageKey(), new Date().toISOString());
    } catch {
      /* once per page view */
    }
  }

  function renderPopup(): void {
    if (registry.popups[slug]) return; // included twice: one popup per form
    // Until the page is ready, an open() is remembered and done then.
    const pending: (HTMLElement | null)[] = [];
    const popup: Popup = {
      open(opener) {
        pending.push(opener);
      },
      close() {
        /* not open yet */
      },
    };
    registry.popups[slug] = popup;

    whenReady(() => {
      const host = doc.createElement('div');
      host.setAttribute('data-formcast-popup', slug);
      host.hidden = true;
      const root = shadowOf(host);
      const wrap = doc.createElement('div');
      wrap.className = 'fc-wrap';
      const backdrop = doc.createElement('div');
      backdrop.className = 'fc-backdrop';
      const dialog = doc.createElement('div');
      dialog.className = 'fc-dialog';
      dialog.setAttribute('role', 'dialog');
      dialog.setAttribute('aria-modal', 'true');
      dialog.setAttribute('tabindex', '-1');
      const close = doc.createElement('button');
      close.type = 'button';
      close.className = 'fc-close';
      close.setAttribute('aria-label', 'Close');
      close.textContent = '\u00d7';
      const content = markup();
      let heading = content.querySelector('h1, h2, h3');
      if (!heading) {
        heading = doc.createElement('h2');
        heading.textContent = cfg.title;
        content.insertBefore(heading, content.firstChild);
      }
      if (!heading.id) heading.id = uid('fc-title-');
      dialog.setAttribute('aria-labelledby', heading.id);
      dialog.appendChild(content);
      dialog.appendChild(close);
      wrap.appendChild(backdrop);
      wrap.appendChild(dialog);
      root.appendChild(wrap);
      doc.body.appendChild(host);
      wire(root, { success: markSeen });

      let returnTo: HTMLElement | null = null,
        overflow = '';
      function isOpen(): boolean {
        return !host.hidden;
      }
      function first(): HTMLElement {
        const els = focusables(dialog);
        const fields = els.filter((el) => el !== close);
        return fields[0] || els[0] || dialog;
      }
      function onKey(ev: KeyboardEvent): void {
        if (!isOpen()) return;
        if (ev.key === 'Escape' || ev.key === 'Esc') {
          ev.preventDefault();
          popup.close();
          return;
        }
        if (ev.key !== 'Tab') return;
        const els = focusables(dialog);
        if (!els.length) {
          ev.preventDefault();
          dialog.focus();
          return;
        }
        const active = root.activeElement;
        const firstEl = els[0]!,
          lastEl = els[els.length - 1]!;
        if (ev.shiftKey && (active === firstEl || active === dialog || !dialog.contains(active))) {
          ev.preventDefault();
          lastEl.focus();
        } else if (!ev.shiftKey && (active === lastEl || !dialog.contains(active))) {
          ev.preventDefault();
          firstEl.focus();
        }
      }
      function onFocusIn(ev: FocusEvent): void {
        // Focus that lands outside the dialog (a click, a script) is brought back.
        if (isOpen() && ev.target !== host) first().focus();
      }
      popup.open = (opener) => {
        if (isOpen()) return;
        markSeen();
        const active = opener && typeof opener.focus === 'function' ? opener : activeElement();
        returnTo = active && active !== doc.body ? active : null;
        host.hidden = false;
        overflow = doc.documentElement.style.overflow;
        doc.documentElement.style.overflow = 'hidden';
        doc.addEventListener('keydown', onKey, true);
        doc.addEventListener('focusin', onFocusIn, true);
        first().focus();
      };
      popup.close = () => {
        if (!isOpen()) return;
        host.hidden = true;
        doc.documentElement.style.overflow = overflow;
        doc.removeEventListener('keydown', onKey, true);
        doc.removeEventListener('focusin', onFocusIn, true);
        const back = returnTo;
        returnTo = null;
        if (back && back.isConnected && typeof back.focus === 'function') back.focus();
      };
      close.addEventListener('click', () => {
        popup.close();
      });
      backdrop.addEventListener('click', () => {
        popup.close();
      });

      if (pending.length) popup.open(pending[pending.length - 1]!);
      else {
        const delay = script ? attr(script, 'data-formcast-delay') : null;
        if (delay !== 'off' && !seen()) {
          const ms = delay === null || delay === '' || isNaN(Number(delay)) ? 2000 : Math.max(0, Number(delay));
          setTimeout(() => {
            if (!seen()) popup.open(null);
          }, ms);
        }
      }
    });

    if (!registry.listening) {
      registry.listening = true;
      doc.addEventListener('click', (ev) => {
        const t = ev.target as Element | null;
        const opener = t && t.closest ? t.closest<HTMLElement>('[data-formcast-open]') : null;
        if (!opener) return;
        const want = attr(opener, 'data-formcast-open');
        let p: Popup | null = null;
        if (want) p = registry.popups[want] || null;
        else
          for (const k in registry.popups)
            if (has(registry.popups, k)) {
              p = registry.popups[k]!;
              break;
            }
        if (!p) return;
        ev.preventDefault();
        p.open(opener);
      });
    }
  }

  if (cfg.display === 'POPUP') renderPopup();
  else renderInline();
}
