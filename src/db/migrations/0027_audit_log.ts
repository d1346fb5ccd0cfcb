import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * The audit log (issue 33 item 23, docs/audit-log.md): who (a person, an API key, the CLI or the service itself)
 * changed what in a workspace's configuration, one row per change, written in the transaction of the change by
 * `outbox/audit` (`recordAudit`). `changes` holds the changed fields' values before and after; a secret field is
 * named only (never its value). Pruned after AUDIT_RETENTION_DAYS (365).
 */
export function auditLog(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('occurred_at', ts, (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_label', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text')
        .addColumn('target_label', 'text')
        .addColumn('changes', json)
        .addColumn('ip', 'text')
        .addColumn('user_agent', 'text')
        .execute();
      // The list (newest first) and its filters, each within a workspace.
      await db.schema.createIndex('audit_log_workspace').on('audit_log').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('audit_log_action')
        .on('audit_log')
        .columns(['workspace_id', 'action', 'id'])
        .execute();
      await db.schema
        .createIndex('audit_log_actor')
        .on('audit_log')
        .columns(['workspace_id', 'actor_id', 'id'])
        .execute();
      // Retention: the oldest first, across workspaces.
      await db.schema.createIndex('audit_log_occurred').on('audit_log').column('occurred_at').execute();
    },
  };
}
