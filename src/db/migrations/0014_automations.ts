import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Automations (docs/automations.md, contract §15): the automation and its immutable versions, one run per contact
 * in it (a durable cursor with a lease), the steps each run went through (the exactly-once guard and the stats),
 * the members of segments that `segment.entered` triggers watch; `events.routed` (0 until the automation intake has
 * looked at an event); the automation's messages as broadcasts of kind automation; deliveries that belong to a run.
 */
export function automations(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('automations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('DRAFT', 'ACTIVE', 'PAUSED')`))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('automations_workspace').on('automations').columns(['workspace_id', 'id']).execute();
      await db.schema.createIndex('automations_active').on('automations').columns(['status', 'workspace_id']).execute();

      // A version is immutable once the automation left DRAFT: runs read the version they started on.
      await db.schema
        .createTable('automation_versions')
        .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('trigger', json, (c) => c.notNull())
        .addColumn('steps', json, (c) => c.notNull())
        // { stepId: broadcastId } of the version's send steps, written when the version becomes runnable.
        .addColumn('messages', json)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('automation_versions_pk', ['automation_id', 'version'])
        .execute();

      await db.schema
        .createTable('automation_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        // No foreign key: a run outlives its contact (it exits when the contact is deleted).
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('ACTIVE', 'WAITING', 'COMPLETED', 'EXITED')`),
        )
        // The step the run is at (null once it is over), and when it started that step (a wait's start).
        .addColumn('step_id', 'text')
        .addColumn('step_started_at', ts)
        .addColumn('due_at', ts)
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', ts)
        // Walks of the run that failed in a row (an error, not a lost lease): it exits after MAX_RUN_FAILURES.
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('trigger_event_id', 'text')
        .addColumn('entered_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('finished_at', ts)
        .addColumn('exit_reason', 'text')
        .addCheckConstraint('automation_runs_finished', sql`(finished_at is null) = (status in ('ACTIVE', 'WAITING'))`)
        .execute();
      // At most one run at a time per automation and contact (the database enforces it).
      await db.schema
        .createIndex('automation_runs_one_open')
        .on('automation_runs')
        .columns(['automation_id', 'contact_id'])
        .unique()
        .where(sql.ref('finished_at'), 'is', null)
        .execute();
      // The claim: open runs by due time.
      await db.schema
        .createIndex('automation_runs_due')
        .on('automation_runs')
        .columns(['due_at'])
        .where(sql.ref('finished_at'), 'is', null)
        .execute();
      await db.schema
        .createIndex('automation_runs_list')
        .on('automation_runs')
        .columns(['workspace_id', 'automation_id', 'id'])
        .execute();
      await db.schema
        .createIndex('automation_runs_contact')
        .on('automation_runs')
        .columns(['workspace_id', 'contact_id'])
        .where(sql.ref('finished_at'), 'is', null)
        .execute();

      // One row per step a run went through: its primary key makes each step happen once per run.
      await db.schema
        .createTable('automation_run_steps')
        .addColumn('run_id', 'text', (c) => c.notNull().references('automation_runs.id').onDelete('cascade'))
        .addColumn('step_id', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('automation_id', 'text', (c) => c.notNull())
        .addColumn('entered_at', ts, (c) => c.notNull())
        .addColumn('completed_at', ts)
        .addColumn('arm', 'text')
        .addColumn('delivery_id', 'text')
        .addPrimaryKeyConstraint('automation_run_steps_pk', ['run_id', 'step_id'])
        .execute();
      await db.schema
        .createIndex('automation_run_steps_stats')
        .on('automation_run_steps')
        .columns(['automation_id', 'step_id'])
        .execute();

      await db.schema
        .createTable('automation_segment_members')
        .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id').onDelete('cascade'))
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('automation_segment_members_pk', ['automation_id', 'contact_id'])
        .execute();

      // Events the automations react to start at 0; the intake sets 1 once it has looked (others are written as 1).
      await db.schema
        .alterTable('events')
        .addColumn('routed', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .createIndex('events_unrouted')
        .on('events')
        .column('id')
        .where(sql.ref('routed'), '=', 0)
        .execute();

      await db.schema.alterTable('broadcasts').addColumn('automation_id', 'text').execute();
      await db.schema.alterTable('broadcasts').addColumn('automation_step_id', 'text').execute();
      await db.schema
        .createIndex('broadcasts_automation')
        .on('broadcasts')
        .columns(['automation_id', 'automation_step_id'])
        .where(sql.ref('automation_id'), 'is not', null)
        .execute();

      // A run's message: a contact may go through an automation again, so the one-per-recipient rule is for broadcasts.
      await db.schema.alterTable('deliveries').addColumn('automation_run_id', 'text').execute();
      await db.schema.dropIndex('deliveries_one_per_recipient').execute();
      await db.schema
        .createIndex('deliveries_one_per_recipient')
        .on('deliveries')
        .columns(['broadcast_id', 'contact_id'])
        .unique()
        .where(sql.ref('automation_run_id'), 'is', null)
        .execute();
      await db.schema
        .createIndex('deliveries_one_per_run_step')
        .on('deliveries')
        .columns(['automation_run_id', 'broadcast_id'])
        .unique()
        .where(sql.ref('automation_run_id'), 'is not', null)
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('deliveries_one_per_run_step').execute();
      await db.schema.dropIndex('deliveries_one_per_recipient').execute();
      await db.schema
        .createIndex('deliveries_one_per_recipient')
        .on('deliveries')
        .columns(['broadcast_id', 'contact_id'])
        .unique()
        .execute();
      await db.schema.alterTable('deliveries').dropColumn('automation_run_id').execute();
      await db.schema.dropIndex('broadcasts_automation').execute();
      await db.schema.alterTable('broadcasts').dropColumn('automation_step_id').execute();
      await db.schema.alterTable('broadcasts').dropColumn('automation_id').execute();
      await db.schema.dropIndex('events_unrouted').execute();
      await db.schema.alterTable('events').dropColumn('routed').execute();
      for (const t of [
        'automation_segment_members',
        'automation_run_steps',
        'automation_runs',
        'automation_versions',
        'automations',
      ])
        await db.schema.dropTable(t).execute();
    },
  };
}
