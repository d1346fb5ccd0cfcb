export type Tone = 'neutral' | 'success' | 'warning' | 'danger' | 'info';

const TONES: Record<string, Tone> = {
  PUBLISHED: 'success',
  VERIFIED: 'success',
  SENT: 'success',
  SUCCEEDED: 'success',
  ACTIVE: 'success',
  ok: 'success',
  active: 'success',
  DRAFT: 'neutral',
  ARCHIVED: 'neutral',
  CANCELED: 'neutral',
  revoked: 'neutral',
  disabled: 'neutral',
  PENDING: 'warning',
  SCHEDULED: 'info',
  SENDING: 'info',
  PAUSED: 'warning',
  warning: 'warning',
  MISSING: 'warning',
  MISMATCH: 'danger',
  FAILED: 'danger',
  TIMEOUT: 'danger',
  ERROR: 'danger',
  critical: 'danger',
  expired: 'neutral',
};

function words(status: string): string {
  const s = status.replace(/_/g, ' ').toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function StatusBadge({ status, tone, label }: { status: string; tone?: Tone; label?: string }) {
  const t = tone ?? TONES[status] ?? 'neutral';
  return <span className={`badge badge-${t}`}>{label ?? words(status)}</span>;
}
