import type { Executor } from '../../db/connection.js';
import type { AuditLogTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { nowIso, toIso } from '../../lib/time.js';
import type {
  AuditAction,
  AuditActor,
  AuditActorType,
  AuditChanges,
  AuditEntry,
  AuditTargetType,
  NewAuditEntry,
} from './audit.types.js';

/**
 * The audit log's table (docs/audit-log.md). `recordAudit` writes one entry in the transaction of the change it
 * records, so an entry exists exactly when its change does; the list reads it, retention prunes it.
 */
export async function recordAudit(
  db: Executor,
  workspaceId: string,
  actor: AuditActor,
  entry: NewAuditEntry,
  now: string = nowIso(),
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: newId('aud'),
      workspace_id: workspaceId,
      occurred_at: now,
      actor_type: actor.type,
      actor_id: actor.id,
      actor_label: actor.label?.slice(0, 320) ?? null,
      action: entry.action,
      target_type: entry.target.type,
      target_id: entry.target.id,
      target_label: entry.target.label?.slice(0, 320) ?? null,
      changes: toJsonColumn(entry.changes ?? null),
      ip: actor.ip ?? null,
      user_agent: actor.userAgent ?? null,
    })
    .execute();
}

export interface AuditFilter {
  /** An action (`api_key.created`), or every action on a kind of thing (`api_key`). */
  action?: string;
  /** The actor's id (a user's usr_…, a key's key_…), or its type (`cli`, `system`). */
  actor?: string;
  targetType?: AuditTargetType;
  targetId?: string;
  /** Entries that occurred at or after this time. */
  from?: string;
  /** Entries that occurred before this time. */
  to?: string;
  limit: number;
  beforeId?: string;
}

function toEntry(r: AuditLogTable): AuditEntry {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    occurredAt: toIso(r.occurred_at),
    actor: { type: r.actor_type as AuditActorType, id: r.actor_id, label: r.actor_label },
    action: r.action as AuditAction,
    target: { type: r.target_type as AuditTargetType, id: r.target_id, label: r.target_label },
    changes: fromJsonColumn<AuditChanges>(r.changes),
    ip: r.ip,
    userAgent: r.user_agent,
  };
}

/** A workspace's entries, newest first. */
export async function listAudit(db: Executor, workspaceId: string, f: AuditFilter): Promise<AuditEntry[]> {
  let q = db.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId);
  if (f.action)
    q = f.action.includes('.') ? q.where('action', '=', f.action) : q.where('action', 'like', `${f.action}.%`);
  if (f.actor) {
    const actor = f.actor;
    q = actor === 'cli' || actor === 'system' ? q.where('actor_type', '=', actor) : q.where('actor_id', '=', actor);
  }
  if (f.targetType) q = q.where('target_type', '=', f.targetType);
  if (f.targetId) q = q.where('target_id', '=', f.targetId);
  if (f.from) q = q.where('occurred_at', '>=', f.from);
  if (f.to) q = q.where('occurred_at', '<', f.to);
  if (f.beforeId) q = q.where('id', '<', f.beforeId);
  return (await q.orderBy('id', 'desc').limit(f.limit).execute()).map(toEntry);
}

/** Deletes up to `limit` entries older than `before`, of any workspace, oldest first; returns how many. */
export async function pruneAudit(db: Executor, before: string, limit: number): Promise<number> {
  const ids = (
    await db
      .selectFrom('audit_log')
      .select('id')
      .where('occurred_at', '<', before)
      .orderBy('occurred_at')
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  const res = await db.deleteFrom('audit_log').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}
