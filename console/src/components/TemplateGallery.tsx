/**
 * "Start from a template": the starter documents of GET /v1/templates/gallery and the workspace's own templates, each
 * with a live thumbnail (a block document rendered by POST /v1/email-documents/render with sample data; a template of
 * plain HTML shows its HTML), its name and description. Picking one hands its content to `onPick`; the dialog is the
 * caller's to close. Used by the Templates page for a new template and by the broadcast composer and the automation's
 * send step for a new email.
 */
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import { useTemplates } from '../lib/hooks';
import {
  isBlockDocument,
  useGallery,
  useRenderedDocument,
  type EmailContent,
  type GalleryItem,
  type Template,
} from '../lib/templates';
import { Dialog } from './Dialog';
import { EmailPreview } from './EmailPreview';
import { ErrorState, Skeleton } from './States';
import '../styles/templates.css';

/** What was picked: where it came from, its name, and the content to start the email with. */
export interface PickedTemplate {
  source: 'gallery' | 'template';
  /** The starter's id (`newsletter`) or the template's (`tmpl_…`). */
  id: string;
  name: string;
  content: EmailContent;
}

export interface TemplateGalleryProps {
  open: boolean;
  onClose: () => void;
  onPick: (picked: PickedTemplate) => void;
  /** The dialog's title ("Start from a template"). */
  title?: string;
  /** List the workspace's own templates after the starters (default true). */
  includeWorkspaceTemplates?: boolean;
  /** When given, a first tile "Blank" calls it (the caller decides what a blank email is). */
  onBlank?: () => void;
}

/** Whether the element has been on screen (thumbnails are rendered once they are about to be seen). */
function useSeen<T extends Element>(): [RefObject<T | null>, boolean] {
  const ref = useRef<T>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || seen) return;
    if (typeof IntersectionObserver === 'undefined') {
      setSeen(true);
      return;
    }
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setSeen(true);
      },
      { rootMargin: '400px 0px' },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [seen]);
  return [ref, seen];
}

/**
 * A rendered email, scaled down to a thumbnail: a 600 px wide sandboxed frame (EmailPreview) shown at 30 %, inert (no
 * focus, no pointer, hidden from assistive technology: the tile's button names it).
 */
export function EmailThumbnail({
  html,
  title,
  state = 'none',
}: {
  html?: string;
  title: string;
  /** Without `html`: `waiting` (not on screen yet), `loading`, or `none` (nothing to show). */
  state?: 'waiting' | 'loading' | 'none';
}) {
  return (
    <div className="thumb" inert>
      {html !== undefined ? (
        <EmailPreview html={html} title={title} className="thumb-frame" />
      ) : state === 'loading' ? (
        <div className="thumb-empty">
          <Skeleton lines={5} />
        </div>
      ) : (
        <div className="thumb-empty muted small">{state === 'none' ? 'No preview' : ''}</div>
      )}
    </div>
  );
}

/** The thumbnail of a block document: rendered when first seen. */
function DocumentThumbnail({
  renderKey,
  editorContent,
  name,
}: {
  renderKey: string;
  editorContent: unknown;
  name: string;
}) {
  const [ref, seen] = useSeen<HTMLDivElement>();
  const q = useRenderedDocument(renderKey, editorContent, seen);
  return (
    <div ref={ref}>
      <EmailThumbnail
        html={q.data?.html}
        title={`Preview of ${name}`}
        state={q.isError || !isBlockDocument(editorContent) ? 'none' : seen ? 'loading' : 'waiting'}
      />
    </div>
  );
}

function Tile({
  name,
  description,
  thumbnail,
  onPick,
}: {
  name: string;
  description: string;
  thumbnail: ReactNode;
  onPick: () => void;
}) {
  return (
    <li className="gallery-tile">
      {thumbnail}
      <button type="button" className="gallery-pick" onClick={onPick}>
        <span className="gallery-name">{name}</span>
        {description && <span className="gallery-desc">{description}</span>}
      </button>
    </li>
  );
}

function starterContent(item: GalleryItem): EmailContent {
  return { subject: item.subject, previewText: null, html: null, text: null, editorContent: item.editorContent };
}

function templateContent(t: Template): EmailContent {
  return { subject: t.subject, html: t.html, text: t.text, editorContent: t.editorContent ?? null };
}

function templateThumbnail(t: Template) {
  if (isBlockDocument(t.editorContent))
    return (
      <DocumentThumbnail renderKey={`template:${t.id}:${t.updatedAt}`} editorContent={t.editorContent} name={t.name} />
    );
  return <EmailThumbnail html={t.html ?? undefined} title={`Preview of ${t.name}`} state="none" />;
}

function describeTemplate(t: Template): string {
  const kind = isBlockDocument(t.editorContent) ? 'Visual email' : t.html ? 'HTML email' : 'Text email';
  return t.subject ? `${kind} · ${t.subject}` : kind;
}

function GalleryBody({
  onPick,
  onBlank,
  includeWorkspaceTemplates,
}: Pick<TemplateGalleryProps, 'onPick' | 'onBlank'> & { includeWorkspaceTemplates: boolean }) {
  const gallery = useGallery();
  const templates = useTemplates();
  return (
    <div className="stack">
      <section className="stack-sm" aria-labelledby="gallery-starters">
        <h3 id="gallery-starters">Starter templates</h3>
        <ul className="gallery-grid">
          {onBlank && (
            <Tile
              name="Blank"
              description="Start with an empty email."
              thumbnail={
                <div className="thumb thumb-blank" aria-hidden="true">
                  +
                </div>
              }
              onPick={onBlank}
            />
          )}
          {gallery.data?.map((item) => (
            <Tile
              key={item.id}
              name={item.name}
              description={item.description}
              thumbnail={
                <DocumentThumbnail
                  renderKey={`gallery:${item.id}`}
                  editorContent={item.editorContent}
                  name={item.name}
                />
              }
              onPick={() => onPick({ source: 'gallery', id: item.id, name: item.name, content: starterContent(item) })}
            />
          ))}
        </ul>
        {gallery.isPending && <Skeleton lines={4} />}
        {gallery.isError && (
          <ErrorState
            error={gallery.error}
            title="The starter templates could not be loaded"
            onRetry={() => void gallery.refetch()}
          />
        )}
      </section>
      {includeWorkspaceTemplates && (
        <section className="stack-sm" aria-labelledby="gallery-own">
          <h3 id="gallery-own">Your templates</h3>
          {templates.isPending ? (
            <Skeleton lines={3} />
          ) : templates.isError ? (
            <ErrorState error={templates.error} onRetry={() => void templates.refetch()} />
          ) : templates.data.length === 0 ? (
            <p className="muted">No templates of your own yet: save any email as a template to find it here.</p>
          ) : (
            <ul className="gallery-grid">
              {(templates.data as Template[]).map((t) => (
                <Tile
                  key={t.id}
                  name={t.name}
                  description={describeTemplate(t)}
                  thumbnail={templateThumbnail(t)}
                  onPick={() => onPick({ source: 'template', id: t.id, name: t.name, content: templateContent(t) })}
                />
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}

export function TemplateGallery({
  open,
  onClose,
  onPick,
  onBlank,
  title = 'Start from a template',
  includeWorkspaceTemplates = true,
}: TemplateGalleryProps) {
  return (
    <Dialog open={open} title={title} onClose={onClose} wide>
      {open && <GalleryBody onPick={onPick} onBlank={onBlank} includeWorkspaceTemplates={includeWorkspaceTemplates} />}
    </Dialog>
  );
}
