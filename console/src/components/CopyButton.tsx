import { useState } from 'react';
import { Button } from './Button';

async function copy(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // Fall through: some contexts (http, headless) refuse the async clipboard.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what?: string }) {
  const [done, setDone] = useState(false);
  return (
    <Button
      size="sm"
      onClick={async () => {
        await copy(text);
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
      // The accessible name keeps the visible text in it ("Copied" for a moment too), as WCAG 2.5.3 asks.
      aria-label={what ? `${done ? 'Copied' : label} ${what}` : undefined}
    >
      <span aria-live="polite">{done ? 'Copied' : label}</span>
    </Button>
  );
}

/** A value in monospace with a copy button beside it. */
export function CopyField({ value, what }: { value: string; what: string }) {
  return (
    <div className="copy-field">
      <code>{value}</code>
      <CopyButton text={value} what={what} />
    </div>
  );
}
