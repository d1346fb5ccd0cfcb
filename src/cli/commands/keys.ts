import { CLI_ACTOR } from '../../outbox/index.js';
import { type Command, InvalidArgumentError } from 'commander';
import { isScope, SCOPES } from '../../http/scopes.js';
import { allPages, jsonOption, requireWorkspace, withDb, workspaceOption } from '../context.js';
import { print, status, table, time } from '../output.js';

function parseScopes(value: string): string[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (!scopes.length) throw new InvalidArgumentError('give at least one scope');
  if (unknown.length)
    throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(', ')} (scopes: ${SCOPES.join(', ')})`);
  return scopes;
}

const SCOPES_HELP = `\nScopes: ${SCOPES.join(', ')}.\n\`write:X\` also grants \`read:X\`; \`admin\` grants everything, key management included.`;

/** key list | create | revoke. Keys are stored hashed: a key is shown once, when it is created, never again. */
export function registerKeys(program: Command): void {
  const key = program.command('key').description('manage API keys (stored hashed: a key is shown only when created)');

  key
    .command('list')
    .description('list the API keys of a workspace (never the keys themselves)')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast key list --workspace ws_01JD…')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const keys = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return allPages((before) => ctx.services.apiKeys.list(opts.workspace, 100, before));
      });
      const rows = keys.map((k) => ({
        id: k.id,
        name: k.name,
        scopes: k.scopes,
        createdAt: k.createdAt,
        lastUsedAt: k.lastUsedAt,
        revokedAt: k.revokedAt,
      }));
      print(
        rows,
        opts.json,
        rows.length
          ? table(
              ['ID', 'NAME', 'SCOPES', 'CREATED', 'LAST USED', 'STATUS'],
              rows.map((k) => [
                k.id,
                k.name,
                k.scopes.join(','),
                time(k.createdAt),
                time(k.lastUsedAt),
                status(k.revokedAt ? 'revoked' : 'active'),
              ]),
            )
          : 'no API keys',
      );
    });

  key
    .command('create')
    .description('create an API key for a workspace; the key is printed once')
    .addOption(workspaceOption())
    .requiredOption('--scopes <s1,s2>', 'comma-separated scopes (listed below)', parseScopes)
    .option('--name <name>', 'a name for the key', 'cli')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `${SCOPES_HELP}\n\nExample:\n  formcast key create --workspace ws_01JD… --scopes read:forms,write:contacts --json\n  prints { "id", "key", "scopes" }`,
    )
    .action(async (opts: { workspace: string; scopes: string[]; name: string; json?: boolean }) => {
      const created = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return ctx.services.apiKeys.create(
          opts.workspace,
          { name: opts.name, scopes: opts.scopes },
          undefined,
          CLI_ACTOR,
        );
      });
      // The --json shape is fixed by the contract (§10): exactly these keys.
      print(
        { id: created.id, key: created.key, scopes: created.scopes },
        opts.json,
        `API key ${created.id}: ${created.key}\n(the key is shown only once)`,
      );
    });

  key
    .command('revoke')
    .description('revoke an API key at once (not the last key with admin: create another first)')
    .argument('<id>', 'key id (key_…)')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast key revoke key_01JD… --workspace ws_01JD…')
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        await ctx.services.apiKeys.revoke(opts.workspace, id, CLI_ACTOR);
      });
      print({ id, revoked: true }, opts.json, `API key ${id} revoked`);
    });
}
