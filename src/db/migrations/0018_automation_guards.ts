import { sql, type Kysely } from 'kysely';

/**
 * The automations' loop guards (docs/automations.md, "Loops and limits"; issue 29 item 3):
 * - `automation_runs.cause_chain`: the automations whose runs led to this one, oldest first (JSON array of ids; null
 *   for a run started by anything else than another run's step): the cycle detector reads it;
 * - the re-entry cooldown looks up a contact's last finished run of an automation (automation_runs_reentry);
 * - the per-contact daily cap counts a contact's automated messages of the last 24 hours, one index range
 *   (deliveries_automation_contact, partial: only deliveries of runs, a small part of the table).
 */
export function automationGuards() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('automation_runs').addColumn('cause_chain', 'text').execute();
      await db.schema
        .createIndex('automation_runs_reentry')
        .on('automation_runs')
        .columns(['automation_id', 'contact_id', 'finished_at'])
        .execute();
      await db.schema
        .createIndex('deliveries_automation_contact')
        .on('deliveries')
        .columns(['contact_id', 'created_at'])
        .where(sql.ref('automation_run_id'), 'is not', null)
        .execute();
    },
  };
}
