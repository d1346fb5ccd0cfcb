/**
 * An email's content, as broadcasts, templates and automation send steps store it (`emailContent`): the visual
 * editor when its `editorContent` is a block document, otherwise the HTML code editor and the plain text. Switching
 * from blocks to code takes the email's HTML as rendered now into the code editor and leaves the blocks behind;
 * switching from code to blocks starts a new document (the HTML is left behind). Both ask first.
 *
 * The seam for every page that edits an email: value `{ subject?, previewText?, html, text, editorContent }`,
 * onChange with the whole new value. With a block document the service renders `html` and `text` on save (what is
 * sent in them is ignored), so the visual mode leaves them as they are.
 */
import { useId, useMemo, useState, type ReactNode } from 'react';
import { useRecentContacts } from '../../lib/automation-hooks';
import { Button } from '../Button';
import { CodeEditor } from '../CodeEditor';
import { ConfirmDialog } from '../Dialog';
import { Input, Textarea } from '../Field';
import { renderDocument } from './api';
import { isBlockDocument, type BlockDocument } from './document';
import { EmailEditor } from './EmailEditor';
import { propertyKeysOf } from './merge-tags';
import { blockAt, BLOCK_LABELS, forSaving, locate, newDocument, normalise } from './operations';
import { useWorkspaceLook } from './workspace';

export interface EmailContentValue {
  subject?: string | null;
  previewText?: string | null;
  html: string | null;
  text: string | null;
  editorContent: unknown;
}

export interface EmailContentEditorProps {
  value: EmailContentValue;
  onChange: (value: EmailContentValue) => void;
  readOnly?: boolean;
  /** Show inputs for the subject and the preview text (pages that have no fields of their own for them). */
  showSubject?: boolean;
  /** Field errors of the last save, keyed by JSON pointer inside the emailContent (`/subject`, `/editorContent/blocks/2/url`). */
  errors?: Record<string, string>;
  /** The preview's contact, lifted so that a test send uses the same one. */
  contactId?: string;
  onContactId?: (id: string) => void;
  /** The autosave's state (autosave.tsx SaveIndicator), shown in the editor's toolbar. */
  status?: ReactNode;
  /** Distinguishes the ids of two editors on one page. */
  idPrefix?: string;
  /** The live preview beside the visual editor (default on). */
  preview?: boolean;
}

/** Which block (and field) a pointer into a document names, in words: "Image block 3". */
export function describePointer(doc: BlockDocument | null, pointer: string): string | null {
  if (!doc) return null;
  const at = blockAt(forSaving(doc), pointer.replace(/^\/(emailContent\/)?editorContent/, ''));
  if (!at) return null;
  const where = locate(doc, at.id);
  if (!where) return null;
  return `${BLOCK_LABELS[where.block.type]} block ${where.parent ? '(in columns)' : where.index + 1}`;
}

/**
 * The switches between the visual editor and code, each behind its confirmation: to code, the email's HTML as rendered
 * now goes into `html` and the blocks are left behind; to blocks, a new document (the HTML is left behind).
 */
export function useModeSwitch(
  value: EmailContentValue,
  onChange: (value: EmailContentValue) => void,
  doc: BlockDocument | null,
  brandColor: string | null,
): { askToCode: () => void; askToBlocks: () => void; dialogs: ReactNode } {
  const [confirm, setConfirm] = useState<'to-code' | 'to-blocks' | null>(null);
  const [switching, setSwitching] = useState(false);
  const toCode = async () => {
    setSwitching(true);
    let html = value.html ?? '';
    let text = value.text ?? '';
    try {
      if (doc) {
        const r = await renderDocument(forSaving(doc), '');
        html = r.html;
        text = r.text;
      }
    } catch {
      /* the HTML of the last save stays */
    } finally {
      setSwitching(false);
    }
    onChange({ ...value, editorContent: null, html, text });
    setConfirm(null);
  };
  const toBlocks = () => {
    onChange({ ...value, editorContent: newDocument({ brandColor }) });
    setConfirm(null);
  };
  const dialogs = (
    <>
      <ConfirmDialog
        open={confirm === 'to-code'}
        title="Switch to HTML code?"
        confirmLabel="Switch to code"
        busy={switching}
        onClose={() => setConfirm(null)}
        onConfirm={() => void toCode()}
      >
        <p>
          The email's HTML, as it looks now, goes into the code editor, and from then on you edit HTML.{' '}
          <strong>The blocks are left behind:</strong> switching back later starts a new visual document.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirm === 'to-blocks'}
        title="Start a visual document?"
        confirmLabel="Start a visual document"
        onClose={() => setConfirm(null)}
        onConfirm={toBlocks}
      >
        <p>
          A new document of blocks replaces this email's content. <strong>Your HTML is left behind</strong> (copy it
          first if you want to keep it): the blocks cannot be made from HTML.
        </p>
      </ConfirmDialog>
    </>
  );
  return { askToCode: () => setConfirm('to-code'), askToBlocks: () => setConfirm('to-blocks'), dialogs };
}

