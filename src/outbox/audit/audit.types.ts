/**
 * The audit log's words (docs/audit-log.md): who did it (the actor), what (a stable dotted action), to which thing
 * (the target), and which fields changed. The actions are a contract: clients filter by them, the console words them.
 */

/** Every action the log records; `user.password_changed` and `user.2fa_*` are written by the account pages. */
export const AUDIT_ACTIONS = [
  'workspace.updated',
  'api_key.created',
  'api_key.revoked',
  'user.created',
  'user.invited',
  'user.invitation_revoked',
  'user.joined',
  'user.updated',
  'user.role_changed',
  'user.removed',
  'user.password_changed',
  'user.2fa_enabled',
  'user.2fa_disabled',
  'domain.added',
  'domain.updated',
  'domain.verified',
  'domain.removed',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'broadcast.sent',
  'broadcast.scheduled',
  'broadcast.unscheduled',
  'broadcast.canceled',
  'broadcast.paused',
  'broadcast.resumed',
  'broadcast.ab_winner_picked',
  'broadcast.resent',
  'broadcast.archive_changed',
  'suppression.added',
  'suppression.removed',
  'template.deleted',
  'form.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGET_TYPES = [
  'workspace',
  'api_key',
  'user',
  'invitation',
  'domain',
  'webhook',
  'broadcast',
  'suppression',
  'template',
  'form',
] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

export const AUDIT_ACTOR_TYPES = ['user', 'apiKey', 'cli', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/**
 * Who made a change, and from where: a console session's person (their id and email), an API key (its id and name),
 * the `formcast` command line, or the service itself. Built from the request by `actorOf` (audit.actor.ts) and handed
 * down to the service that makes the change.
 */
export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  label: string | null;
  ip?: string | null;
  userAgent?: string | null;
}

/** A change by the `formcast` command line (a person at the server's shell). */
export const CLI_ACTOR: AuditActor = Object.freeze({ type: 'cli', id: null, label: 'formcast CLI' });
/** A change the service made of itself (a rule, not a person): the default where no actor was handed down. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ type: 'system', id: null, label: null });

/** One field's change: its values before and after, or for a secret only that it changed. */
export type AuditChange = { before: unknown; after: unknown } | { secret: true };
export type AuditChanges = Record<string, AuditChange>;

export interface NewAuditEntry {
  action: AuditAction;
  target: { type: AuditTargetType; id: string | null; label?: string | null };
  changes?: AuditChanges | null;
}

export interface AuditEntry {
  id: string;
  workspaceId: string;
  occurredAt: string;
  actor: { type: AuditActorType; id: string | null; label: string | null };
  action: AuditAction;
  target: { type: AuditTargetType; id: string | null; label: string | null };
  changes: AuditChanges | null;
  ip: string | null;
  userAgent: string | null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The fields of `fields` whose values differ between `before` and `after`, each as { before, after }; a field of
 * `secrets` that changed as { secret: true } (its values are never stored). Null when nothing changed.
 */
export function changesOf<T extends object>(
  before: T | null,
  after: T | null,
  fields: readonly (keyof T & string)[],
  secrets: readonly (keyof T & string)[] = [],
): AuditChanges | null {
  const out: AuditChanges = {};
  for (const field of fields) {
    const b = before ? (before as Record<string, unknown>)[field] : undefined;
    const a = after ? (after as Record<string, unknown>)[field] : undefined;
    if (same(b, a)) continue;
    out[field] = secrets.includes(field) ? { secret: true } : { before: b ?? null, after: a ?? null };
  }
  return Object.keys(out).length ? out : null;
}
