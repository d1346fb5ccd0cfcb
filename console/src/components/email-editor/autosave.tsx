/**
 * Autosave: a value is saved a moment (1 s) after it last changed, with a visible state: "Saving…", "Saved 12:04",
 * "Couldn't save — Retry".
 *
 * No edit is lost and no answer is applied out of order:
 * - saves run one at a time, in order (one queue per editor: explicit saves go through it too, `run`), so the server
 *   gets them in the order they were made and the last one it gets is the newest;
 * - what was sent is remembered; when the answer comes and the value changed meanwhile, the newer value is saved next;
 * - an answer never writes into the value: the local edits stay the truth (the caller updates only its cache);
 * - a failed save keeps the edits and says why; Retry (or the next edit) tries again; leaving the page with unsaved
 *   edits asks first (the browser's "leave site?"), and unmounting saves what is pending.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../../api/client';
import { describeError, sentenceFor } from '../../lib/problems';
import { Button } from '../Button';

export type SaveStatus = 'idle' | 'pending' | 'saving' | 'saved' | 'error';

export interface SaveState {
  status: SaveStatus;
  savedAt: Date | null;
  error: unknown;
}

export interface Autosave {
  state: SaveState;
  /** Saves what is pending now (before a test send, say) and waits for it: true when all is saved. */
  flush(): Promise<boolean>;
  retry(): void;
  /** Runs a save of the caller's own in the same queue (an explicit Save of the whole page). */
  run<R>(fn: () => Promise<R>): Promise<R>;
  /** What a save of the caller's own stored: nothing to autosave until it changes again. */
  markSaved(value: unknown, at?: Date): void;
}

export function useAutosave<T>({
  value,
  save,
  enabled = true,
  delay = 1000,
  savedAt = null,
}: {
  value: T;
  save: (value: T) => Promise<unknown>;
  enabled?: boolean;
  delay?: number;
  /** When the value was last saved (the resource's updatedAt). */
  savedAt?: Date | null;
}): Autosave {
  const latest = useRef(value);
  latest.current = value;
  const savedKey = useRef(JSON.stringify(value));
  const saveFn = useRef(save);
  saveFn.current = save;
  const chain = useRef<Promise<unknown>>(Promise.resolve());
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const [state, setState] = useState<SaveState>({ status: savedAt ? 'saved' : 'idle', savedAt, error: null });

  const run = useCallback(<R,>(fn: () => Promise<R>): Promise<R> => {
    const p = chain.current.then(fn, fn);
    chain.current = p.catch(() => undefined);
    return p;
  }, []);

  const saveNow = useCallback((): Promise<boolean> => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    return run(async () => {
      const v = latest.current;
      const key = JSON.stringify(v);
      if (key === savedKey.current) {
        setState((s) => (s.status === 'error' || s.status === 'pending' ? { ...s, status: 'saved', error: null } : s));
        return true;
      }
      setState((s) => ({ ...s, status: 'saving' }));
      try {
        await saveFn.current(v);
        savedKey.current = key;
        const newer = JSON.stringify(latest.current) !== key;
        setState({ status: newer ? 'pending' : 'saved', savedAt: new Date(), error: null });
        if (newer) timer.current = setTimeout(() => void saveNow(), delay);
        return true;
      } catch (error) {
        setState((s) => ({ status: 'error', savedAt: s.savedAt, error }));
        return false;
      }
    });
  }, [run, delay]);

  useEffect(() => {
    if (!enabled) return;
    if (JSON.stringify(value) === savedKey.current) return;
    setState((s) => (s.status === 'saving' || s.status === 'pending' ? s : { ...s, status: 'pending' }));
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void saveNow(), delay);
  }, [value, enabled, delay, saveNow]);

  // Leaving with unsaved edits: the browser asks first; unmounting (another page of the console) saves them.
  const unsaved = state.status === 'pending' || state.status === 'saving' || state.status === 'error';
  useEffect(() => {
    if (!unsaved) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [unsaved]);
  useEffect(
    () => () => {
      if (timer.current) {
        clearTimeout(timer.current);
        void saveNow();
      }
    },
    [saveNow],
  );

  const markSaved = useCallback((v: unknown, at = new Date()) => {
    savedKey.current = JSON.stringify(v);
    if (JSON.stringify(latest.current) === savedKey.current) {
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
      setState({ status: 'saved', savedAt: at, error: null });
    }
  }, []);

  return { state, flush: saveNow, retry: () => void saveNow(), run, markSaved };
}

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);

/** Why a save failed, in a sentence: the field problems the API named, or its message. */
export function saveErrorText(err: unknown, describe?: (pointer: string) => string | null): string {
  if (err instanceof ApiError) {
    const fields = (err.problem.errors ?? []).slice(0, 3).map((e) => {
      const where = describe?.(e.path);
      return lowerFirst(sentenceFor(e, where ? { label: where } : undefined)).replace(/\.$/, '');
    });
    if (fields.length) return fields.join('; ');
    return lowerFirst(describeError(err)).replace(/\.$/, '');
  }
  if (err instanceof TypeError) return 'the server could not be reached.';
  return err instanceof Error ? err.message : 'something went wrong.';
}

/** The autosave's state, visible beside the editor. */
export function SaveIndicator({
  state,
  onRetry,
  describe,
}: {
  state: SaveState;
  onRetry: () => void;
  describe?: (pointer: string) => string | null;
}) {
  return (
    <span className={`save-indicator save-${state.status}`} aria-live="polite" data-testid="autosave-state">
      {state.status === 'pending' || state.status === 'saving' ? (
        'Saving…'
      ) : state.status === 'error' ? (
        <>
          <span className="save-error-text">Couldn’t save — {saveErrorText(state.error, describe)}</span>{' '}
          <Button size="sm" onClick={onRetry}>
            Retry
          </Button>
        </>
      ) : state.savedAt ? (
        `Saved ${time.format(state.savedAt)}`
      ) : (
        'No changes yet'
      )}
    </span>
  );
}
