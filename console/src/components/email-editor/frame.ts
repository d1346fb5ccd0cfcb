/**
 * A rendered email made ready for a fully sandboxed iframe (`sandbox=""`: no script, no same origin, so the console
 * cannot reach into it and it cannot reach the console). An srcdoc document inherits the console's CSP, which
 * refuses inline style attributes and any <style> without the page's nonce. So, before any parser sees the markup,
 * the email's style attributes become `data-fc-s` markers and their declarations rules of one <style> element that
 * carries the nonce (allowed), together with the email's own <style> blocks:
 *
 * - an inline declaration becomes `:where([data-fc-s="n"]) { prop: value !important }`, first in the sheet: like a
 *   style attribute it beats the email's normal rules, and like one it loses to the email's `!important` rules
 *   (equal importance, zero specificity, earlier), which is how a phone's media query overrides inline widths;
 * - the dark preview turns `prefers-color-scheme: dark` queries on (and light ones off), the light preview the other
 *   way round, whatever the console's own theme, and sets the page's `color-scheme`.
 */

const STYLE_BLOCK = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi;
/** A style attribute inside a tag (quoted either way, or bare). */
const STYLE_ATTR = /(<[a-zA-Z][^<>]*?\s)style(\s*=)/g;

export function frameDocument(html: string, opts: { dark: boolean; nonce: string }): string {
  const sheets: string[] = [];
  const text = html
    .replace(STYLE_BLOCK, (_m, body: string) => {
      sheets.push(body);
      return '';
    })
    .replace(STYLE_ATTR, '$1data-fc-style$2');
  const doc = new DOMParser().parseFromString(text, 'text/html');
  doc
    .querySelectorAll(
      'script, style, link, base, iframe, object, embed, meta[http-equiv], meta[name="color-scheme"], meta[name="supported-color-schemes"]',
    )
    .forEach((el) => el.remove());

  const scratch = document.createElement('div');
  const rules: string[] = [];
  let n = 0;
  doc.querySelectorAll('[data-fc-style]').forEach((el) => {
    scratch.style.cssText = el.getAttribute('data-fc-style') ?? '';
    el.removeAttribute('data-fc-style');
    const decls: string[] = [];
    for (let i = 0; i < scratch.style.length; i++) {
      const prop = scratch.style.item(i);
      const value = scratch.style.getPropertyValue(prop);
      if (value) decls.push(`${prop}: ${value} !important`);
    }
    if (!decls.length) return;
    el.setAttribute('data-fc-s', String(n));
    rules.push(`:where([data-fc-s="${n}"]) { ${decls.join('; ')} }`);
    n++;
  });

  const on = 'min-width: 0px';
  const off = 'max-width: 0px';
  const css = sheets
    .join('\n')
    .replace(/prefers-color-scheme\s*:\s*dark/gi, opts.dark ? on : off)
    .replace(/prefers-color-scheme\s*:\s*light/gi, opts.dark ? off : on)
    .replace(/<\/style/gi, '<\\/style');

  const scheme = opts.dark ? 'dark' : 'light';
  const meta = doc.createElement('meta');
  meta.setAttribute('name', 'color-scheme');
  meta.setAttribute('content', scheme);
  const base = doc.createElement('base');
  base.setAttribute('target', '_blank');
  const style = doc.createElement('style');
  if (opts.nonce) style.setAttribute('nonce', opts.nonce);
  style.textContent = `${rules.join('\n')}\n${css}\n:root { color-scheme: ${scheme} !important; }`;
  doc.head.prepend(meta, base, style);
  return `<!doctype html>${doc.documentElement.outerHTML}`;
}
