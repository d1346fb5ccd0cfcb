/**
 * How each block looks on the canvas: close to the email (the preview beside it is the email itself), with text and
 * headings edited in place. The other fields of a block are in the panel beside the canvas (Inspector.tsx).
 */
import type { Editor } from '@tiptap/core';
import type { ReactNode } from 'react';
import { Button } from '../Button';
import { NETWORK_LABELS, type Block, type DocumentSettings } from './document';
import { RichText } from './RichText';

/** What the renderer uses where the document sets nothing (src/mail/blocks/render.ts), so the canvas looks alike. */
export const DEFAULTS = {
  background: '#f4f4f5',
  card: '#ffffff',
  text: '#1f2328',
  brand: '#1f6feb',
  divider: '#e5e7eb',
  width: 600,
} as const;

/** Where a block sits when it says nothing: images, social links and the footer centred, the rest on the left. */
export function defaultAlign(type: Block['type']): 'left' | 'center' {
  return type === 'image' || type === 'social' || type === 'footer' ? 'center' : 'left';
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** A button's text colour when none is set: dark on a light button, white on a dark one (as the renderer does). */
export function buttonTextColor(background: string): string {
  return luminance(background) > 0.55 ? '#111111' : '#ffffff';
}

export interface UploadState {
  name: string;
  progress: number;
  error?: string;
}

export interface BlockViewProps {
  block: Block;
  settings: DocumentSettings;
  /** "Text block 2 of 5": names the block's text boxes for screen readers. */
  description: string;
  edit: (patch: Partial<Block>, key?: string) => void;
  readOnly: boolean;
  upload?: UploadState;
  pickFile: () => void;
  postalAddress: string | null;
  onRichActive: (editor: Editor, on: boolean) => void;
  renderColumn: (index: number) => ReactNode;
}

function alignClass(align: string | undefined, type: Block['type']): string {
  return `ee-align-${align ?? defaultAlign(type)}`;
}

export function BlockView(p: BlockViewProps) {
  const b = p.block;
  const brand = p.settings.brandColor ?? DEFAULTS.brand;
  switch (b.type) {
    case 'heading':
      return (
        <RichText
          plain
          value={b.text}
          onChange={(text) => p.edit({ text }, `${b.id}:text`)}
          label={`Heading text (${p.description})`}
          placeholder="Write a heading…"
          align={b.align}
          className={`ee-heading ee-heading-${b.level ?? 1}`}
          readOnly={p.readOnly}
          onActive={p.onRichActive}
        />
      );
    case 'text':
      return (
        <RichText
          value={b.text}
          onChange={(text) => p.edit({ text }, `${b.id}:text`)}
          label={`Text (${p.description})`}
          placeholder="Write something…"
          align={b.align}
          className="ee-text"
          readOnly={p.readOnly}
          onActive={p.onRichActive}
        />
      );
    case 'image':
      return (
        <div className={`ee-image ${alignClass(b.align, b.type)}`}>
          {b.url ? (
            <img
              src={b.url}
              alt={b.alt}
              className="ee-image-img"
              style={b.width ? { width: `${b.width}px` } : undefined}
              draggable={false}
            />
          ) : (
            <div className="ee-image-empty">
              <span>{p.upload && !p.upload.error ? 'Uploading…' : 'Drop an image here, or'}</span>
              {!p.readOnly && !(p.upload && !p.upload.error) && (
                <Button size="sm" onClick={p.pickFile}>
                  Choose an image…
                </Button>
              )}
              <span className="muted small">PNG, JPEG, GIF or WebP, up to 5 MB.</span>
            </div>
          )}
          {p.upload && !p.upload.error && (
            <div className="ee-upload" role="status">
              Uploading {p.upload.name}… {Math.round(p.upload.progress * 100)}%
              <progress max={1} value={p.upload.progress} aria-label={`Upload of ${p.upload.name}`} />
            </div>
          )}
          {p.upload?.error && (
            <div className="ee-upload-error" role="alert">
              {p.upload.error}
            </div>
          )}
          {b.url && !b.alt.trim() && (
            <div className="ee-note">No alternative text yet: describe the image in the panel.</div>
          )}
        </div>
      );
    case 'button':
      return (
        <div className={alignClass(b.align, b.type)}>
          <span
            className="ee-button"
            style={{ background: b.color ?? brand, color: b.textColor ?? buttonTextColor(b.color ?? brand) }}
          >
            {b.text || 'Button'}
          </span>
          {!b.url.trim() && <div className="ee-note">No link yet: add one in the panel.</div>}
        </div>
      );
    case 'divider':
      return <hr className="ee-divider" style={{ borderTopColor: b.color ?? DEFAULTS.divider }} />;
    case 'spacer':
      return (
        <div className="ee-spacer" style={{ height: `${b.height}px` }}>
          <span className="ee-spacer-label">{b.height} px of space</span>
        </div>
      );
    case 'social':
      return (
        <div className={`ee-social ${alignClass(b.align, b.type)}`}>
          {b.links.length === 0 && <span className="ee-note">No links yet: add them in the panel.</span>}
          {b.links.map((l, i) => (
            <span key={i} className="ee-social-chip" style={{ background: brand }}>
              {NETWORK_LABELS[l.network]}
            </span>
          ))}
        </div>
      );
    case 'html':
      return (
        <div className="ee-html">
          <span className="ee-html-label">Your HTML</span>
          {b.html.trim() ? (
            <pre className="ee-html-code">{b.html.length > 400 ? `${b.html.slice(0, 400)}…` : b.html}</pre>
          ) : (
            <span className="ee-note">Empty: write it in the panel. Scripts and event handlers are not allowed.</span>
          )}
        </div>
      );
    case 'footer':
      return (
        <div className={`ee-footer ${alignClass(b.align, b.type)}`}>
          {b.text && <p>{b.text}</p>}
          <p>{p.postalAddress ?? 'Your postal address (set it in Settings: the law asks for one).'}</p>
          {b.webVersion && (
            <p>
              <span className="ee-footer-link">View in browser</span>
            </p>
          )}
          <p>
            <span className="ee-footer-link">Unsubscribe</span>
          </p>
        </div>
      );
    case 'columns':
      return (
        <div
          className="ee-columns"
          style={{
            gridTemplateColumns: (b.widths && b.widths.length === b.columns.length ? b.widths : b.columns.map(() => 1))
              .map((w) => `minmax(0, ${w}fr)`)
              .join(' '),
          }}
        >
          {b.columns.map((_, i) => (
            <div key={i} className="ee-column">
              {p.renderColumn(i)}
            </div>
          ))}
        </div>
      );
  }
}
