/**
 * A rendered email in a sandboxed iframe (srcDoc). The iframe may run no script (no allow-scripts); it is
 * same-origin only so that the console can style it: an srcdoc document inherits the console's CSP
 * (style-src 'self'), which would refuse the email's <style> blocks and style attributes. So they are taken
 * out before the markup goes in (nothing inline is left to refuse) and applied after load through the CSSOM,
 * which that CSP allows: <style> text as a constructed stylesheet, style attributes through element.style.
 */
import { useEffect, useMemo, useRef } from 'react';

/**
 * Style blocks and attributes are taken out of the text itself, before any parser sees them: even DOMParser
 * documents check the CSP for style attributes as they are parsed.
 */
function prepare(html: string): { markup: string; css: string } {
  const css: string[] = [];
  const text = html
    .replace(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi, (_m, body: string) => {
      css.push(body);
      return '';
    })
    // A style attribute inside a tag (quoted either way, or bare) becomes data-fc-style.
    .replace(/(<[a-zA-Z][^<>]*?\s)style(\s*=)/g, '$1data-fc-style$2');
  const doc = new DOMParser().parseFromString(text, 'text/html');
  doc.querySelectorAll('style, link[rel~="stylesheet"], script, meta[http-equiv]').forEach((el) => el.remove());
  // Links open nowhere from the preview (the sandbox allows no navigation of the console).
  const base = doc.createElement('base');
  base.setAttribute('target', '_blank');
  doc.head.prepend(base);
  return { markup: `<!doctype html>${doc.documentElement.outerHTML}`, css: css.join('\n') };
}

export function EmailPreview({
  html,
  title,
  className = 'preview-frame',
}: {
  html: string;
  title: string;
  className?: string;
}) {
  const frame = useRef<HTMLIFrameElement>(null);
  const prepared = useMemo(() => prepare(html), [html]);
  useEffect(() => {
    const el = frame.current;
    if (!el) return;
    const apply = () => {
      const win = el.contentWindow as (Window & typeof globalThis) | null;
      const doc = el.contentDocument;
      if (!win || !doc) return;
      try {
        const sheet = new win.CSSStyleSheet();
        sheet.replaceSync(prepared.css);
        doc.adoptedStyleSheets = [sheet];
      } catch {
        /* a stylesheet that does not parse: shown unstyled */
      }
      doc.querySelectorAll<HTMLElement>('[data-fc-style]').forEach((n) => {
        n.style.cssText = n.getAttribute('data-fc-style') ?? '';
      });
    };
    el.addEventListener('load', apply);
    return () => el.removeEventListener('load', apply);
  }, [prepared]);
  return (
    <iframe ref={frame} className={className} title={title} sandbox="allow-same-origin" srcDoc={prepared.markup} />
  );
}
