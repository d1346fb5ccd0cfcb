/**
 * `GET /f/{slug}/embed.js`: the script a site includes to show a published form, inline where the
 * `<script>` tag stands (INLINE_EMBED) or as an accessible popup dialog (POPUP). See docs/embedding.md.
 *
 * The script is one self-contained IIFE: a fixed runtime (RUNTIME below, plain browser JavaScript, no
 * framework, no eval) called with the form's configuration as a JSON literal. The configuration carries
 * the fragment markup of the form (`GET /f/{slug}?fragment=1`, server-sanitised); it is JSON-encoded with
 * `<`, `>`, `&`, U+2028 and U+2029 written as `\uXXXX`, so nothing in it can close a `<script>` element or
 * end the literal, whatever the markup holds.
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

import { parseFragment, serialize, type DefaultTreeAdapterMap } from 'parse5';

export interface EmbedOptions {
  slug: string;
  /** Absolute URL the form posts to: `${publicUrl}/f/${slug}`. */
  action: string;
  display: 'POPUP' | 'INLINE_EMBED';
  /** The form markup (`GET /f/{slug}?fragment=1`), sanitised by the service. */
  formHtml: string;
  /** The form's name: the dialog's accessible name when the markup has no heading. */
  title: string;
}

/** JSON that can sit inside a `<script>` element (and inside JS source) whatever the strings hold. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const CSS = `
:host { all: initial; display: block; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2328; text-align: left; }
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
  color: inherit; background: #fff; border: 1px solid #6e7781; border-radius: .4rem;
}
textarea { min-height: 6rem; }
[aria-invalid=true] { border-color: #b42318 !important; }
button, input[type=submit] {
  display: inline-block; min-height: 44px; margin: 1rem 0 0; padding: .6rem 1.25rem; font: inherit; font-weight: 600;
  color: #fff; background: #0969da; border: 0; border-radius: .4rem; cursor: pointer;
}
button:disabled, input[type=submit]:disabled { opacity: .6; cursor: progress; }
:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
[data-formcast-error] { margin: .25rem 0 0; color: #b42318; font-size: .9rem; }
[data-formcast-error]:empty, [data-formcast-error-summary]:empty, [data-formcast-success]:empty { display: none; }
[data-formcast-error-summary] { margin: 0 0 1rem; padding: .5rem .75rem; color: #b42318; background: #fff5f5; border-left: 4px solid #b42318; }
[data-formcast-error-summary] p { margin: 0; }
[data-formcast-success] { margin: 0; padding: .75rem 1rem; color: #116329; background: #dafbe1; border-radius: .4rem; }
.fc-wrap { position: fixed; inset: 0; display: flex; align-items: center; justify-content: center; padding: 1rem; }
.fc-backdrop { position: fixed; inset: 0; background: rgba(0, 0, 0, .55); }
.fc-dialog {
  position: relative; width: 100%; max-width: 30rem; max-height: calc(100vh - 2rem); overflow: auto; padding: 1.5rem;
  background: #fff; border-radius: .75rem; box-shadow: 0 10px 40px rgba(0, 0, 0, .3);
}
.fc-dialog:focus { outline: none; }
.fc-dialog h1, .fc-dialog h2, .fc-dialog h3 { padding-right: 2.5rem; }
.fc-close {
  position: absolute; top: .5rem; right: .5rem; min-width: 44px; min-height: 44px; margin: 0; padding: 0;
  font-size: 1.75rem; line-height: 1; color: #1f2328; background: transparent;
}
@media (max-width: 30rem) { .fc-wrap { padding: .5rem; } .fc-dialog { padding: 1.25rem 1rem; max-height: calc(100vh - 1rem); } }
`;

/**
 * The browser side. Plain ES2017 in a string (it never runs in Node); `cfg` is the configuration object.
 * No backticks or `${` inside: it is a raw template literal.
 */
