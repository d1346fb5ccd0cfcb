/**
 * Text and headings edited in place with Tiptap 3 (ProseMirror). A text block allows paragraphs, line breaks, bold,
 * italic and links and nothing else: its schema has no other node or mark, so whatever is pasted in is reduced to
 * those, and `toInlineHtml` writes exactly the inline HTML the grammar allows (`p`, `strong`, `em`, `a href`, `br`).
 * A heading is one line of plain text. Liquid is plain text to both.
 *
 * Tiptap's own history is off: the email editor's undo covers the whole document (history.ts), Ctrl+Z included.
 * Tiptap's stylesheet is not injected (the console's CSP allows no inline <style>); email-editor.css has the rules.
 */
import { Node as TiptapNode, type Editor } from '@tiptap/core';
import Link from '@tiptap/extension-link';
import { DOMSerializer } from '@tiptap/pm/model';
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useEffect, useRef, useState } from 'react';
import type { Align } from './document';

/** Hrefs a link may have: http(s), mailto, tel, or Liquid (`{{ unsubscribe_url }}`). */
export function allowedHref(href: string): boolean {
  const h = href.trim();
  return /^(https?:\/\/|mailto:|tel:)/i.test(h) || /^\{\{.*\}\}/.test(h);
}

const escText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function walk(node: Node): string {
  let out = '';
  node.childNodes.forEach((child) => {
    if (child.nodeType === 3) {
      out += escText(child.textContent ?? '');
      return;
    }
    if (child.nodeType !== 1) return;
    const el = child as Element;
    const inner = walk(el);
    switch (el.tagName.toLowerCase()) {
      case 'p':
        out += `<p>${inner}</p>`;
        break;
      case 'strong':
      case 'b':
        out += inner ? `<strong>${inner}</strong>` : '';
        break;
      case 'em':
      case 'i':
        out += inner ? `<em>${inner}</em>` : '';
        break;
      case 'a': {
        const href = el.getAttribute('href') ?? '';
        out += href && allowedHref(href) ? `<a href="${escAttr(href.trim())}">${inner}</a>` : inner;
        break;
      }
      case 'br':
        out += '<br>';
        break;
      default:
        out += inner;
    }
  });
  return out;
}

/** The editor's content as the grammar's inline HTML ('' when empty). */
export function toInlineHtml(editor: Editor): string {
  if (editor.isEmpty) return '';
  const fragment = DOMSerializer.fromSchema(editor.schema).serializeFragment(editor.state.doc.content, { document });
  return walk(fragment);
}

/** One paragraph of plain text: a heading. */
const OneLine = TiptapNode.create({ name: 'doc', topNode: true, content: 'paragraph' });

const OFF = {
  blockquote: false,
  bulletList: false,
  code: false,
  codeBlock: false,
  dropcursor: false,
  gapcursor: false,
  heading: false,
  undoRedo: false,
  horizontalRule: false,
  listItem: false,
  listKeymap: false,
  orderedList: false,
  strike: false,
  underline: false,
  trailingNode: false,
  link: false,
} as const;

function textExtensions() {
  return [
    StarterKit.configure(OFF),
    Link.configure({
      openOnClick: false,
      autolink: true,
      linkOnPaste: true,
      HTMLAttributes: { target: null, rel: null, class: null },
      isAllowedUri: (url) => allowedHref(url),
    }),
  ];
}

function headingExtensions() {
  return [StarterKit.configure({ ...OFF, document: false, bold: false, italic: false, hardBreak: false }), OneLine];
}

const plainContent = (text: string) => ({
  type: 'doc',
  content: [{ type: 'paragraph', content: text ? [{ type: 'text', text }] : [] }],
});

export function RichText({
  value,
  onChange,
  label,
  plain = false,
  align,
  className,
  placeholder,
  readOnly = false,
  onActive,
}: {
  value: string;
  onChange: (v: string) => void;
  /** The accessible name of the text box. */
  label: string;
  /** A heading: one line of plain text. */
  plain?: boolean;
  align?: Align;
  className?: string;
  placeholder: string;
  readOnly?: boolean;
  /** Called with the editor when it gets focus (the toolbar and the merge-tag menu act on it), and when it goes. */
  onActive?: (editor: Editor, on: boolean) => void;
}) {
  const emitted = useRef(value);
  const change = useRef(onChange);
  change.current = onChange;
  const active = useRef(onActive);
  active.current = onActive;
  const [empty, setEmpty] = useState(!value);
  const read = (e: Editor) => (plain ? e.getText().replace(/\n+/g, ' ') : toInlineHtml(e));

  const editor = useEditor(
    {
      extensions: plain ? headingExtensions() : textExtensions(),
      content: plain ? plainContent(value) : value,
      editable: !readOnly,
      injectCSS: false,
      editorProps: {
        attributes: {
          role: 'textbox',
          'aria-label': label,
          'aria-multiline': plain ? 'false' : 'true',
          class: 'ee-rich-content',
          spellcheck: 'true',
        },
      },
      onUpdate: ({ editor: e }) => {
        const v = read(e);
        setEmpty(e.isEmpty);
        if (v === emitted.current) return;
        emitted.current = v;
        change.current(v);
      },
      onFocus: ({ editor: e }) => active.current?.(e, true),
    },
    [plain, readOnly],
  );

  useEffect(() => {
    editor?.setOptions({
      editorProps: {
        attributes: {
          role: 'textbox',
          'aria-label': label,
          'aria-multiline': plain ? 'false' : 'true',
          class: 'ee-rich-content',
          spellcheck: 'true',
        },
      },
    });
  }, [editor, label, plain]);

  // A value from outside (undo, redo): the editor shows it, unless it is what the editor holds already.
  useEffect(() => {
    if (!editor || value === emitted.current) return;
    emitted.current = value;
    if (read(editor) === value) return;
    editor.commands.setContent(plain ? plainContent(value) : value, { emitUpdate: false });
    setEmpty(editor.isEmpty);
  }, [editor, value, plain]);

  useEffect(
    () => () => {
      if (editor) active.current?.(editor, false);
    },
    [editor],
  );

  return (
    <div className={['ee-rich', className].filter(Boolean).join(' ')} data-align={align ?? 'left'}>
      {empty && (
        <span className="ee-placeholder" aria-hidden="true">
          {placeholder}
        </span>
      )}
      <EditorContent editor={editor} />
    </div>
  );
}
