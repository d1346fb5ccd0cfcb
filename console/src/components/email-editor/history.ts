/**
 * Undo and redo over document states. Every change goes through `commit`, which keeps the state before it; changes
 * with the same `key` (typing in one field of one block) within a second of each other are one step, so undo takes
 * back a burst of typing, not a letter. Changes are functions of the newest state, so two in one event both count.
 */
import { useCallback, useReducer, useRef } from 'react';
import type { BlockDocument } from './document';

const DEPTH = 200;
const BURST_MS = 1000;

export interface History {
  /** Applies a change; `key` names a typing burst (e.g. `b-1234:text`), none for a change of its own. */
  commit(change: (doc: BlockDocument) => BlockDocument, key?: string): void;
  undo(): void;
  redo(): void;
  canUndo: boolean;
  canRedo: boolean;
}

export function useHistory(value: BlockDocument, onChange: (doc: BlockDocument) => void): History {
  const past = useRef<BlockDocument[]>([]);
  const future = useRef<BlockDocument[]>([]);
  const last = useRef<{ key: string | null; at: number }>({ key: null, at: 0 });
  const current = useRef(value);
  const emitted = useRef(value);
  const change = useRef(onChange);
  change.current = onChange;
  // A value from outside (not one this hook handed out) is the newest state.
  if (value !== emitted.current) {
    current.current = value;
    emitted.current = value;
  }
  const [, rerender] = useReducer((x: number) => x + 1, 0);

  const emit = useCallback((doc: BlockDocument) => {
    current.current = doc;
    emitted.current = doc;
    change.current(doc);
    rerender();
  }, []);

  const commit = useCallback(
    (fn: (doc: BlockDocument) => BlockDocument, key?: string) => {
      const before = current.current;
      const next = fn(before);
      if (next === before) return;
      const now = Date.now();
      const burst = key !== undefined && last.current.key === key && now - last.current.at < BURST_MS;
      if (!burst) {
        past.current.push(before);
        if (past.current.length > DEPTH) past.current.shift();
      }
      future.current = [];
      last.current = { key: key ?? null, at: now };
      emit(next);
    },
    [emit],
  );

  const undo = useCallback(() => {
    const prev = past.current.pop();
    if (!prev) return;
    future.current.push(current.current);
    last.current = { key: null, at: 0 };
    emit(prev);
  }, [emit]);

  const redo = useCallback(() => {
    const next = future.current.pop();
    if (!next) return;
    past.current.push(current.current);
    last.current = { key: null, at: 0 };
    emit(next);
  }, [emit]);

  return { commit, undo, redo, canUndo: past.current.length > 0, canRedo: future.current.length > 0 };
}
