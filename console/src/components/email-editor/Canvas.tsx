/**
 * The canvas: the document's blocks in order, each with a drag handle, and the blocks of each column in lists of
 * their own. Moving is dnd-kit's: with the mouse (or touch) by the handle, anywhere, into and out of columns; with the
 * keyboard, focus the handle, Space picks the block up, the arrow keys move it within its list, Space drops it and
 * Escape puts it back; what happens is announced (in words: "Text block 2 of 5"). The selected block also has Move
 * up, Move down, Duplicate and Delete buttons.
 */
import {
  closestCenter,
  DndContext,
  KeyboardSensor,
  PointerSensor,
  pointerWithin,
  useDroppable,
  useSensor,
  useSensors,
  type Announcements,
  type CollisionDetection,
  type DragEndEvent,
  type DragStartEvent,
  type KeyboardCoordinateGetter,
  type UniqueIdentifier,
} from '@dnd-kit/core';
import {
  SortableContext,
  sortableKeyboardCoordinates,
  useSortable,
  verticalListSortingStrategy,
} from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import type { Editor } from '@tiptap/core';
import { useId, useRef, type CSSProperties, type ReactNode } from 'react';
import { BlockView, DEFAULTS, type UploadState } from './BlockView';
import {
  PALETTE,
  BLOCK_LABELS,
  describeBlock,
  listOf,
  locate,
  moveBlock,
  parseList,
  ROOT,
  type ListId,
  type PaletteItem,
} from './operations';
import { FONT_FAMILIES, type Block, type BlockDocument } from './document';
import { MenuButton } from './MenuButton';

interface DragData {
  type: 'block' | 'column';
  list: ListId;
  kind?: Block['type'];
}

export interface CanvasProps {
  doc: BlockDocument;
  /** "Text block 2 of 5" for every block (operations.ts describeAll). */
  descriptions: Map<string, string>;
  selected: string | null;
  select: (id: string) => void;
  readOnly: boolean;
  /** Applies a change to the document (history.ts). */
  commit: (change: (doc: BlockDocument) => BlockDocument, key?: string) => void;
  edit: (id: string, patch: Partial<Block>, key?: string) => void;
  moveUp: (id: string) => void;
  moveDown: (id: string) => void;
  duplicate: (id: string) => void;
  remove: (id: string) => void;
  addTo: (list: ListId, item: PaletteItem) => void;
  uploads: Record<string, UploadState>;
  pickFile: (blockId: string) => void;
  postalAddress: string | null;
  onRichActive: (editor: Editor, on: boolean) => void;
  /** Problems of the last save or render, by block id. */
  problems: Record<string, string[]>;
  announce: (text: string) => void;
}

/** Small line icons of the block's buttons (decorative: each button has its words in aria-label). */
const ICONS = {
  grip: 'M9 5h.01M15 5h.01M9 12h.01M15 12h.01M9 19h.01M15 19h.01',
  up: 'M12 19V5M5 12l7-7 7 7',
  down: 'M12 5v14M19 12l-7 7-7-7',
  copy: 'M9 9h11v11H9zM5 15H4V4h11v1',
  trash: 'M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3',
} as const;

function Glyph({ name }: { name: keyof typeof ICONS }) {
  return (
    <svg
      viewBox="0 0 24 24"
      width="16"
      height="16"
      aria-hidden="true"
      fill="none"
      stroke="currentColor"
      strokeWidth={name === 'grip' ? 3.2 : 2}
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d={ICONS[name]} />
    </svg>
  );
}

const FOOTER_REASON =
  'The footer stays: it carries your postal address and the unsubscribe link, which every marketing email must have.';

