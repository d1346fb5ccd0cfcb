/**
 * A menu button (WAI-ARIA menu pattern): the button opens a list of actions; arrow keys, Home and End move between
 * them, Enter or Space chooses, Escape closes and gives focus back to the button, Tab or a click elsewhere closes.
 */
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { buttonClass } from '../Button';

export interface MenuItem {
  id: string;
  label: ReactNode;
  /** Shown after the label, smaller. */
  detail?: ReactNode;
  disabled?: boolean;
  onSelect: () => void;
}

export function MenuButton({
  label,
  items,
  className,
  size = 'sm',
  disabled = false,
  ariaLabel,
  keepFocus = false,
  align = 'left',
}: {
  label: ReactNode;
  items: MenuItem[];
  className?: string;
  size?: 'sm' | 'md';
  disabled?: boolean;
  ariaLabel?: string;
  /** Keep the focus where it was when the menu opens with the mouse (a text being edited keeps its cursor). */
  keepFocus?: boolean;
  align?: 'left' | 'right';
}) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const id = useId();

  const focusItem = (index: number) => {
    const els = [
      ...(list.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]:not([aria-disabled="true"])') ?? []),
    ];
    if (!els.length) return;
    els[(index + els.length) % els.length]!.focus();
  };

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      const t = e.target as Node;
      if (!list.current?.contains(t) && !button.current?.contains(t)) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);

  const choose = (item: MenuItem) => {
    if (item.disabled) return;
    setOpen(false);
    item.onSelect();
  };

  return (
    <div className={['menu-button', className].filter(Boolean).join(' ')}>
      <button
        ref={button}
        type="button"
        className={buttonClass('secondary', size)}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        aria-label={ariaLabel}
        disabled={disabled}
        onMouseDown={(e) => {
          if (keepFocus) e.preventDefault();
        }}
        onClick={(e) => {
          const next = !open;
          setOpen(next);
          // From the keyboard (detail 0), focus moves into the menu; from the mouse it stays where it was.
          if (next && (e.detail === 0 || !keepFocus)) requestAnimationFrame(() => focusItem(0));
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            setOpen(true);
            requestAnimationFrame(() => focusItem(e.key === 'ArrowDown' ? 0 : -1));
          }
        }}
      >
        {label}
        <span aria-hidden="true" className="menu-caret">
          ▾
        </span>
      </button>
      {open && (
        <ul
          ref={list}
          id={id}
          role="menu"
          className={`menu-list menu-list-${align}`}
          aria-label={typeof label === 'string' ? label : ariaLabel}
          onKeyDown={(e) => {
            const els = [
              ...(list.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]:not([aria-disabled="true"])') ??
                []),
            ];
            const at = els.indexOf(document.activeElement as HTMLButtonElement);
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              focusItem(at + 1);
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              focusItem(at - 1);
            } else if (e.key === 'Home') {
              e.preventDefault();
              focusItem(0);
            } else if (e.key === 'End') {
              e.preventDefault();
              focusItem(-1);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              e.stopPropagation();
              setOpen(false);
              button.current?.focus();
            } else if (e.key === 'Tab') setOpen(false);
          }}
        >
          {items.map((item) => (
            <li key={item.id} role="none">
              <button
                type="button"
                role="menuitem"
                tabIndex={-1}
                className="menu-item"
                aria-disabled={item.disabled || undefined}
                onMouseDown={(e) => {
                  if (keepFocus) e.preventDefault();
                }}
                onClick={() => choose(item)}
              >
                <span>{item.label}</span>
                {item.detail && <span className="menu-detail"> {item.detail}</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
