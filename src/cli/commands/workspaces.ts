import { CLI_ACTOR } from '../../outbox/index.js';
import type { Command } from 'commander';
import { listWorkspaces } from '../../access/workspaces/workspaces.repository.js';
import { allPages, jsonOption, requireWorkspace, withDb } from '../context.js';
import { print, table, time } from '../output.js';

/** workspace list | create | rename. */
export function registerWorkspaces(program: Command): void {
  const workspace = program.command('workspace').description('manage workspaces (the tenants of this installation)');

  workspace
    .command('list')
    .description('list every workspace, newest first')
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast workspace list')
    .action(async (opts: { json?: boolean }) => {
      const all = await withDb((ctx) => allPages((before) => listWorkspaces(ctx.db.kysely, 100, before)));
      const rows = all.map((w) => ({ id: w.id, name: w.name, createdAt: w.createdAt }));
      print(
        rows,
        opts.json,
        rows.length
          ? table(
              ['ID', 'NAME', 'CREATED'],
              rows.map((w) => [w.id, w.name, time(w.createdAt)]),
            )
          : 'no workspaces (create one: formcast workspace create <name>)',
      );
    });

  workspace
    .command('create')
    .description('create a workspace and its first API key (with the admin scope), shown once')
    .argument('<name>', 'workspace name')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  formcast workspace create "Acme Newsletters" --json\n  prints { "workspace": { "id", "name" }, "apiKey": { "id", "key", "scopes" } }',
    )
    .action(async (name: string, opts: { json?: boolean }) => {
      const { workspace: ws, apiKey } = await withDb((ctx) =>
        ctx.services.workspaces.createWithAdminKey(name, CLI_ACTOR),
      );
      // The --json shape is fixed by the contract (§10): exactly these keys.
      print(
        { workspace: { id: ws.id, name: ws.name }, apiKey: { id: apiKey.id, key: apiKey.key, scopes: apiKey.scopes } },
        opts.json,
        `workspace ${ws.id} (${ws.name})\nadmin API key ${apiKey.id}: ${apiKey.key}\n(the key is shown only once)`,
      );
    });

  workspace
    .command('rename')
    .description('rename a workspace')
    .argument('<id>', 'workspace id')
    .argument('<name>', 'the new name')
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast workspace rename ws_01JD… "Acme Weekly"')
    .action(async (id: string, name: string, opts: { json?: boolean }) => {
      const ws = await withDb(async (ctx) => {
        await requireWorkspace(ctx, id);
        return ctx.services.workspaces.update(id, { name }, CLI_ACTOR);
      });
      print(
        { id: ws.id, name: ws.name, createdAt: ws.createdAt },
        opts.json,
        `workspace ${ws.id} is now named ${ws.name}`,
      );
    });
}