function SortableBlock({
  block,
  list,
  index,
  count,
  props,
  children,
}: {
  block: Block;
  list: ListId;
  index: number;
  count: number;
  props: CanvasProps;
  children: ReactNode;
}) {
  const id = block.id!;
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, transform, transition, isDragging, isOver, active } =
    useSortable({ id, data: { type: 'block', list, kind: block.type } satisfies DragData, disabled: props.readOnly });
  const selected = props.selected === id;
  const description = props.descriptions.get(id) ?? 'The block';
  const reasonId = useId();
  const foreign = isOver && active && active.data.current?.list !== list;
  const problems = props.problems[id];
  return (
    <li
      ref={setNodeRef}
      className={[
        'ee-block',
        `ee-block-${block.type}`,
        selected && 'ee-selected',
        isDragging && 'ee-dragging',
        foreign && 'ee-drop-target',
        problems?.length && 'ee-has-problem',
      ]
        .filter(Boolean)
        .join(' ')}
      style={{ transform: CSS.Translate.toString(transform), transition }}
      data-block-id={id}
      data-block-type={block.type}
      onFocusCapture={() => props.select(id)}
      onMouseDown={(e) => {
        if ((e.target as Element).closest('[data-block-id]') === e.currentTarget) props.select(id);
      }}
    >
      <div className="ee-block-bar">
        <button
          ref={setActivatorNodeRef}
          type="button"
          className="ee-handle"
          aria-label={`Move ${description}`}
          {...attributes}
          {...listeners}
          disabled={props.readOnly}
        >
          <Glyph name="grip" />
        </button>
        <span className="ee-block-label" aria-hidden="true">
          {BLOCK_LABELS[block.type]}
        </span>
        {selected && !props.readOnly && (
          <span className="ee-block-actions">
            <button
              type="button"
              className="ee-icon-btn"
              aria-label={`Move up: ${description}`}
              title="Move up"
              disabled={index === 0}
              onClick={() => props.moveUp(id)}
            >
              <Glyph name="up" />
            </button>
            <button
              type="button"
              className="ee-icon-btn"
              aria-label={`Move down: ${description}`}
              title="Move down"
              disabled={index === count - 1}
              onClick={() => props.moveDown(id)}
            >
              <Glyph name="down" />
            </button>
            {block.type !== 'footer' && (
              <button
                type="button"
                className="ee-icon-btn"
                aria-label={`Duplicate ${description}`}
                title="Duplicate"
                onClick={() => props.duplicate(id)}
              >
                <Glyph name="copy" />
              </button>
            )}
            <button
              type="button"
              className="ee-icon-btn ee-delete"
              aria-label={`Delete ${description}`}
              title={block.type === 'footer' ? FOOTER_REASON : 'Delete'}
              aria-disabled={block.type === 'footer' || undefined}
              aria-describedby={block.type === 'footer' ? reasonId : undefined}
              onClick={() => {
                if (block.type === 'footer') props.announce(FOOTER_REASON);
                else props.remove(id);
              }}
            >
              <Glyph name="trash" />
            </button>
            {block.type === 'footer' && (
              <span id={reasonId} className="visually-hidden">
                {FOOTER_REASON}
              </span>
            )}
          </span>
        )}
      </div>
      <div className="ee-block-body">{children}</div>
      {problems && problems.length > 0 && (
        <ul className="ee-block-problems">
          {problems.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
    </li>
  );
}

function ColumnZone({ list, children }: { list: ListId; children: ReactNode }) {
  const { setNodeRef, isOver } = useDroppable({
    id: `zone:${list}`,
    data: { type: 'column', list } satisfies DragData,
  });
  return (
    <div ref={setNodeRef} className={['ee-column-zone', isOver && 'ee-drop-target'].filter(Boolean).join(' ')}>
      {children}
    </div>
  );
}

function BlockList({ list, props, label }: { list: ListId; props: CanvasProps; label: string }) {
  const blocks = listOf(props.doc, list);
  const ids = blocks.map((b) => b.id!);
  return (
    <SortableContext id={list} items={ids} strategy={verticalListSortingStrategy}>
      <ol className={list === ROOT ? 'ee-list ee-list-root' : 'ee-list ee-list-column'} aria-label={label}>
        {blocks.map((b, i) => (
          <SortableBlock key={b.id} block={b} list={list} index={i} count={blocks.length} props={props}>
            <BlockView
              block={b}
              settings={props.doc.settings ?? {}}
              description={props.descriptions.get(b.id!) ?? 'The block'}
              edit={(patch, key) => props.edit(b.id!, patch, key)}
              readOnly={props.readOnly}
              upload={props.uploads[b.id!]}
              pickFile={() => props.pickFile(b.id!)}
              postalAddress={props.postalAddress}
              onRichActive={props.onRichActive}
              renderColumn={(c) => {
                const inner = `${b.id}/${c}`;
                return (
                  <ColumnZone list={inner}>
                    <BlockList list={inner} props={props} label={`Column ${c + 1} of block ${i + 1}`} />
                    {listOf(props.doc, inner).length === 0 && (
                      <p className="ee-column-empty">Empty column: drag a block here or add one.</p>
                    )}
                    {!props.readOnly && (
                      <MenuButton
                        label="Add"
                        ariaLabel={`Add a block to column ${c + 1} of block ${i + 1}`}
                        className="ee-column-add"
                        items={PALETTE.filter(
                          (x) => x.item !== 'footer' && x.item !== 'columns2' && x.item !== 'columns3',
                        ).map((x) => ({
                          id: x.item,
                          label: x.label,
                          onSelect: () => props.addTo(inner, x.item),
                        }))}
                      />
                    )}
                  </ColumnZone>
                );
              }}
            />
          </SortableBlock>
        ))}
      </ol>
    </SortableContext>
  );
}

export function Canvas(props: CanvasProps) {
  const keyboard = useRef(false);
  const docRef = useRef(props.doc);
  docRef.current = props.doc;

  /** Keyboard moves stay in the block's own list: the other lists' blocks are not candidates. */
  const keyboardCoordinates: KeyboardCoordinateGetter = (event, args) => {
    const list = (args.context.active?.data.current as DragData | undefined)?.list;
    const all = args.context.droppableContainers;
    const only = {
      getEnabled: () =>
        all.getEnabled().filter((c) => {
          const d = c.data.current as DragData | undefined;
          return d?.type === 'block' && d.list === list;
        }),
      get: (id: UniqueIdentifier) => all.get(id),
    } as typeof all;
    return sortableKeyboardCoordinates(event, { ...args, context: { ...args.context, droppableContainers: only } });
  };

  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: keyboardCoordinates }),
  );

  const collision: CollisionDetection = (args) => {
    const data = args.active.data.current as DragData;
    // Columns and the footer stay at the top level; a keyboard move stays in its list.
    const sameList = keyboard.current || data.kind === 'columns' || data.kind === 'footer';
    const candidates = args.droppableContainers.filter((c) => {
      const d = c.data.current as DragData | undefined;
      if (!d) return false;
      if (sameList) return d.type === 'block' && d.list === data.list;
      return !(d.list !== ROOT && parseList(d.list)?.parent === args.active.id);
    });
    if (keyboard.current) {
      // The keyboard's coordinates put the block's top on a block above it, or its bottom on one below
      // (sortableKeyboardCoordinates): the candidate whose top or bottom edge matches is where it is.
      const r = args.collisionRect;
      let best: (typeof candidates)[number] | null = null;
      let distance = Infinity;
      for (const c of candidates) {
        const rect = args.droppableRects.get(c.id);
        if (!rect) continue;
        const d = Math.min(Math.abs(rect.top - r.top), Math.abs(rect.bottom - r.bottom));
        if (d < distance) {
          distance = d;
          best = c;
        }
      }
      return best ? [{ id: best.id, data: { droppableContainer: best, value: distance } }] : [];
    }
    if (sameList || !args.pointerCoordinates) return closestCenter({ ...args, droppableContainers: candidates });
    const within = pointerWithin({ ...args, droppableContainers: candidates });
    const inColumns = within.filter((c) => {
      const d = candidates.find((x) => x.id === c.id)?.data.current as DragData | undefined;
      return d && d.list !== ROOT;
    });
    if (inColumns.length) {
      const blocks = inColumns.filter(
        (c) => (candidates.find((x) => x.id === c.id)?.data.current as DragData).type === 'block',
      );
      return blocks.length ? blocks : inColumns;
    }
    return closestCenter({
      ...args,
      droppableContainers: candidates.filter((c) => (c.data.current as DragData).list === ROOT),
    });
  };

  const where = (id: UniqueIdentifier | undefined): string => {
    if (id === undefined) return 'nowhere';
    const s = String(id);
    if (s.startsWith('zone:')) {
      const p = parseList(s.slice(5))!;
      const parent = locate(docRef.current, p.parent);
      return `the end of column ${p.column + 1} of block ${(parent?.index ?? 0) + 1}`;
    }
    const at = locate(docRef.current, s);
    if (!at) return 'nowhere';
    const n = listOf(docRef.current, at.list).length;
    if (!at.parent) return `position ${at.index + 1} of ${n}`;
    const parent = locate(docRef.current, at.parent.id);
    return `position ${at.index + 1} of ${n} in column ${at.parent.column + 1} of block ${(parent?.index ?? 0) + 1}`;
  };
  const announcements: Announcements = {
    onDragStart: ({ active }) =>
      `Picked up ${describeBlock(docRef.current, String(active.id))}. Arrow keys move it, Space drops it, Escape cancels.`,
    onDragOver: ({ active, over }) =>
      over && over.id !== active.id
        ? `${BLOCK_LABELS[(active.data.current as DragData).kind ?? 'text']} block is over ${where(over.id)}.`
        : undefined,
    onDragEnd: ({ active, over }) =>
      over
        ? `${BLOCK_LABELS[(active.data.current as DragData).kind ?? 'text']} block dropped at ${where(over.id)}.`
        : `${BLOCK_LABELS[(active.data.current as DragData).kind ?? 'text']} block dropped where it was.`,
    onDragCancel: ({ active }) =>
      `Moving was cancelled: ${BLOCK_LABELS[(active.data.current as DragData).kind ?? 'text']} block is back at its place.`,
  };

  const onDragStart = (e: DragStartEvent) => {
    keyboard.current = e.activatorEvent instanceof KeyboardEvent;
    props.select(String(e.active.id));
  };
  const onDragEnd = ({ active, over }: DragEndEvent) => {
    keyboard.current = false;
    if (!over || over.id === active.id) return;
    const id = String(active.id);
    const o = over.data.current as DragData | undefined;
    if (!o) return;
    props.commit((doc) => {
      if (o.type === 'column') return moveBlock(doc, id, o.list, listOf(doc, o.list).length);
      const to = locate(doc, String(over.id));
      if (!to) return doc;
      return moveBlock(doc, id, to.list, to.index);
    });
  };

  const settings = props.doc.settings ?? {};
  const surface = { background: settings.backgroundColor ?? DEFAULTS.background };
  const content = {
    maxWidth: `${settings.width ?? DEFAULTS.width}px`,
    background: settings.contentBackgroundColor ?? DEFAULTS.card,
    color: settings.textColor ?? DEFAULTS.text,
    fontFamily: FONT_FAMILIES[settings.fontFamily ?? 'sans'].css,
    '--ee-link': settings.linkColor ?? settings.brandColor ?? DEFAULTS.brand,
  } as CSSProperties;

  return (
    <DndContext
      sensors={sensors}
      collisionDetection={collision}
      onDragStart={onDragStart}
      onDragEnd={onDragEnd}
      onDragCancel={() => (keyboard.current = false)}
      accessibility={{
        announcements,
        screenReaderInstructions: {
          draggable:
            'To move a block, press Space or Enter on its handle to pick it up, the Up and Down arrow keys to move it, Space or Enter to drop it, Escape to cancel.',
        },
      }}
    >
      <div className="ee-surface" style={surface}>
        <div className="ee-content" style={content}>
          <BlockList list={ROOT} props={props} label="Blocks of the email" />
        </div>
      </div>
    </DndContext>
  );
}
