import type { MessageSource, MessageSources } from '../audience/index.js';
import type { Db } from '../db/connection.js';

/**
 * The audience's MessageSources port (suppressions.sources.ts): what sent the messages these broadcast ids name, read
 * from the broadcasts (sending) and the automations (integrations) a contact's activity and the suppression list sit
 * below. An automation's email is a broadcast row with `automation_id` and `automation_step_id` (docs/automations.md);
 * the automation's name is read now (null once it is deleted).
 */
export function messageSourcesOf(db: Db): MessageSources {
  return async (workspaceId, broadcastIds) => {
    const ids = [...new Set(broadcastIds)];
    const out = new Map<string, MessageSource>();
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await db.kysely
        .selectFrom('broadcasts')
        .leftJoin('automations', (join) =>
          join
            .onRef('automations.id', '=', 'broadcasts.automation_id')
            .onRef('automations.workspace_id', '=', 'broadcasts.workspace_id'),
        )
        .select([
          'broadcasts.id as id',
          'broadcasts.name as broadcastName',
          'broadcasts.automation_id as automationId',
          'broadcasts.automation_step_id as stepId',
          'automations.name as automationName',
        ])
        .where('broadcasts.workspace_id', '=', workspaceId)
        .where('broadcasts.id', 'in', ids.slice(i, i + 500))
        .execute();
      for (const r of rows)
        out.set(
          r.id,
          r.automationId
            ? {
                type: 'automation',
                broadcastId: r.id,
                automationId: r.automationId,
                stepId: r.stepId,
                name: r.automationName ?? null,
              }
            : { type: 'broadcast', broadcastId: r.id, automationId: null, stepId: null, name: r.broadcastName },
        );
    }
    return out;
  };
}
