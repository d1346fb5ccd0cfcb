/**
 * The live preview of a form as visitors get it: the service's own markup and theme (@formcast/form-appearance,
 * the package the hosted page and the embeds render with) in a shadow root, so the console's styles and the form's do
 * not mix; inert (seen, not used). Every text in the markup is escaped by renderDefaultHtml; the stylesheet is a constructed one (allowed by
 * the console's Content-Security-Policy, which has no 'unsafe-inline'). Submitting does nothing here.
 */
import { useEffect, useRef } from 'react';
import { renderDefaultHtml, themeCss, type Form as FormLook } from '@formcast/form-appearance';

const BASE = `:host { all: initial; display: block; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.fc-stage { padding: 1.25rem; background: var(--fc-bg); border-radius: 10px; }`;

export function FormPreview({ form }: { form: FormLook }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const root = el.shadowRoot ?? el.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(BASE + themeCss(form.settings.appearance, 'embed'));
    root.adoptedStyleSheets = [sheet];
    // Escaped markup from the server's own renderer (see above), never raw input. Parsed in a <template> that is in no
    // <form>: the editor is one, and the parser drops a <form> tag parsed in the context of another.
    const tpl = document.createElement('template');
    tpl.innerHTML = `<div class="fc-stage">${renderDefaultHtml(form)}</div>`;
    root.replaceChildren(tpl.content.cloneNode(true));
    root.querySelector('form')?.addEventListener('submit', (e) => e.preventDefault());
  }, [form]);
  // Inert and aria-hidden: a picture of the form, not a second form in the page (its heading, its controls) for keyboards and
  // screen readers; the editor's own fields say everything it shows.
  useEffect(() => {
    host.current?.setAttribute('inert', '');
  }, []);
  return <div ref={host} className="form-preview" aria-hidden="true" data-testid="form-preview" />;
}
