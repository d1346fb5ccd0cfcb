import { Command, InvalidArgumentError } from 'commander';
import { isScope } from '../http/scopes.js';
import { loadConfig } from '../config.js';
import { connect, type Db } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { createServices } from '../app.js';
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

/** All of standard input, for secrets that must not appear in the process list or the shell history. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('--password-stdin reads the password from standard input: pipe it in (e.g. printf %s "$PASSWORD" | formcast user create …)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const ROLE_NAMES = ['owner', 'admin', 'editor', 'viewer'];

const user = program.command('user').description('manage the people who sign in to the console (/app)');
user.command('create')
  .description('create a console user with a password (the first owner of a workspace, typically)')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--email <email>', 'the address they sign in with')
  .requiredOption('--role <role>', 'owner, admin, editor or viewer', (value: string) => {
    if (!ROLE_NAMES.includes(value)) throw new InvalidArgumentError('must be one of owner, admin, editor, viewer');
    return value;
  })
  .option('--name <name>', 'their name')
  .option('--password-stdin', 'read the password from standard input (one line; a trailing newline is dropped)')
  .option('--json', 'print JSON')
  .action(async (opts: { workspace: string; email: string; role: string; name?: string; passwordStdin?: boolean; json?: boolean }) => {
    if (!opts.passwordStdin) throw new CliError('give the password on standard input with --password-stdin (never as an argument)');
    const password = (await readStdin()).replace(/\r?\n$/, '');
    const created = await withDb(async (db) => {
      await requireWorkspace(db, opts.workspace);
      return createServices(db, await withSecret(db, loadConfig())).users.create(opts.workspace, { email: opts.email, role: opts.role, password, name: opts.name ?? null });
    });
    print({ id: created.id, email: created.email, role: created.role, workspaceId: created.workspaceId }, opts.json, `user ${created.id} ${created.email} (${created.role}) in workspace ${created.workspaceId}`);
  });

user.command('list')
  .description('list the console users of a workspace')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--json', 'print JSON')
  .action(async (opts: { workspace: string; json?: boolean }) => {
    const users = await withDb(async (db) => {
      await requireWorkspace(db, opts.workspace);
      const service = createServices(db, await withSecret(db, loadConfig())).users;
      const all = [];
      for (let page = await service.list(opts.workspace, 100); page.length; page = await service.list(opts.workspace, 100, page[page.length - 1]!.id)) all.push(...page);
      return all;
    });
    print(users, opts.json, users.length ? users.map((u) => `${u.id} ${u.email} ${u.role}${u.lastLoginAt ? ` (last sign-in ${u.lastLoginAt})` : ''}`).join('\n') : 'no users');
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
