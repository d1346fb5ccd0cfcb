/**
 * CodeMirror 6 for HTML with Liquid. CodeMirror puts its theme in one <style> element in the document's head
 * (style-mod); the console's CSP allows it through the per-answer nonce (lib/csp.ts, `EditorView.cspNonce`).
 * Escape then Tab leaves the editor (CodeMirror's own rule), so keyboard users are never trapped in it.
 */
import { html } from '@codemirror/lang-html';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';
import { cspNonce } from '../lib/csp';

/**
 * CodeMirror's default colours, darkened where they fall under 4.5:1 on white or on the active line's tint
 * (WCAG AA; axe checks the editor in the e2e suite).
 */
const accessibleHighlight = HighlightStyle.define([
  { tag: tags.meta, color: '#404740' },
  { tag: tags.link, textDecoration: 'underline' },
  { tag: tags.heading, textDecoration: 'underline', fontWeight: 'bold' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strong, fontWeight: 'bold' },
  { tag: tags.strikethrough, textDecoration: 'line-through' },
  { tag: tags.keyword, color: '#6a1b9a' },
  { tag: [tags.atom, tags.bool, tags.url, tags.contentSeparator, tags.labelName], color: '#1a237e' },
  { tag: [tags.literal, tags.inserted], color: '#1b5e20' },
  { tag: [tags.string, tags.deleted], color: '#a31515' },
  { tag: [tags.regexp, tags.escape, tags.special(tags.string)], color: '#a63800' },
  { tag: tags.definition(tags.variableName), color: '#0000cc' },
  { tag: tags.local(tags.variableName), color: '#3d1a9e' },
  { tag: [tags.typeName, tags.namespace], color: '#00663d' },
  { tag: tags.className, color: '#0f5f6b' },
  { tag: [tags.special(tags.variableName), tags.macroName], color: '#1f4f5f' },
  { tag: tags.definition(tags.propertyName), color: '#0000b3' },
  { tag: tags.attributeName, color: '#7a3e00' },
  { tag: tags.comment, color: '#7a4400' },
  { tag: tags.invalid, color: '#c00000' },
]);

export function CodeEditor({
  value,
  onChange,
  label,
  readOnly = false,
  describedBy,
}: {
  value: string;
  onChange: (v: string) => void;
  label: string;
  readOnly?: boolean;
  describedBy?: string;
}) {
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
        EditorView.cspNonce.of(cspNonce()),
        basicSetup,
        html(),
        syntaxHighlighting(accessibleHighlight),
        EditorView.lineWrapping,
        EditorView.editable.of(!readOnly),
        // Read-only content stays focusable (tabindex), so a keyboard can reach, read and scroll it.
        EditorView.contentAttributes.of({
          'aria-label': label,
          ...(describedBy ? { 'aria-describedby': describedBy } : {}),
          ...(readOnly ? { tabindex: '0', 'aria-readonly': 'true' } : {}),
        }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) change.current(u.state.doc.toString());
        }),
      ],
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The editor is created once per mount; outside changes of `value` are applied below.
  }, [readOnly, label]);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value)
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div className="code-editor" ref={host} />;
}
