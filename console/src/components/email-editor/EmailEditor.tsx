/**
 * The email block editor: a palette of blocks, the canvas (text edited in place, blocks moved by drag and drop or the
 * keyboard), the panel of the selected block or of the email's settings, the toolbar (undo and redo, bold, italic,
 * link, merge tags) and the live preview. Images are uploaded by dropping files on the editor or a block, or by
 * choosing one. Every change goes through the history (Ctrl/Cmd+Z undoes, Shift+Ctrl/Cmd+Z or Ctrl+Y redoes).
 *
 * Controlled: `value` is the document (normalised: every block has an id, there is a footer), `onChange` gets each
 * new one. What is saved is the caller's business (EmailContentEditor and the autosave).
 */
import type { Editor } from '@tiptap/core';
import { useEffect, useId, useMemo, useRef, useState, type DragEvent, type ReactNode } from 'react';
import { Button } from '../Button';
import { precheck, uploadErrorText, uploadImage } from './api';
import type { UploadState } from './BlockView';
import { Canvas } from './Canvas';
import type { Block, BlockDocument, DocumentSettings } from './document';
import { useHistory } from './history';
import { BlockFields, DocumentFields } from './Inspector';
import { MenuButton } from './MenuButton';
import { mergeTags } from './merge-tags';
import {
  allBlocks,
  BLOCK_LABELS,
  describeAll,
  describeBlock,
  duplicateBlock,
  fits,
  forSaving,
  idOf,
  insertBlock,
  insertionPoint,
  limitsReached,
  listOf,
  locate,
  moveBy,
  newBlock,
  newId,
  PALETTE,
  removeBlock,
  updateBlock,
  type ListId,
  type PaletteItem,
} from './operations';
import { LivePreview } from './Preview';
import { allowedHref } from './RichText';

type Target =
  { kind: 'rich'; editor: Editor; plain: boolean } | { kind: 'input'; el: HTMLInputElement | HTMLTextAreaElement };

export interface EmailEditorProps {
  value: BlockDocument;
  onChange: (doc: BlockDocument) => void;
  readOnly?: boolean;
  /** The preview's contact (lifted so a test send can use the same one). */
  contactId?: string;
  onContactId?: (id: string) => void;
  /** Problems of the last save by block id (operations.ts blockAt maps the API's pointers). */
  problems?: Record<string, string[]>;
  /** The workspace's brand colour (the email settings' reset) and postal address (the footer shows it). */
  workspaceBrand?: string | null;
  postalAddress?: string | null;
  /** Property keys the workspace uses, for the merge-tag menu. */
  propertyKeys?: string[];
  /** Shown at the end of the toolbar (the autosave's state). */
  status?: ReactNode;
  /** Beside the palette: the switch to code mode. */
  actions?: ReactNode;
  preview?: boolean;
}

const IMAGE_ACCEPT = 'image/png,image/jpeg,image/gif,image/webp';

function hasFiles(e: DragEvent): boolean {
  return [...e.dataTransfer.types].includes('Files');
}

function setNativeValue(el: HTMLInputElement | HTMLTextAreaElement, value: string): void {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
}