const RUNTIME = String.raw`
  'use strict';
  var win = window, doc = document;
  var script = doc.currentScript;
  var slug = String(cfg.slug);
  var REG_KEY = typeof Symbol === 'function' && Symbol.for ? Symbol.for('formcast.embed') : '__formcastEmbed';
  var reg = win[REG_KEY];
  if (!reg) {
    reg = { popups: {}, seen: {}, listening: false, uid: 0 };
    try { Object.defineProperty(win, REG_KEY, { value: reg }); } catch (e) { win[REG_KEY] = reg; }
  }
  if (!('Formcast' in win)) {
    var pick = function (s) {
      if (s) return reg.popups[s] || null;
      for (var k in reg.popups) if (Object.prototype.hasOwnProperty.call(reg.popups, k)) return reg.popups[k];
      return null;
    };
    win.Formcast = {
      version: 1,
      open: function (s) { var p = pick(s); if (p) p.open(null); return !!p; },
      close: function (s) { var p = pick(s); if (p) p.close(); return !!p; }
    };
  }

  var MSG = {
    network: 'The form could not be sent. Please check your connection and try again.',
    failed: 'Something went wrong. Please try again in a moment.',
    rate: 'Too many attempts. Please wait a little and try again.',
    thanks: 'Thank you!'
  };

  function uid(prefix) { reg.uid += 1; return prefix + reg.uid; }

  function whenReady(fn) {
    if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', fn, { once: true });
    else fn();
  }

  function isHttpUrl(value) {
    try { var u = new URL(value, cfg.action); return u.protocol === 'https:' || u.protocol === 'http:'; } catch (e) { return false; }
  }

  // Second line of defence: the markup is sanitised by the service; strip anything active again.
  var DROP = /^(script|iframe|frame|frameset|object|embed|applet|base|meta|link|noscript|portal)$/;
  var URL_ATTRS = /^(href|src|action|formaction|xlink:href|poster|background|ping|cite|data)$/;
  function clean(root) {
    var els = root.querySelectorAll('*');
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      if (DROP.test(el.localName)) { el.remove(); continue; }
      for (var j = el.attributes.length - 1; j >= 0; j--) {
        var a = el.attributes[j], name = a.name.toLowerCase(), value = a.value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
        // style attributes too: a host page whose CSP has no 'unsafe-inline' would block (and report) them;
        // the stylesheet and the CSSOM (allowed under any CSP) do the styling.
        if (name.indexOf('on') === 0 || name === 'srcdoc' || name === 'style') el.removeAttribute(a.name);
        else if (URL_ATTRS.test(name) && /^(javascript|vbscript|data):/.test(value) && !(el.localName === 'img' && name === 'src' && value.indexOf('data:image/') === 0)) el.removeAttribute(a.name);
      }
    }
  }

  function attachStyles(root) {
    try {
      if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function') {
        var sheet = new CSSStyleSheet();
        sheet.replaceSync(cfg.css);
        root.adoptedStyleSheets = [sheet];
        return;
      }
    } catch (e) { /* fall back to a style element */ }
    var style = doc.createElement('style');
    style.textContent = cfg.css;
    root.appendChild(style);
  }

  function shadowOf(host) {
    var root;
    try { root = host.attachShadow({ mode: 'open' }); } catch (e) {
      var inner = doc.createElement('div');
      host.appendChild(inner);
      root = inner.attachShadow({ mode: 'open' });
    }
    attachStyles(root);
    return root;
  }

  /** The form markup as a detached fragment. */
  function markup() {
    var tpl = doc.createElement('template');
    tpl.innerHTML = cfg.html;
    clean(tpl.content); // while still inert, before anything in it can load or apply
    return doc.importNode(tpl.content, true);
  }

  function attr(el, name) { return el.getAttribute(name); }
  function all(root, selector) { return Array.prototype.slice.call(root.querySelectorAll(selector)); }

  /** Wires the form found under root: JSON submission and the data-formcast-* elements. */
  function wire(root, hooks) {
    var form = root.querySelector('form[data-formcast-form]') || root.querySelector('form');
    if (!form) return null;
    form.setAttribute('action', cfg.action);
    form.setAttribute('method', 'post');

    var summary = root.querySelector('[data-formcast-error-summary]');
    if (!summary) {
      summary = doc.createElement('div');
      summary.setAttribute('data-formcast-error-summary', '');
      form.insertBefore(summary, form.firstChild);
    }
    summary.setAttribute('role', 'alert');
    summary.setAttribute('tabindex', '-1');

    var success = root.querySelector('[data-formcast-success]');
    if (!success) {
      success = doc.createElement('p');
      success.setAttribute('data-formcast-success', '');
      form.parentNode.insertBefore(success, form.nextSibling);
    }
    success.setAttribute('role', 'status');
    success.setAttribute('aria-live', 'polite');
    success.setAttribute('tabindex', '-1');

    // The honeypot stays in the form (bots fill it) but out of sight and out of the tab order.
    var hp = form.querySelector('[name="_fc_hp"]');
    if (hp) {
      // The outermost wrapper that holds nothing else a person fills in.
      var box = hp;
      while (box.parentElement && box.parentElement !== form && !box.parentElement.querySelector('input:not([name="_fc_hp"]), select, textarea, button')) box = box.parentElement;
      box.setAttribute('aria-hidden', 'true');
      var hide = { position: 'absolute', left: '-10000px', top: 'auto', width: '1px', height: '1px', overflow: 'hidden' };
      for (var p in hide) box.style.setProperty(p, hide[p], 'important');
      hp.setAttribute('tabindex', '-1');
      hp.setAttribute('autocomplete', 'off');
    }

    var busy = false;
    var described = [];

    function control(field) {
      var c = form.elements.namedItem(field);
      if (c && typeof c.length === 'number' && !c.tagName) c = c[0];
      return c && c.setAttribute ? c : null;
    }
    function errorElement(field) {
      var els = all(root, '[data-formcast-error]');
      for (var i = 0; i < els.length; i++) if (attr(els[i], 'data-formcast-error') === field) return els[i];
      return null;
    }
    function clearErrors() {
      all(root, '[data-formcast-error]').forEach(function (el) { el.textContent = ''; });
      all(form, '[aria-invalid]').forEach(function (el) { el.removeAttribute('aria-invalid'); });
      described.forEach(function (d) {
        var ids = (attr(d.control, 'aria-describedby') || '').split(/\s+/).filter(function (id) { return id && id !== d.id; });
        if (ids.length) d.control.setAttribute('aria-describedby', ids.join(' ')); else d.control.removeAttribute('aria-describedby');
      });
      described = [];
      summary.textContent = '';
    }
    function showSummary(messages) {
      summary.textContent = '';
      messages.forEach(function (m) { var p = doc.createElement('p'); p.textContent = m; summary.appendChild(p); });
      summary.hidden = false;
    }
    function showErrors(errors) {
      var loose = [], first = null;
      errors.forEach(function (e) {
        var field = e && typeof e.field === 'string' ? e.field : null;
        var message = e && typeof e.message === 'string' ? e.message : MSG.failed;
        var el = field !== null ? errorElement(field) : null;
        var c = field !== null ? control(field) : null;
        if (c) {
          c.setAttribute('aria-invalid', 'true');
          if (!first) first = c;
        }
        if (!el && c) {
          // No place marked for it: right after the control, as the hosted page does.
          el = doc.createElement('p');
          el.setAttribute('data-formcast-error', field);
          c.parentNode.insertBefore(el, c.nextSibling);
        }
        if (!el) { loose.push(message); return; }
        el.textContent = el.textContent ? el.textContent + ' ' + message : message;
        el.hidden = false;
        if (!el.id) el.id = uid('fc-error-');
        if (c) {
          var ids = (attr(c, 'aria-describedby') || '').split(/\s+/).filter(Boolean);
          if (ids.indexOf(el.id) < 0) { ids.push(el.id); c.setAttribute('aria-describedby', ids.join(' ')); described.push({ control: c, id: el.id }); }
        }
      });
      if (loose.length) showSummary(loose);
      if (first) first.focus(); else if (loose.length) summary.focus();
    }
    function showSuccess(message) {
      success.textContent = message;
      success.hidden = false;
      if (form.contains(success)) {
        Array.prototype.forEach.call(form.children, function (el) { if (el !== success && !el.contains(success)) el.hidden = true; });
      } else form.hidden = true;
      success.focus();
    }
    function setBusy(on) {
      busy = on;
      if (on) form.setAttribute('aria-busy', 'true'); else form.removeAttribute('aria-busy');
      all(form, 'button, input[type=submit]').forEach(function (b) {
        if (on) { if (!b.disabled) { b.disabled = true; b.setAttribute('data-formcast-busy', ''); } }
        else if (b.hasAttribute('data-formcast-busy')) { b.disabled = false; b.removeAttribute('data-formcast-busy'); }
      });
    }
    function body() {
      var out = Object.create(null);
      new FormData(form).forEach(function (value, key) {
        if (typeof value !== 'string') return;
        if (Object.prototype.hasOwnProperty.call(out, key)) out[key] = [].concat(out[key], value);
        else out[key] = value;
      });
      return JSON.stringify(out);
    }

    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      if (busy) return;
      clearErrors();
      var payload = body();
      setBusy(true);
      fetch(cfg.action, {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload
      }).then(function (res) {
        return res.json().then(function (data) { return { status: res.status, data: data }; }, function () { return { status: res.status, data: null }; });
      }).then(function (r) {
        setBusy(false);
        var data = r.data && typeof r.data === 'object' ? r.data : null;
        if (data && data.ok === true && r.status < 300) {
          if (hooks && hooks.success) hooks.success();
          if (typeof data.redirect === 'string' && isHttpUrl(data.redirect)) { win.location.assign(data.redirect); return; }
          showSuccess(typeof data.message === 'string' && data.message ? data.message : MSG.thanks);
        } else if (data && Array.isArray(data.errors) && data.errors.length) {
          showErrors(data.errors);
        } else {
          showSummary([r.status === 429 ? MSG.rate : MSG.failed]);
          summary.focus();
        }
      }, function () {
        setBusy(false);
        showSummary([MSG.network]);
        summary.focus();
      });
    });
    return form;
  }

  function focusables(root) {
    return all(root, 'a[href], area[href], button, input, select, textarea, iframe, [tabindex], [contenteditable=true]').filter(function (el) {
      if (el.disabled || el.tabIndex < 0 || el.getAttribute('aria-hidden') === 'true' || el.type === 'hidden') return false;
      for (var n = el; n && n.nodeType === 1; n = n.parentNode) if (n.hidden || n.getAttribute('aria-hidden') === 'true') return false;
      return el.getClientRects().length > 0;
    });
  }

  /** The element that has focus, looking into shadow roots. */
  function activeElement() {
    var a = doc.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }

  function renderInline() {
    var host = doc.createElement('div');
    host.setAttribute('data-formcast-embed', slug);
    host.setAttribute('data-formcast-ready', '');
    function place() {
      var target = script && script.parentNode && doc.body && doc.body.contains(script) ? script : null;
      if (target) { target.parentNode.insertBefore(host, target.nextSibling); return host; }
      // The script is in <head> (or was run without a currentScript): an empty placeholder for this
      // slug, else the end of <body>.
      var holders = all(doc, '[data-formcast-embed]');
      for (var i = 0; i < holders.length; i++) {
        if (attr(holders[i], 'data-formcast-embed') === slug && !holders[i].hasAttribute('data-formcast-ready')) {
          holders[i].setAttribute('data-formcast-ready', '');
          return holders[i];
        }
      }
      doc.body.appendChild(host);
      return host;
    }
    function render() {
      var where = place();
      var root = shadowOf(where);
      var wrap = doc.createElement('div');
      wrap.className = 'fc-root';
      wrap.appendChild(markup());
      root.appendChild(wrap);
      wire(root, null);
    }
    if (script && doc.body && doc.body.contains(script)) render(); else whenReady(render);
  }

  function storageKey() { return 'formcast:popup:' + slug; }
  function seen() {
    if (reg.seen[slug]) return true;
    try { return win.localStorage.getItem(storageKey()) !== null; } catch (e) { return false; }
  }
  function markSeen() {
    reg.seen[slug] = true;
    try { win.localStorage.setItem(storageKey(), new Date().toISOString()); } catch (e) { /* once per page view */ }
  }

  function renderPopup() {
    if (reg.popups[slug]) return; // included twice: one popup per form
    var popup = { open: function (opener) { pending.push(opener); }, close: function () {} };
    var pending = [];
    reg.popups[slug] = popup;

    whenReady(function () {
      var host = doc.createElement('div');
      host.setAttribute('data-formcast-popup', slug);
      host.hidden = true;
      var root = shadowOf(host);
      var wrap = doc.createElement('div');
      wrap.className = 'fc-wrap';
      var backdrop = doc.createElement('div');
      backdrop.className = 'fc-backdrop';
      var dialog = doc.createElement('div');
      dialog.className = 'fc-dialog';
      dialog.setAttribute('role', 'dialog');
      dialog.setAttribute('aria-modal', 'true');
      dialog.setAttribute('tabindex', '-1');
      var close = doc.createElement('button');
      close.type = 'button';
      close.className = 'fc-close';
      close.setAttribute('aria-label', 'Close');
      close.textContent = '\u00d7';
      var content = markup();
      var heading = content.querySelector('h1, h2, h3');
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

      var returnTo = null, overflow = '';
      function isOpen() { return !host.hidden; }
      function first() {
        var els = focusables(dialog);
        var fields = els.filter(function (el) { return el !== close; });
        return fields[0] || els[0] || dialog;
      }
      function onKey(ev) {
        if (!isOpen()) return;
        if (ev.key === 'Escape' || ev.key === 'Esc') { ev.preventDefault(); popup.close(); return; }
        if (ev.key !== 'Tab') return;
        var els = focusables(dialog);
        if (!els.length) { ev.preventDefault(); dialog.focus(); return; }
        var active = root.activeElement;
        var firstEl = els[0], lastEl = els[els.length - 1];
        if (ev.shiftKey && (active === firstEl || active === dialog || !dialog.contains(active))) { ev.preventDefault(); lastEl.focus(); }
        else if (!ev.shiftKey && (active === lastEl || !dialog.contains(active))) { ev.preventDefault(); firstEl.focus(); }
      }
      function onFocusIn(ev) {
        // Focus that lands outside the dialog (a click, a script) is brought back.
        if (isOpen() && ev.target !== host) first().focus();
      }
      popup.open = function (opener) {
        if (isOpen()) return;
        markSeen();
        var active = opener && opener.focus ? opener : activeElement();
        returnTo = active && active !== doc.body ? active : null;
        host.hidden = false;
        overflow = doc.documentElement.style.overflow;
        doc.documentElement.style.overflow = 'hidden';
        doc.addEventListener('keydown', onKey, true);
        doc.addEventListener('focusin', onFocusIn, true);
        first().focus();
      };
      popup.close = function () {
        if (!isOpen()) return;
        host.hidden = true;
        doc.documentElement.style.overflow = overflow;
        doc.removeEventListener('keydown', onKey, true);
        doc.removeEventListener('focusin', onFocusIn, true);
        var back = returnTo;
        returnTo = null;
        if (back && back.isConnected && typeof back.focus === 'function') back.focus();
      };
      close.addEventListener('click', function () { popup.close(); });
      backdrop.addEventListener('click', function () { popup.close(); });

      if (pending.length) popup.open(pending[pending.length - 1]);
      else {
        var delay = script ? attr(script, 'data-formcast-delay') : null;
        if (delay !== 'off' && !seen()) {
          var ms = delay === null || delay === '' || isNaN(Number(delay)) ? 2000 : Math.max(0, Number(delay));
          setTimeout(function () { if (!seen()) popup.open(null); }, ms);
        }
      }
    });

    if (!reg.listening) {
      reg.listening = true;
      doc.addEventListener('click', function (ev) {
        var t = ev.target;
        var opener = t && t.closest ? t.closest('[data-formcast-open]') : null;
        if (!opener) return;
        var want = attr(opener, 'data-formcast-open');
        var p = null;
        if (want) p = reg.popups[want] || null;
        else for (var k in reg.popups) if (Object.prototype.hasOwnProperty.call(reg.popups, k)) { p = reg.popups[k]; break; }
        if (!p) return;
        ev.preventDefault();
        p.open(opener);
      });
    }
  }

  if (cfg.display === 'POPUP') renderPopup(); else renderInline();
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

/** The text of `GET /f/{slug}/embed.js` for this form. */
export function embedScript(opts: EmbedOptions): string {
  const cfg = {
    slug: opts.slug,
    action: opts.action,
    display: opts.display === 'POPUP' ? 'POPUP' : 'INLINE_EMBED',
    title: opts.title,
    html: embedMarkup(opts.formHtml),
    css: CSS,
  };
  return `/* Formcast form embed: see docs/embedding.md */\n(function (cfg) {${RUNTIME}})(${jsonForScript(cfg)});\n`;
}
