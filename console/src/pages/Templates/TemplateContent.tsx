/**
 * The content of a template: the one place the template editor puts its email editor, so that changing the editor is
 * a change of this file only. Until the visual block editor is in the console, HTML is edited in the code editor and
 * the text part in a text area, beside a preview; a visual document (a starter email) is shown rendered, and can be
 * turned into HTML to edit.
 */
import { useState } from 'react';
import { CodeEditor } from '../../components/CodeEditor';
import { EmailPreview } from '../../components/EmailPreview';
import { Button, ConfirmDialog, ErrorState, Skeleton, Textarea } from '../../components';
import { isBlockDocument, useRenderedDocument } from '../../lib/templates';

/** An email's body as the template editor keeps it (subject and name are the page's own fields). */
export interface ContentDraft {
  html: string;
  text: string;
  editorContent: unknown;
}

function VisualDocument({
  value,
  onChange,
  editable,
}: {
  value: ContentDraft;
  onChange: (v: ContentDraft) => void;
  editable: boolean;
}) {
  const [confirming, setConfirming] = useState(false);
  const rendered = useRenderedDocument(`draft:${JSON.stringify(value.editorContent)}`, value.editorContent);
  return (
    <section className="card stack-sm" aria-labelledby="content-h">
      <div className="card-header">
        <h2 id="content-h">Content</h2>
        {/* The HTML the service rendered and stored with the template (Liquid kept), not the preview's personalised one. */}
        {editable && (
          <Button size="sm" onClick={() => setConfirming(true)} disabled={!value.html}>
            Edit as HTML
          </Button>
        )}
      </div>
      <p className="muted small">
        A visual email, made of blocks. The preview shows it with sample data.
        {editable && !value.html && ' Create the template to edit its HTML instead.'}
      </p>
      {rendered.isPending ? (
        <Skeleton lines={6} />
      ) : rendered.isError ? (
        <ErrorState error={rendered.error} onRetry={() => void rendered.refetch()} />
      ) : (
        <EmailPreview html={rendered.data.html} title="Email preview" />
      )}
      <ConfirmDialog
        open={confirming}
        title="Edit as HTML?"
        confirmLabel="Switch to HTML"
        onClose={() => setConfirming(false)}
        onConfirm={() => {
          onChange({ html: value.html, text: value.text, editorContent: null });
          setConfirming(false);
        }}
      >
        <p>
          The email's blocks are left behind: you edit the HTML they make, and the template is no longer a visual email.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function HtmlContent({
  value,
  onChange,
  errors,
  editable,
}: {
  value: ContentDraft;
  onChange: (v: ContentDraft) => void;
  errors: Record<string, string>;
  editable: boolean;
}) {
  return (
    <div className="editor-grid">
      <section className="card stack-sm" aria-labelledby="content-h">
        <h2 id="content-h">Content</h2>
        <div className="field">
          <span className="label">HTML</span>
          <CodeEditor
            label="HTML"
            value={value.html}
            onChange={(html) => onChange({ ...value, html })}
            readOnly={!editable}
            describedBy="template-html-hint"
          />
          <div className="hint" id="template-html-hint">
            Liquid works here: <code>{'{{ contact.firstName }}'}</code>, <code>{'{{ unsubscribe_url }}'}</code>.
          </div>
          {errors['/html'] && <div className="error">{errors['/html']}</div>}
        </div>
        <Textarea
          label="Plain text"
          hint="The text part of the email. Leave it empty to have it made from the HTML."
          value={value.text}
          onChange={(e) => onChange({ ...value, text: e.target.value })}
          rows={6}
          disabled={!editable}
          error={errors['/text']}
        />
      </section>
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
  return isBlockDocument(value.editorContent) ? (
    <VisualDocument value={value} onChange={onChange} editable={editable} />
  ) : (
    <HtmlContent value={value} onChange={onChange} errors={errors} editable={editable} />
  );
}
