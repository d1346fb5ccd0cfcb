import { CLI_ACTOR } from '../../outbox/index.js';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { BROADCAST_STATUSES, type Broadcast } from '../../sending/broadcasts/broadcasts.schemas.js';
import { allPages, jsonOption, requireWorkspace, withDb, workspaceOption } from '../context.js';
import { color, count, EXIT, print, progressBar, status, table, time } from '../output.js';

const FINAL = new Set(['SENT', 'FAILED', 'CANCELED']);

function stats(b: Broadcast) {
  return b.stats ?? { recipients: 0, queued: 0, sent: 0, failed: 0, bounced: 0, unsubscribed: 0 };
}

/** Messages that reached an end: sent, failed or bounced. */
const done = (b: Broadcast) => stats(b).sent + stats(b).failed + stats(b).bounced;

function details(b: Broadcast): string {
  const s = b.stats;
  const rows: [string, string][] = [
    ['id', b.id],
    ['name', b.name],
    ['status', status(b.status) + (b.pausedReason ? ` (${b.pausedReason})` : '')],
    ['from', b.from ?? '-'],
    ['subject', b.emailContent.subject ?? '-'],
    ['segment', b.segmentId ?? 'all contacts'],
    ['topic', b.topicId ?? '-'],
    ['send at', time(b.sendAt)],
    ['sent at', time(b.sentAt)],
  ];
  if (s) {
    rows.push(
      ['recipients', count(s.recipients)],
      ['queued', count(s.queued)],
      ['sent', count(s.sent)],
      ['failed', count(s.failed)],
      ['bounced', count(s.bounced)],
      ['unsubscribed', count(s.unsubscribed)],
    );
    if (s.outbox) rows.push(['outbox', `${count(s.outbox)} written as .eml files, not sent (no SMTP_URL)`]);
  }
  return rows.map(([k, v]) => `${color.bold(k.padEnd(12))} ${v}`).join('\n');
}

function progressLine(b: Broadcast): string {
  const s = stats(b);
  return `${b.status} ${count(done(b))}/${count(s.recipients)} sent ${count(s.sent)} failed ${count(s.failed)} bounced ${count(s.bounced)}`;
}

function parseInterval(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100 || n > 60_000)
    throw new InvalidArgumentError('must be a whole number of milliseconds from 100 to 60000');
  return n;
}

/** broadcast list | send | status [--watch]. Sending itself is the server's worker's: these commands start and watch it. */
export function registerBroadcasts(program: Command): void {
  const broadcast = program
    .command('broadcast')
    .description("list, send and watch broadcasts (the server's worker sends them)");

  broadcast
    .command('list')
    .description('list the broadcasts of a workspace, newest first')
    .addOption(workspaceOption())
    .addOption(new Option('--status <status>', 'only broadcasts in this status').choices(BROADCAST_STATUSES))
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast broadcast list --workspace ws_01JD… --status SENDING')
    .action(async (opts: { workspace: string; status?: Broadcast['status']; json?: boolean }) => {
      const list = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return allPages((before) =>
          ctx.services.broadcasts.list(opts.workspace, { status: opts.status, limit: 100, beforeId: before }),
        );
      });
      print(
        list,
        opts.json,
        list.length
          ? table(
              ['ID', 'NAME', 'STATUS', 'RECIPIENTS', 'SENT', 'FAILED', 'BOUNCED', 'CREATED'],
              list.map((b) => [
                b.id,
                b.name,
                status(b.status),
                b.stats ? count(b.stats.recipients) : '-',
                b.stats ? count(b.stats.sent) : '-',
                b.stats ? count(b.stats.failed) : '-',
                b.stats ? count(b.stats.bounced) : '-',
                time(b.createdAt),
              ]),
            )
          : 'no broadcasts',
      );
    });

  broadcast
    .command('send')
    .description("send a DRAFT or SCHEDULED broadcast now (the running server's worker sends the messages)")
    .argument('<id>', 'broadcast id (bc_…)')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  formcast broadcast send bc_01JD… --workspace ws_01JD… && formcast broadcast status bc_01JD… --workspace ws_01JD… --watch',
    )
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      const sent = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return ctx.services.broadcasts.send(opts.workspace, id, CLI_ACTOR);
      });
      print(
        sent,
        opts.json,
        `broadcast ${sent.id} is ${status(sent.status)}: the server's worker sends it (follow it: formcast broadcast status ${sent.id} --workspace ${opts.workspace} --watch)`,
      );
    });

  broadcast
    .command('status')
    .description(
      "a broadcast's status and counts; --watch follows it with a live progress bar until it is SENT (or FAILED, CANCELED)",
    )
    .argument('<id>', 'broadcast id (bc_…)')
    .addOption(workspaceOption())
    .option('--watch', 'follow the sending until the broadcast is SENT, FAILED or CANCELED; exit 6 unless SENT')
    .option('--interval <ms>', 'with --watch: how often to look, in milliseconds', parseInterval, 1000)
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nWith --watch and --json: one JSON line ({ id, status, stats }) each time something changes.\nWithout a terminal, --watch prints a line each time something changes.\n\nExample:\n  formcast broadcast status bc_01JD… --workspace ws_01JD… --watch',
    )
    .action(async (id: string, opts: { workspace: string; watch?: boolean; interval: number; json?: boolean }) => {
      const final = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        let b = await ctx.services.broadcasts.get(opts.workspace, id);
        if (!opts.watch) return b;
        if (b.status === 'DRAFT') return b;
        const bar = opts.json
          ? null
          : progressBar(
              '{state} [{bar}] {value}/{total} | sent {sent} | failed {failed} | bounced {bounced} | ETA {eta_formatted}',
              Math.max(1, stats(b).recipients),
              {},
            );
        let last = '';
        for (;;) {
          const s = stats(b);
          const line = progressLine(b);
          if (bar) {
            bar.setTotal(Math.max(1, s.recipients, done(b)));
            bar.update(done(b), {
              state: b.status,
              sent: count(s.sent),
              failed: count(s.failed),
              bounced: count(s.bounced),
            });
          } else if (line !== last) {
            process.stdout.write(
              opts.json ? `${JSON.stringify({ id: b.id, status: b.status, stats: b.stats ?? null })}\n` : `${line}\n`,
            );
          }
          last = line;
          if (FINAL.has(b.status)) break;
          await new Promise((r) => setTimeout(r, opts.interval));
          b = await ctx.services.broadcasts.get(opts.workspace, id);
        }
        bar?.stop();
        return b;
      });
      if (!opts.watch) print(final, opts.json, details(final));
      else if (!opts.json) {
        if (final.status === 'DRAFT')
          process.stdout.write(
            `broadcast ${final.id} is DRAFT: nothing is being sent (send it: formcast broadcast send ${final.id} --workspace ${opts.workspace})\n`,
          );
        else process.stdout.write(`${details(final)}\n`);
      }
      if (opts.watch && final.status !== 'SENT') process.exitCode = EXIT.CHECK_FAILED;
    });
}
