/** Small labelled inputs of the editor's panel: a colour (picker and hex), a whole number in a range, an alignment. */
import { useEffect, useId, useState } from 'react';
import { Button } from '../Button';
import { Select } from '../Field';
import type { Align } from './document';

const HEX = /^#[0-9a-fA-F]{6}$/;

export function ColorField({
  label,
  value,
  fallback,
  onChange,
  hint,
  resetLabel = 'Default',
  resettable,
}: {
  label: string;
  value: string | undefined;
  /** What the email uses when no colour is set (shown in the picker). */
  fallback: string;
  onChange: (v: string | undefined) => void;
  hint?: string;
  resetLabel?: string;
  /** Whether the reset button shows (default: when a colour is set). */
  resettable?: boolean;
}) {
  const id = useId();
  const [text, setText] = useState(value ?? '');
  useEffect(() => setText(value ?? ''), [value]);
  const bad = text !== '' && !HEX.test(text);
  return (
    <div className="field ee-color-field">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input
          id={id}
          type="color"
          className="ee-color"
          value={(value ?? fallback).toLowerCase()}
          onChange={(e) => onChange(e.target.value.toLowerCase())}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />
        <input
          className="input ee-hex"
          value={text}
          placeholder={fallback}
          aria-label={`${label}, as #rrggbb`}
          aria-invalid={bad || undefined}
          maxLength={7}
          onChange={(e) => {
            const v = e.target.value.trim();
            setText(v);
            if (HEX.test(v)) onChange(v.toLowerCase());
            else if (v === '') onChange(undefined);
          }}
        />
        {(resettable ?? value !== undefined) && (
          <Button size="sm" variant="ghost" onClick={() => onChange(undefined)}>
            {resetLabel}
          </Button>
        )}
      </div>
      {hint && (
        <div className="hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {bad && <div className="error">A colour as # and six hex digits, such as #2f4fd6.</div>}
    </div>
  );
}

export function NumberField({
  label,
  value,
  min,
  max,
  onChange,
  hint,
  unit,
  disabled,
}: {
  label: string;
  value: number | undefined;
  min: number;
  max: number;
  onChange: (v: number) => void;
  hint?: string;
  unit?: string;
  disabled?: boolean;
}) {
  const id = useId();
  const [text, setText] = useState(value === undefined ? '' : String(value));
  useEffect(() => setText(value === undefined ? '' : String(value)), [value]);
  const n = Number(text);
  const bad = text !== '' && (!Number.isInteger(n) || n < min || n > max);
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {unit && <span className="muted"> ({unit})</span>}
      </label>
      <input
        id={id}
        className="input ee-number"
        type="number"
        inputMode="numeric"
        min={min}
        max={max}
        step={1}
        value={text}
        disabled={disabled}
        aria-invalid={bad || undefined}
        aria-describedby={hint || bad ? `${id}-hint` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          const v = Number(e.target.value);
          if (e.target.value !== '' && Number.isInteger(v) && v >= min && v <= max) onChange(v);
        }}
        onBlur={() => setText(value === undefined ? '' : String(value))}
      />
      {(hint || bad) && (
        <div className={bad ? 'error' : 'hint'} id={`${id}-hint`}>
          {bad ? `A whole number from ${min} to ${max}.` : hint}
        </div>
      )}
    </div>
  );
}

export function AlignField({ value, onChange }: { value: Align | undefined; onChange: (a: Align) => void }) {
  return (
    <Select
      label="Alignment"
      value={value ?? 'left'}
      onChange={(e) => onChange(e.target.value as Align)}
      options={[
        { value: 'left', label: 'Left' },
        { value: 'center', label: 'Centre' },
        { value: 'right', label: 'Right' },
      ]}
    />
  );
}
