/** ARIA tabs: arrow keys, Home and End move between tabs; only the selected tab is in the tab order. */
import { useId, useRef, type ReactNode } from 'react';

export interface TabItem {
  id: string;
  label: string;
}

export function Tabs({
  tabs,
  selected,
  onSelect,
  label,
  children,
}: {
  tabs: TabItem[];
  selected: string;
  onSelect: (id: string) => void;
  label: string;
  children: ReactNode;
}) {
  const base = useId();
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});
  const move = (to: number) => {
    const t = tabs[(to + tabs.length) % tabs.length]!;
    onSelect(t.id);
    refs.current[t.id]?.focus();
  };
  const index = tabs.findIndex((t) => t.id === selected);
  return (
    <div className="tabs">
      <div role="tablist" aria-label={label}>
        {tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[t.id] = el;
            }}
            role="tab"
            type="button"
            className="tab"
            id={`${base}-tab-${t.id}`}
            aria-selected={t.id === selected}
            aria-controls={`${base}-panel`}
            tabIndex={t.id === selected ? 0 : -1}
            onClick={() => onSelect(t.id)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight') {
                e.preventDefault();
                move(i + 1);
              } else if (e.key === 'ArrowLeft') {
                e.preventDefault();
                move(i - 1);
              } else if (e.key === 'Home') {
                e.preventDefault();
                move(0);
              } else if (e.key === 'End') {
                e.preventDefault();
                move(tabs.length - 1);
              }
            }}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${tabs[index]?.id ?? ''}`} tabIndex={0}>
        {children}
      </div>
    </div>
  );
}
