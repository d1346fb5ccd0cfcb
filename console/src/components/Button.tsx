import type { ButtonHTMLAttributes, ReactNode } from 'react';
import { Spinner } from './States';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost';

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: ButtonVariant;
  size?: 'md' | 'sm';
  /** Shows a spinner and disables the button; the label stays for screen readers. */
  loading?: boolean;
  children?: ReactNode;
}

export function buttonClass(variant: ButtonVariant = 'secondary', size: 'md' | 'sm' = 'md', extra?: string): string {
  return ['btn', variant !== 'secondary' && `btn-${variant}`, size === 'sm' && 'btn-sm', extra]
    .filter(Boolean)
    .join(' ');
}

export function Button({
  variant = 'secondary',
  size = 'md',
  loading = false,
  disabled,
  className,
  children,
  type = 'button',
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type}
      className={buttonClass(variant, size, className)}
      disabled={disabled || loading}
      aria-busy={loading || undefined}
      {...rest}
    >
      {loading && <Spinner size="sm" label="" />}
      {children}
    </button>
  );
}
