import type { Command } from 'commander';
import { queueStatus } from '../../sending/deliveries/queue.repository.js';
import { nowIso } from '../../lib/time.js';
import { jsonOption, requireWorkspace, withDb } from '../context.js';
import { color, count, duration, print, status, table, time } from '../output.js';

const ORDER = ['QUEUED', 'SENDING', 'PAUSED', 'SENT', 'FAILED', 'BOUNCED', 'CANCELED', 'SKIPPED'] as const;

/** queue status: the delivery queue, of the installation or of one workspace. */
export function registerQueue(program: Command): void {
  const queue = program.command('queue').description('the delivery queue');

  queue
    .command('status')
    .description(
      'deliveries by status, the oldest one due, and the leases each worker holds (all workspaces, or --workspace)',
    )
    .option('--workspace <id>', "only this workspace's deliveries")
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast queue status')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const now = nowIso();
      const q = await withDb(async (ctx) => {
        if (opts.workspace) await requireWorkspace(ctx, opts.workspace);
        return queueStatus(ctx.db.kysely, opts.workspace ?? null, now);
      });
      const lag = q.oldestDue ? (Date.parse(now) - Date.parse(q.oldestDue.dueAt)) / 1000 : 0;
      const human = [
        color.bold('Deliveries by status'),
        table(
          ['STATUS', 'COUNT'],
          ORDER.map((s) => [status(s), count(q.byStatus[s] ?? 0)]),
        ),
        '',
        `${color.bold('Due now:')} ${count(q.due)}`,
        `${color.bold('Oldest due:')} ${q.oldestDue ? `${q.oldestDue.id} (broadcast ${q.oldestDue.broadcastId}) due ${time(q.oldestDue.dueAt)}${lag > 0 ? `, ${duration(lag)} ago` : `, in ${duration(-lag)}`}` : 'nothing queued'}`,
        '',
        color.bold('Worker leases'),
        q.leases.length
          ? table(
              ['WORKER', 'DELIVERIES', 'EXPIRED', 'FIRST EXPIRY', 'LAST EXPIRY'],
              q.leases.map((l) => [
                l.owner,
                count(l.deliveries),
                l.expired ? color.red(count(l.expired)) : '0',
                time(l.firstExpiry),
                time(l.lastExpiry),
              ]),
            )
          : 'no worker holds a lease',
      ].join('\n');
      print({ ...q, workspaceId: opts.workspace ?? null, checkedAt: now }, opts.json, human);
    });
}
