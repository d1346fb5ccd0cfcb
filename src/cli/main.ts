import { Command, InvalidArgumentError } from 'commander';
import { isScope } from '../api-keys/scopes.js';
import { loadConfig } from '../config.js';
import { connect, type Db } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { createServices } from '../http/server.js';
import { getWorkspace } from '../workspaces/workspaces.repository.js';
import { runInbound, runWorker, serve } from './serve.js';
import { withSecret } from '../db/secrets.js';

/** Operator commands (docs/api.md §10). Each reads the same environment as the server. */
class CliError extends Error {}

/** Opens DATABASE_URL, applies pending migrations (unless `migrate: false`), runs `fn`, closes. */
async function withDb<T>(fn: (db: Db) => Promise<T>, { migrate = true }: { migrate?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  const db = connect(config.databaseUrl);
  try {
    if (migrate) await migrateToLatest(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

function print(value: unknown, json: boolean | undefined, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

function parseScopes(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (!scopes.length) throw new InvalidArgumentError('give at least one scope');
  if (unknown.length) throw new InvalidArgumentError(`unknown scope(s): ${unknown.join(', ')}`);
  return scopes;
}

async function requireWorkspace(db: Db, id: string): Promise<void> {
  if (!(await getWorkspace(db.kysely, id))) throw new CliError(`no workspace with id ${id}`);
}

const program = new Command('formcast')
  .description('Formcast: self-hostable email marketing (forms, contacts, broadcasts)')
  // Usage errors are one line on stderr: commander's message (and any "Did you mean" hint) plus a pointer
  // to --help. (showHelpAfterError would write the pointer as a second line, bypassing outputError.)
  .configureOutput({
    outputError: (str, write) => {
      const text = str.split('\n').map((l) => l.trim()).filter(Boolean).join(' ').replace(/^error: /, '');
      write(`formcast: ${text} (run with --help for usage)\n`);
    },
  });

program.command('serve')
  .description('serve the HTTP API (applies migrations first); what `npm start` runs')
  .action(async () => {
    await serve(loadConfig());
  });

program.command('worker')
  .description('run the delivery worker and scheduler only (more of them scale sending out over one PostgreSQL)')
  .action(async () => {
    await runWorker(loadConfig());
  });

program.command('inbound')
  .description('run the inbound SMTP listener alone (bounce and complaint reports, unsubscribe mail) on INBOUND_SMTP_PORT (25 when unset)')
  .action(async () => {
    await runInbound(loadConfig());
  });

program.command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    // Not withDb's own migration step: its result is what this command reports.
    const applied = await withDb(migrateToLatest, { migrate: false });
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  });

const workspace = program.command('workspace').description('manage workspaces');
workspace.command('create')
  .description('create a workspace and its first API key (with the admin scope)')
  .argument('<name>', 'workspace name')
  .option('--json', 'print JSON')
  .action(async (name: string, opts: { json?: boolean }) => {
    const { workspace: ws, apiKey } = await withDb(async (db) => createServices(db, await withSecret(db, loadConfig())).workspaces.createWithAdminKey(name));
    print(
      { workspace: { id: ws.id, name: ws.name }, apiKey: { id: apiKey.id, key: apiKey.key, scopes: apiKey.scopes } },
      opts.json,
      `workspace ${ws.id} (${ws.name})\nadmin API key ${apiKey.id}: ${apiKey.key}\n(the key is shown only once)`,
    );
  });

const key = program.command('key').description('manage API keys');
key.command('create')
  .description('create an API key for a workspace')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--scopes <s1,s2>', 'comma-separated scopes', parseScopes)
  .option('--name <name>', 'a name for the key', 'cli')
  .option('--json', 'print JSON')
  .action(async (opts: { workspace: string; scopes: string[]; name: string; json?: boolean }) => {
    const created = await withDb(async (db) => {
      await requireWorkspace(db, opts.workspace);
      return createServices(db, await withSecret(db, loadConfig())).apiKeys.create(opts.workspace, { name: opts.name, scopes: opts.scopes });
    });
    print({ id: created.id, key: created.key, scopes: created.scopes }, opts.json, `API key ${created.id}: ${created.key}\n(the key is shown only once)`);
  });

const domain = program.command('domain').description('manage sending domains');
domain.command('add')
  .description('add a sending domain; --verified marks it verified without a DNS check')
  .argument('<name>', 'domain name, e.g. example.com')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--verified', 'mark verified without a DNS check (for an operator who controls the domain)')
  .option('--json', 'print JSON')
  .action(async (name: string, opts: { workspace: string; verified?: boolean; json?: boolean }) => {
    const created = await withDb(async (db) => {
      await requireWorkspace(db, opts.workspace);
      return createServices(db, await withSecret(db, loadConfig())).domains.add(opts.workspace, name, { verified: opts.verified });
    });
    print(created, opts.json, `domain ${created.id} ${created.name} ${created.status}\n` + created.records.map((r) => `${r.type} ${r.name} "${r.value}"`).join('\n'));
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // DomainError, CliError and ConfigError messages are written for the operator; anything else is
  // unexpected (e.g. the database cannot be reached) and shown by its first line.
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`formcast: ${message.split('\n').find((l) => l.trim()) ?? 'failed'}\n`);
  process.exitCode = 1;
}
