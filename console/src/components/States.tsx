import type { ReactNode } from 'react';
import { describeError } from '../lib/problems';
import { Button } from './Button';

export function Spinner({ size = 'md', label = 'Loading…' }: { size?: 'sm' | 'md'; label?: string }) {
  const px = size === 'sm' ? 14 : 22;
  return (
    <span role={label ? 'status' : undefined} className="row">
      <span
        className="spinner"
        aria-hidden="true"
        style={{ width: px, height: px, borderWidth: size === 'sm' ? 2 : 3 }}
      />
      {label && <span className="visually-hidden">{label}</span>}
    </span>
  );
}

export function Skeleton({ lines = 4 }: { lines?: number }) {
  return (
    <div className="loading-block" role="status" aria-label="Loading">
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="skeleton" style={{ width: `${90 - ((i * 17) % 40)}%` }} />
      ))}
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="state">
      <h2>{title}</h2>
      {children && <p>{children}</p>}
      {action}
    </div>
  );
}

export function ErrorState({
  error,
  title = 'This could not be loaded',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <div className="state state-error" role="alert">
      <h2>{title}</h2>
      <p>{describeError(error)}</p>
      {onRetry && <Button onClick={onRetry}>Try again</Button>}
    </div>
  );
}

/** Loading, error or the content: the three states every query shows. */
export function QueryState<T>({
  query,
  children,
  skeleton = 4,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown; data: T | undefined; refetch: () => unknown };
  children: (data: T) => ReactNode;
  skeleton?: number;
}) {
  if (query.isPending) return <Skeleton lines={skeleton} />;
  if (query.isError) return <ErrorState error={query.error} onRetry={() => void query.refetch()} />;
  return <>{children(query.data as T)}</>;
}
