import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';

export type ToastTone = 'info' | 'success' | 'error';
interface ToastItem {
  id: number;
  message: string;
  tone: ToastTone;
}

interface ToastApi {
  show(message: string, tone?: ToastTone): void;
  success(message: string): void;
  error(message: string): void;
}

const ToastContext = createContext<ToastApi | null>(null);
let nextId = 1;

/**
 * Notifications go away by themselves (5 s, errors 9 s), except while the pointer is over them or focus is in
 * them: then they wait, and get their full time again after (WCAG 2.2.1, timing adjustable).
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<ToastItem[]>([]);
  const timers = useRef(new Map<number, { timer: ReturnType<typeof setTimeout> | null; ms: number }>());
  const held = useRef(false);
  const dismiss = useCallback((id: number) => {
    const t = timers.current.get(id);
    if (t?.timer) clearTimeout(t.timer);
    timers.current.delete(id);
    setItems((xs) => xs.filter((x) => x.id !== id));
  }, []);
  const arm = useCallback(
    (id: number) => {
      const t = timers.current.get(id);
      if (t && !t.timer) t.timer = setTimeout(() => dismiss(id), t.ms);
    },
    [dismiss],
  );
  const show = useCallback(
    (message: string, tone: ToastTone = 'info') => {
      const id = nextId++;
      setItems((xs) => [...xs.slice(-3), { id, message, tone }]);
      timers.current.set(id, { timer: null, ms: tone === 'error' ? 9000 : 5000 });
      if (!held.current) arm(id);
    },
    [arm],
  );
  const hold = useCallback(() => {
    held.current = true;
    for (const t of timers.current.values())
      if (t.timer) {
        clearTimeout(t.timer);
        t.timer = null;
      }
  }, []);
  const release = useCallback(() => {
    held.current = false;
    for (const id of timers.current.keys()) arm(id);
  }, [arm]);
  const api = useMemo<ToastApi>(
    () => ({ show, success: (m) => show(m, 'success'), error: (m) => show(m, 'error') }),
    [show],
  );
  return (
    <ToastContext.Provider value={api}>
      {children}
      <div
        className="toasts"
        role="status"
        aria-live="polite"
        onMouseEnter={hold}
        onMouseLeave={release}
        onFocus={hold}
        onBlur={release}
      >
        {items.map((t) => (
          <div key={t.id} className={`toast toast-${t.tone}`}>
            <span>{t.message}</span>
            <button type="button" onClick={() => dismiss(t.id)} aria-label="Dismiss notification">
              ✕
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): ToastApi {
  const t = useContext(ToastContext);
  if (!t) throw new Error('useToast outside ToastProvider');
  return t;
}
