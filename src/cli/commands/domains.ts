import { CLI_ACTOR } from '../../outbox/index.js';
import type { Command } from 'commander';
import { findDomainByName } from '../../mail-setup/domains/domains.repository.js';
import { normalizeDomainName, type Domain } from '../../mail-setup/domains/domains.service.js';
import { allPages, jsonOption, requireWorkspace, withDb, workspaceOption, type Context } from '../context.js';
import { CliError, color, EXIT, print, status, table, time } from '../output.js';

/** The records to publish, as a table (with each one's result after a check). */
function recordsTable(d: Domain): string {
  const checks = d.verification?.records ?? [];
  const result = (type: string, name: string) => checks.find((c) => c.type === type && c.name === name)?.status;
  const withStatus = checks.length > 0;
  return table(
    ['TYPE', 'NAME', 'VALUE', ...(withStatus ? ['STATUS'] : [])],
    d.records.map((r) => [
      r.type,
      r.name,
      r.priority !== undefined ? `${r.priority} ${r.value}` : r.value,
      ...(withStatus ? [status(result(r.type, r.name) ?? 'advisory')] : []),
    ]),
  );
}

/** A domain of the workspace by id (dom_…) or by name. */
async function domainId(ctx: Context, workspaceId: string, idOrName: string): Promise<string> {
  if (idOrName.startsWith('dom_')) return idOrName;
  const name = normalizeDomainName(idOrName);
  const found = name ? await findDomainByName(ctx.db.kysely, workspaceId, name) : undefined;
  if (!found) throw new CliError(`no domain ${idOrName} in workspace ${workspaceId}`, EXIT.NOT_FOUND);
  return found.id;
}

/** domain add | list | verify. */
export function registerDomains(program: Command): void {
  const domain = program
    .command('domain')
    .description('manage sending domains (DKIM keys and the DNS records to publish)');

  domain
    .command('add')
    .description(
      'add a sending domain and print the DNS records to publish; --verified marks it (or the one already there) verified without a DNS check',
    )
    .argument('<name>', 'domain name, e.g. example.com')
    .addOption(workspaceOption())
    .option(
      '--verified',
      'mark verified without a DNS check (for an operator who controls the domain); a domain already there is marked verified',
    )
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  formcast domain add example.com --workspace ws_01JD…\n  then publish the records and run: formcast domain verify example.com --workspace ws_01JD…',
    )
    .action(async (name: string, opts: { workspace: string; verified?: boolean; json?: boolean }) => {
      const { created, before } = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        // With --verified, a domain the workspace already has (PENDING, FAILED) is marked VERIFIED instead of refused.
        const normal = normalizeDomainName(name);
        const found =
          opts.verified && normal ? await findDomainByName(ctx.db.kysely, opts.workspace, normal) : undefined;
        return {
          before: found?.status,
          created: await ctx.services.domains.add(opts.workspace, name, { verified: opts.verified }, CLI_ACTOR),
        };
      });
      const what =
        before === undefined
          ? ''
          : before === 'VERIFIED'
            ? ' (it was verified already)'
            : ` (it was ${before}: marked verified, keys and records kept)`;
      // The --json output is the domain as the API creates it (contract §10).
      print(
        created,
        opts.json,
        `domain ${created.id} ${created.name} ${status(created.status)}${what}\n\nPublish these DNS records:\n${recordsTable(created)}`,
      );
    });

  domain
    .command('list')
    .description('list the sending domains of a workspace')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast domain list --workspace ws_01JD…')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const domains = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return allPages((before) => ctx.services.domains.list(opts.workspace, { limit: 100, beforeId: before }));
      });
      print(
        domains,
        opts.json,
        domains.length
          ? table(
              ['ID', 'NAME', 'STATUS', 'VERIFIED', 'LAST CHECK'],
              domains.map((d) => [d.id, d.name, status(d.status), time(d.verifiedAt), time(d.verification?.checkedAt)]),
            )
          : 'no domains (add one: formcast domain add <name> --workspace <id>)',
      );
    });

  domain
    .command('verify')
    .description(
      "look the domain's records up in DNS (DNS_SERVERS), store the result and print the records to publish; exit 6 unless VERIFIED",
    )
    .argument('<domain>', 'domain id (dom_…) or name')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast domain verify example.com --workspace ws_01JD…')
    .action(async (idOrName: string, opts: { workspace: string; json?: boolean }) => {
      const verified = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return ctx.services.domains.verify(opts.workspace, await domainId(ctx, opts.workspace, idOrName), CLI_ACTOR);
      });
      const advice = verified.verification?.advice ?? [];
      print(
        verified,
        opts.json,
        [
          `domain ${verified.id} ${verified.name} ${status(verified.status)}`,
          '',
          recordsTable(verified),
          ...(advice.length ? ['', color.bold('Advice:'), ...advice.map((a) => `- ${a}`)] : []),
        ].join('\n'),
      );
      if (verified.status !== 'VERIFIED') process.exitCode = EXIT.CHECK_FAILED;
    });
}
