/**
 * Labelled inputs: every control has a visible label, its hint and error are tied to it with
 * aria-describedby, and an error sets aria-invalid.
 */
import {
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';

interface FieldShell {
  label: ReactNode;
  hint?: ReactNode;
  error?: string | null;
  className?: string;
}

function describedBy(id: string, hint: unknown, error: unknown): string | undefined {
  return [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
}

function Shell({ id, label, hint, error, className, children }: FieldShell & { id: string; children: ReactNode }) {
  return (
    <div className={['field', className].filter(Boolean).join(' ')}>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && (
        <div className="hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {error && (
        <div className="error" id={`${id}-error`}>
          {error}
        </div>
      )}
    </div>
  );
}

export type InputProps = FieldShell & Omit<InputHTMLAttributes<HTMLInputElement>, 'className'>;

export function Input({ label, hint, error, className, id: given, ...rest }: InputProps) {
  const auto = useId();
  const id = given ?? auto;
  return (
    <Shell id={id} label={label} hint={hint} error={error} className={className}>
      <input
        id={id}
        className="input"
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...rest}
      />
    </Shell>
  );
}

export type TextareaProps = FieldShell & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'className'>;

export function Textarea({ label, hint, error, className, id: given, ...rest }: TextareaProps) {
  const auto = useId();
  const id = given ?? auto;
  return (
    <Shell id={id} label={label} hint={hint} error={error} className={className}>
      <textarea
        id={id}
        className="textarea"
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...rest}
      />
    </Shell>
  );
}

export interface SelectOption {
  value: string;
  label: string;
}

export type SelectProps = FieldShell &
  Omit<SelectHTMLAttributes<HTMLSelectElement>, 'className'> & { options: SelectOption[] };

export function Select({ label, hint, error, className, id: given, options, ...rest }: SelectProps) {
  const auto = useId();
  const id = given ?? auto;
  return (
    <Shell id={id} label={label} hint={hint} error={error} className={className}>
      <select
        id={id}
        className="select"
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...rest}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </Shell>
  );
}

export type CheckboxProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'className'> & {
  label: ReactNode;
  hint?: ReactNode;
};

export function Checkbox({ label, hint, id: given, ...rest }: CheckboxProps) {
  const auto = useId();
  const id = given ?? auto;
  return (
    <div className="check">
      <input type="checkbox" id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      <div>
        <label htmlFor={id}>{label}</label>
        {hint && (
          <div className="hint muted small" id={`${id}-hint`}>
            {hint}
          </div>
        )}
      </div>
    </div>
  );
}

/** The problem's messages that no field shows, as a list at the top of a form. */
export function ErrorSummary({ message, errors }: { message?: string | null; errors?: string[] }) {
  if (!message && !errors?.length) return null;
  return (
    <div className="error-summary" role="alert">
      {message && <strong>{message}</strong>}
      {errors && errors.length > 0 && (
        <ul>
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