export function EmailContentEditor({
  value,
  onChange,
  readOnly = false,
  showSubject = false,
  errors = {},
  contactId,
  onContactId,
  status,
  idPrefix = 'email',
  preview = true,
}: EmailContentEditorProps) {
  const look = useWorkspaceLook();
  const recent = useRecentContacts();
  const propertyKeys = useMemo(() => propertyKeysOf(recent.data), [recent.data]);
  const visual = isBlockDocument(value.editorContent);
  const doc = useMemo(
    () => (visual ? normalise(value.editorContent as BlockDocument) : null),
    [visual, value.editorContent],
  );
  const helpId = useId();

  /** Problems of the last save by block id (the API's pointers name blocks of the document as sent), and the rest. */
  const { problems, unplaced } = useMemo(() => {
    const byBlock: Record<string, string[]> = {};
    const rest: string[] = [];
    const sent = doc ? forSaving(doc) : null;
    for (const [pointer, message] of Object.entries(errors)) {
      if (pointer !== '/editorContent' && !pointer.startsWith('/editorContent/')) continue;
      const at = sent ? blockAt(sent, pointer.slice('/editorContent'.length)) : null;
      if (at) (byBlock[at.id] ??= []).push(at.field ? `${at.field}: ${message}` : message);
      else rest.push(message);
    }
    return { problems: byBlock, unplaced: rest };
  }, [errors, doc]);

  const modes = useModeSwitch(value, onChange, doc, look.brandColor);

  const subjectFields = showSubject && (
    <div className="grid-2">
      <Input
        id={`${idPrefix}-subject`}
        label="Subject"
        value={value.subject ?? ''}
        onChange={(e) => onChange({ ...value, subject: e.target.value })}
        error={errors['/subject']}
        maxLength={998}
        disabled={readOnly}
        placeholder='Hi {{ contact.firstName | default: "there" }}'
      />
      <Input
        id={`${idPrefix}-preview-text`}
        label="Preview text"
        value={value.previewText ?? ''}
        onChange={(e) => onChange({ ...value, previewText: e.target.value })}
        error={errors['/previewText']}
        maxLength={500}
        disabled={readOnly}
        hint="Shown after the subject in most inboxes."
      />
    </div>
  );

  return (
    <div className="stack email-content-editor" data-mode={visual ? 'visual' : 'code'}>
      {subjectFields}
      {visual && doc ? (
        <>
          {unplaced.length > 0 && (
            <div className="error-summary" role="alert">
              <ul>
                {unplaced.map((m) => (
                  <li key={m}>{m}</li>
                ))}
              </ul>
            </div>
          )}
          <EmailEditor
            value={doc}
            onChange={(d) => onChange({ ...value, editorContent: d })}
            readOnly={readOnly}
            contactId={contactId}
            onContactId={onContactId}
            problems={problems}
            workspaceBrand={look.brandColor}
            postalAddress={look.postalAddress}
            propertyKeys={propertyKeys}
            status={status}
            preview={preview}
            actions={
              !readOnly && (
                <Button size="sm" variant="ghost" className="ee-to-code" onClick={modes.askToCode}>
                  Switch to HTML code…
                </Button>
              )
            }
          />
          <p className="muted small">
            The plain-text part is made from the blocks when the email is saved. Merge tags such as{' '}
            <code>{'{{ contact.firstName }}'}</code> are filled in for each contact.
          </p>
        </>
      ) : (
        <>
          <div className="row-between email-code-bar">
            <span className="muted small">Code mode: you write the HTML. {status}</span>
            {!readOnly && (
              <Button size="sm" onClick={modes.askToBlocks}>
                Start a visual document…
              </Button>
            )}
          </div>
          <div className="field">
            <span className="label" id={`${idPrefix}-html-label`}>
              HTML
            </span>
            <div className="hint" id={helpId}>
              Liquid: <code>{'{{ contact.firstName }}'}</code>, <code>{'{{ contact.properties.plan }}'}</code>,{' '}
              <code>{'{{ unsubscribe_url }}'}</code>. Escape, then Tab, leaves the editor.
            </div>
            <CodeEditor
              value={value.html ?? ''}
              onChange={(html) => onChange({ ...value, html })}
              label="HTML"
              readOnly={readOnly}
              describedBy={helpId}
            />
            {errors['/html'] && <div className="error">{errors['/html']}</div>}
          </div>
          <Textarea
            id={`${idPrefix}-text`}
            label="Plain text"
            value={value.text ?? ''}
            onChange={(e) => onChange({ ...value, text: e.target.value })}
            error={errors['/text']}
            rows={6}
            disabled={readOnly}
            hint="Optional: made from the HTML when empty."
          />
        </>
      )}
      {modes.dialogs}
    </div>
  );
}
