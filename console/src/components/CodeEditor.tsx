/**
 * CodeMirror 6 for HTML with Liquid. Its styles are constructed stylesheets (adoptedStyleSheets), which the
 * console's CSP (`style-src 'self'`) allows. Escape then Tab leaves the editor (CodeMirror's own rule), so
 * keyboard users are never trapped in it.
 */
import { html } from '@codemirror/lang-html';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';

export function CodeEditor({ value, onChange, label, readOnly = false, describedBy }: { value: string; onChange: (v: string) => void; label: string; readOnly?: boolean; describedBy?: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const change = useRef(onChange);
  change.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      doc: value,
      parent: host.current,
      extensions: [
        basicSetup,
        html(),
        EditorView.lineWrapping,
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({ 'aria-label': label, ...(describedBy ? { 'aria-describedby': describedBy } : {}) }),
        EditorView.updateListener.of((u) => { if (u.docChanged) change.current(u.state.doc.toString()); }),
      ],
    });
    view.current = v;
    return () => { v.destroy(); view.current = null; };
    // The editor is created once per mount; outside changes of `value` are applied below.
  }, [readOnly, label]);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div className="code-editor" ref={host} />;
}