export function EmailEditor({
  value,
  onChange,
  readOnly = false,
  contactId: givenContact,
  onContactId,
  problems = {},
  workspaceBrand = null,
  postalAddress = null,
  propertyKeys = [],
  status,
  actions,
  preview = true,
}: EmailEditorProps) {
  const history = useHistory(value, onChange);
  const doc = value;
  const [selected, setSelected] = useState<string | null>(null);
  const [panel, setPanel] = useState<'block' | 'document' | 'preview'>('block');
  const [target, setTarget] = useState<Target | null>(null);
  const [uploads, setUploads] = useState<Record<string, UploadState>>({});
  const [message, setMessage] = useState('');
  const [dropping, setDropping] = useState(false);
  const [linkForm, setLinkForm] = useState<{ href: string; error: string | null } | null>(null);
  const [ownContact, setOwnContact] = useState('');
  const contactId = givenContact ?? ownContact;
  const setContactId = onContactId ?? setOwnContact;
  const fileInput = useRef<HTMLInputElement>(null);
  const pickFor = useRef<string | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const linkId = useId();
  const footerReasonId = useId();

  const announce = (text: string) => {
    // The same words twice are announced twice: clear first.
    setMessage('');
    requestAnimationFrame(() => setMessage(text));
  };
  const taken = () => new Set(allBlocks(doc).map(idOf));
  const focusBlock = (id: string, what: 'text' | 'handle' = 'handle') =>
    requestAnimationFrame(() => {
      const el = root.current?.querySelector<HTMLElement>(`[data-block-id="${CSS.escape(id)}"]`);
      const rich = what === 'text' ? el?.querySelector<HTMLElement>('.ee-rich-content') : null;
      (rich ?? el?.querySelector<HTMLElement>('.ee-handle'))?.focus();
    });
  /** Selecting a block shows its settings, unless the preview is being watched. */
  const select = (id: string | null) => {
    setSelected(id);
    if (id) setPanel((p) => (p === 'preview' ? p : 'block'));
  };

  /* ---- block operations */
  const insertNew = (block: Block, at: { list: ListId; index: number }) => {
    const limit = limitsReached(doc, at.list);
    if (limit) {
      announce(limit);
      return false;
    }
    history.commit((d) => insertBlock(d, at.list, at.index, block));
    select(block.id!);
    announce(`${BLOCK_LABELS[block.type]} block added.`);
    focusBlock(block.id!, block.type === 'text' || block.type === 'heading' ? 'text' : 'handle');
    return true;
  };
  const add = (item: PaletteItem) => {
    if (item === 'footer' && allBlocks(doc).some((b) => b.type === 'footer')) {
      announce('The email has its footer already: one per email.');
      return;
    }
    const block = newBlock(item, { taken: taken() });
    insertNew(block, insertionPoint(doc, selected, block));
  };
  const addTo = (list: ListId, item: PaletteItem) => {
    const block = newBlock(item, { taken: taken() });
    if (!fits(block, list)) return;
    insertNew(block, { list, index: listOf(doc, list).length });
  };
  const edit = (id: string, patch: Partial<Block>, key?: string) =>
    history.commit((d) => updateBlock(d, id, patch), key);
  const move = (id: string, delta: -1 | 1) => {
    const next = moveBy(doc, id, delta);
    if (!next) return;
    history.commit(() => next);
    announce(`Moved: now ${describeBlock(next, id)}.`);
  };
  const duplicate = (id: string) => {
    const r = duplicateBlock(doc, id);
    if (!r) return;
    const at = locate(doc, id)!;
    const limit = limitsReached(doc, at.list);
    if (limit) {
      announce(limit);
      return;
    }
    history.commit(() => r.doc);
    select(r.id);
    announce(`Duplicated: the copy is ${describeBlock(r.doc, r.id)}.`);
    focusBlock(r.id);
  };
  const remove = (id: string) => {
    const at = locate(doc, id);
    if (!at || at.block.type === 'footer') return;
    const list = listOf(doc, at.list);
    const next = list[at.index + 1] ?? list[at.index - 1];
    history.commit((d) => removeBlock(d, id));
    setUploads((u) => {
      const { [id]: _gone, ...rest } = u;
      return rest;
    });
    select(next?.id ?? null);
    announce(`${BLOCK_LABELS[at.block.type]} block deleted. Ctrl+Z brings it back.`);
    if (next?.id) focusBlock(next.id);
  };

  /* ---- images */
  const startUpload = (file: File, blockId: string) => {
    const pre = precheck(file);
    if (pre) {
      setUploads((u) => ({ ...u, [blockId]: { name: file.name, progress: 0, error: pre } }));
      announce(pre);
      return;
    }
    setUploads((u) => ({ ...u, [blockId]: { name: file.name, progress: 0 } }));
    announce(`Uploading ${file.name}…`);
    const { promise } = uploadImage(file, (progress) =>
      setUploads((u) => (u[blockId] ? { ...u, [blockId]: { ...u[blockId]!, progress } } : u)),
    );
    promise.then(
      (img) => {
        setUploads((u) => {
          const { [blockId]: _done, ...rest } = u;
          return rest;
        });
        history.commit((d) => {
          const at = locate(d, blockId);
          if (!at || at.block.type !== 'image') return d;
          const full = d.settings?.width ?? 600;
          const width = at.block.width ?? (img.width > 0 && img.width < full ? Math.max(16, img.width) : undefined);
          return updateBlock(d, blockId, { url: img.url, width });
        });
        announce(`${file.name} uploaded. Describe it in Alternative text.`);
      },
      (err: unknown) => {
        const text = uploadErrorText(file, err);
        setUploads((u) => ({ ...u, [blockId]: { name: file.name, progress: 0, error: text } }));
        announce(text);
      },
    );
  };
  const pickFile = (blockId: string) => {
    pickFor.current = blockId;
    fileInput.current?.click();
  };
  /** Files dropped on a block: into an image block without a picture; otherwise new image blocks after it. */
  const dropFiles = (files: File[], onBlock: string | null) => {
    if (!files.length || readOnly) return;
    const on = onBlock ? locate(doc, onBlock) : null;
    let rest = files;
    if (on?.block.type === 'image') {
      startUpload(files[0]!, onBlock!);
      rest = files.slice(1);
    }
    if (!rest.length) return;
    const ids = taken();
    const blocks = rest.map(() => {
      const b: Block = { type: 'image', id: newId(ids), url: '', alt: '' };
      ids.add(b.id!);
      return b;
    });
    const at =
      on && fits(blocks[0]!, on.list)
        ? { list: on.list, index: on.index + 1 }
        : insertionPoint(doc, onBlock, blocks[0]!);
    const limit = limitsReached(doc, at.list);
    if (limit) {
      announce(limit);
      return;
    }
    history.commit((d) => blocks.reduceRight((x, b) => insertBlock(x, at.list, at.index, b), d));
    select(blocks[0]!.id!);
    rest.forEach((f, i) => startUpload(f, blocks[i]!.id!));
  };

  /* ---- text formatting and merge tags */
  const rich = target?.kind === 'rich' && !target.editor.isDestroyed ? target.editor : null;
  // The toolbar follows the active text's marks: it renders again on each of that editor's transactions.
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!rich) return;
    const again = () => setTick((t) => t + 1);
    rich.on('transaction', again);
    return () => {
      rich.off('transaction', again);
    };
  }, [rich]);
  const formatting = rich
    ? {
        bold: rich.isActive('bold'),
        italic: rich.isActive('italic'),
        link: rich.isActive('link'),
        plain: !('bold' in rich.schema.marks),
      }
    : null;
  const canFormat = !!rich && !!formatting && !formatting.plain && !readOnly;
  const onRichActive = (editor: Editor, on: boolean) => {
    if (on) setTarget({ kind: 'rich', editor, plain: !('bold' in editor.schema.marks) });
    else setTarget((t) => (t?.kind === 'rich' && t.editor === editor ? null : t));
  };
  const insertTag = (tag: string) => {
    if (!target) return;
    if (target.kind === 'rich') {
      if (target.editor.isDestroyed) return;
      target.editor.chain().focus().insertContent({ type: 'text', text: tag }).run();
    } else if (target.el.isConnected) {
      const el = target.el;
      const start = el.selectionStart ?? el.value.length;
      const end = el.selectionEnd ?? start;
      setNativeValue(el, el.value.slice(0, start) + tag + el.value.slice(end));
      el.focus();
      el.setSelectionRange(start + tag.length, start + tag.length);
    }
    announce(`Inserted ${tag}.`);
  };
  const openLink = () => {
    if (!rich) return;
    setLinkForm({ href: (rich.getAttributes('link').href as string | undefined) ?? '', error: null });
  };
  const applyLink = () => {
    if (!rich || !linkForm) return;
    let href = linkForm.href.trim();
    if (href && !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('{{') && /^[\w-]+(\.[\w-]+)+/.test(href))
      href = `https://${href}`;
    if (!href) {
      rich.chain().focus().extendMarkRange('link').unsetLink().run();
      setLinkForm(null);
      return;
    }
    if (!allowedHref(href)) {
      setLinkForm({ ...linkForm, error: 'An address starting with https://, http://, mailto: or a merge tag.' });
      return;
    }
    const { empty } = rich.state.selection;
    if (empty && !rich.isActive('link'))
      rich
        .chain()
        .focus()
        .insertContent({ type: 'text', text: href, marks: [{ type: 'link', attrs: { href } }] })
        .run();
    else rich.chain().focus().extendMarkRange('link').setLink({ href }).run();
    setLinkForm(null);
  };

  const selectedBlock = selected ? (locate(doc, selected)?.block ?? null) : null;
  const setSettings = (patch: Partial<DocumentSettings>, key?: string) =>
    history.commit((d) => {
      const settings: DocumentSettings = { ...d.settings, ...patch };
      for (const k of Object.keys(settings) as (keyof DocumentSettings)[])
        if (settings[k] === undefined) delete settings[k];
      const { settings: _old, ...rest } = d;
      return Object.keys(settings).length ? { ...rest, settings } : rest;
    }, key);
  const hasFooter = allBlocks(doc).some((b) => b.type === 'footer');
  const sent = useMemo(() => forSaving(doc), [doc]);
  const descriptions = useMemo(() => describeAll(doc), [doc]);

  return (
    <div
      ref={root}
      className={['ee', dropping && 'ee-dropping'].filter(Boolean).join(' ')}
      onKeyDownCapture={(e) => {
        const mod = e.metaKey || e.ctrlKey;
        if (!mod || e.altKey || readOnly) return;
        if ((e.target as Element).closest('[data-own-undo]')) return;
        const key = e.key.toLowerCase();
        if (key === 'z') {
          e.preventDefault();
          e.stopPropagation();
          if (e.shiftKey) history.redo();
          else history.undo();
        } else if (key === 'y') {
          e.preventDefault();
          e.stopPropagation();
          history.redo();
        }
      }}
      onFocusCapture={(e) => {
        const el = e.target as HTMLElement;
        if (
          (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) &&
          el.dataset.mergeTarget !== undefined
        )
          setTarget({ kind: 'input', el });
      }}
      onDragOver={(e) => {
        if (!hasFiles(e) || readOnly) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        if (!dropping) setDropping(true);
      }}
      onDragLeave={(e) => {
        if (!root.current?.contains(e.relatedTarget as Node | null)) setDropping(false);
      }}
      onDropCapture={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        e.stopPropagation();
        setDropping(false);
        const on = (e.target as Element).closest<HTMLElement>('[data-block-id]');
        dropFiles([...e.dataTransfer.files], on?.dataset.blockId ?? null);
      }}
    >
      <div className="ee-main">
        <div className="ee-toolbar" role="group" aria-label="Editing">
          <Button
            size="sm"
            onClick={history.undo}
            disabled={!history.canUndo || readOnly}
            aria-keyshortcuts="Control+Z Meta+Z"
          >
            <span aria-hidden="true">↶</span> Undo
          </Button>
          <Button
            size="sm"
            onClick={history.redo}
            disabled={!history.canRedo || readOnly}
            aria-keyshortcuts="Control+Shift+Z Meta+Shift+Z Control+Y"
          >
            <span aria-hidden="true">↷</span> Redo
          </Button>
          <span className="ee-sep" aria-hidden="true" />
          <button
            type="button"
            className="btn btn-sm ee-format"
            aria-pressed={!!formatting?.bold}
            disabled={!canFormat}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => rich?.chain().focus().toggleBold().run()}
            aria-keyshortcuts="Control+B Meta+B"
            title="Bold (Ctrl+B)"
          >
            <strong>B</strong>
            <span className="visually-hidden">Bold</span>
          </button>
          <button
            type="button"
            className="btn btn-sm ee-format"
            aria-pressed={!!formatting?.italic}
            disabled={!canFormat}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => rich?.chain().focus().toggleItalic().run()}
            aria-keyshortcuts="Control+I Meta+I"
            title="Italic (Ctrl+I)"
          >
            <em>I</em>
            <span className="visually-hidden">Italic</span>
          </button>
          <button
            type="button"
            className="btn btn-sm ee-format"
            aria-pressed={!!formatting?.link}
            aria-expanded={!!linkForm}
            aria-controls={linkForm ? linkId : undefined}
            disabled={!canFormat}
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => (linkForm ? setLinkForm(null) : openLink())}
          >
            Link
          </button>
          <MenuButton
            label="Merge tag"
            keepFocus
            disabled={!target || readOnly}
            items={mergeTags(propertyKeys).map((t) => ({
              id: t.id,
              label: t.label,
              detail: <code>{t.tag}</code>,
              onSelect: () => insertTag(t.tag),
            }))}
          />
          {status && <span className="ee-status-slot">{status}</span>}
        </div>
        {linkForm && canFormat && (
          <div
            className="ee-link-form"
            id={linkId}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                setLinkForm(null);
                rich?.commands.focus();
              }
            }}
          >
            <label htmlFor={`${linkId}-href`}>Link address</label>
            <input
              id={`${linkId}-href`}
              className="input"
              value={linkForm.href}
              placeholder="https://example.com"
              autoFocus
              data-own-undo
              aria-invalid={linkForm.error ? true : undefined}
              aria-describedby={linkForm.error ? `${linkId}-error` : undefined}
              onChange={(e) => setLinkForm({ href: e.target.value, error: null })}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  applyLink();
                }
              }}
            />
            <Button size="sm" variant="primary" onClick={applyLink}>
              Apply
            </Button>
            {formatting?.link && (
              <Button
                size="sm"
                onClick={() => {
                  rich?.chain().focus().extendMarkRange('link').unsetLink().run();
                  setLinkForm(null);
                }}
              >
                Remove the link
              </Button>
            )}
            <Button size="sm" variant="ghost" onClick={() => setLinkForm(null)}>
              Cancel
            </Button>
            {linkForm.error && (
              <div className="error small" id={`${linkId}-error`}>
                {linkForm.error}
              </div>
            )}
          </div>
        )}
        {!readOnly && (
          <div className="ee-palette" role="group" aria-label="Add a block">
            <span className="ee-palette-label" aria-hidden="true">
              Add
            </span>
            {PALETTE.map((p) =>
              p.item === 'footer' ? (
                <button
                  key={p.item}
                  type="button"
                  className="btn btn-sm ee-palette-item"
                  aria-disabled={hasFooter || undefined}
                  aria-describedby={hasFooter ? footerReasonId : undefined}
                  title={hasFooter ? 'Every email has one footer; it is already there.' : p.hint}
                  onClick={() => add('footer')}
                >
                  {p.label}
                </button>
              ) : (
                <button
                  key={p.item}
                  type="button"
                  className="btn btn-sm ee-palette-item"
                  title={p.hint}
                  onClick={() => add(p.item)}
                >
                  {p.label}
                </button>
              ),
            )}
            <span id={footerReasonId} className="visually-hidden">
              Every email has one footer; it is already there.
            </span>
            {actions}
          </div>
        )}
        <div
          className="ee-canvas"
          onMouseDown={(e) => {
            if (!(e.target as Element).closest('[data-block-id]')) select(null);
          }}
        >
          <Canvas
            doc={doc}
            descriptions={descriptions}
            selected={selected}
            select={select}
            readOnly={readOnly}
            commit={history.commit}
            edit={edit}
            moveUp={(id) => move(id, -1)}
            moveDown={(id) => move(id, 1)}
            duplicate={duplicate}
            remove={remove}
            addTo={addTo}
            uploads={uploads}
            pickFile={pickFile}
            postalAddress={postalAddress}
            onRichActive={onRichActive}
            problems={problems}
            announce={announce}
          />
          {dropping && (
            <div className="ee-drop-hint" aria-hidden="true">
              Drop images on a block to place them there
            </div>
          )}
        </div>
      </div>
      <div className="ee-side">
        <div className="ee-segmented ee-panel-switch" role="group" aria-label="Beside the canvas">
          <button
            type="button"
            aria-pressed={panel === 'block' && !!selectedBlock}
            disabled={!selectedBlock}
            onClick={() => setPanel('block')}
          >
            {selectedBlock ? BLOCK_LABELS[selectedBlock.type] : 'Block'}
          </button>
          <button
            type="button"
            aria-pressed={panel === 'document' || (panel === 'block' && !selectedBlock)}
            onClick={() => setPanel('document')}
          >
            Email settings
          </button>
          {preview && (
            <button type="button" aria-pressed={panel === 'preview'} onClick={() => setPanel('preview')}>
              Preview
            </button>
          )}
        </div>
        {panel === 'preview' && preview ? (
          <LivePreview
            doc={doc}
            sent={sent}
            contactId={contactId}
            onContactId={setContactId}
            onSelectBlock={(id) => {
              select(id);
              focusBlock(id);
            }}
          />
        ) : (
          <section
            className="ee-panel"
            aria-label={panel === 'block' && selectedBlock ? 'Block settings' : 'Email settings'}
          >
            <fieldset className="ee-panel-body" disabled={readOnly}>
              {panel === 'block' && selectedBlock ? (
                <BlockFields
                  key={selectedBlock.id}
                  block={selectedBlock}
                  edit={(patch, key) => edit(selectedBlock.id!, patch, key)}
                  settings={doc.settings ?? {}}
                  upload={uploads[selectedBlock.id!]}
                  pickFile={() => pickFile(selectedBlock.id!)}
                  taken={taken()}
                  problems={problems[selectedBlock.id!] ?? []}
                  postalAddress={postalAddress}
                />
              ) : (
                <DocumentFields settings={doc.settings ?? {}} onChange={setSettings} workspaceBrand={workspaceBrand} />
              )}
            </fieldset>
          </section>
        )}
      </div>
      <div className="visually-hidden" aria-live="polite" aria-atomic="true">
        {message}
      </div>
      <input
        ref={fileInput}
        type="file"
        accept={IMAGE_ACCEPT}
        hidden
        data-testid="image-file-input"
        onChange={(e) => {
          const file = e.target.files?.[0];
          const id = pickFor.current;
          e.target.value = '';
          if (!file || !id) return;
          if (locate(doc, id)?.block.type === 'image') startUpload(file, id);
        }}
      />
    </div>
  );
}
