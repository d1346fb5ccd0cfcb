/**
 * The content of a template: the one place the template editor puts its email editor. It is the console's email
 * editor (EmailContentEditor): the visual block editor with its live preview for a block document, the HTML code
 * editor and the text part otherwise, with the switch between them; in code mode the HTML's preview sits beside it.
 */
import { EmailPreview } from '../../components/EmailPreview';
import { EmailContentEditor, isBlockDocument } from '../../components/email-editor';

/** An email's body as the template editor keeps it (subject and name are the page's own fields). */
export interface ContentDraft {
  html: string;
  text: string;
  editorContent: unknown;
}

export function TemplateContent({
  value,
  onChange,
  errors,
  editable,
}: {
  value: ContentDraft;
  onChange: (v: ContentDraft) => void;
  /** Field errors of the last save, by JSON pointer (`/html`, `/editorContent/blocks/3/url`). */
  errors: Record<string, string>;
  /** False for a viewer: the content is shown, not changed. */
  editable: boolean;
}) {
  const visual = isBlockDocument(value.editorContent);
  const editor = (
    <section className="card stack-sm" aria-labelledby="content-h">
      <h2 id="content-h">Content</h2>
      <EmailContentEditor
        value={{ html: value.html, text: value.text, editorContent: value.editorContent }}
        onChange={(v) => onChange({ html: v.html ?? '', text: v.text ?? '', editorContent: v.editorContent })}
        readOnly={!editable}
        errors={errors}
        idPrefix="template"
      />
    </section>
  );
  if (visual) return editor;
  return (
    <div className="editor-grid">
      {editor}
      <section className="card stack-sm" aria-labelledby="template-preview-h">
        <h2 id="template-preview-h">Preview</h2>
        {value.html.trim() ? (
          <EmailPreview html={value.html} title="Email preview" />
        ) : (
          <p className="muted">The HTML shows here as you write it.</p>
        )}
      </section>
    </div>
  );
}
