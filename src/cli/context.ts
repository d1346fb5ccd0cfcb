import { Option } from 'commander';
import { createServices, type Services } from '../app.js';
import { loadConfig, type Config } from '../config.js';
import { connect, type Db } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { withSecret } from './secret.js';
import { getWorkspace, type Workspace } from '../access/workspaces/workspaces.repository.js';
import { describeDatabase } from './database.js';
import { CliError, EXIT } from './output.js';

/** What a command that touches the database gets: the database, the configuration and the services over them. */
export interface Context {
  db: Db;
  config: Config & { secret: Buffer };
  services: Services;
  /** The database, as said to the operator (describeDatabase). */
  database: string;
  /** The migrations this command applied before `fn` ran (usually none: the server applies them at start). */
  applied: string[];
}

let used: string | null = null;

/** The database the command used, if it opened one (main.ts says it after a human-readable result). */
export function usedDatabase(): string | null {
  return used;
}

/**
 * Opens DATABASE_URL and applies pending migrations, and nothing else: no key is read or made (`formcast migrate`, run
 * as a release step or from another machine, must not adopt or create the installation's key where it runs).
 */
export async function migrateOnly(): Promise<{ applied: string[]; database: string }> {
  const config = loadConfig();
  const db = connect(config.databaseUrl);
  used = describeDatabase(config.databaseUrl);
  try {
    return { applied: await migrateToLatest(db), database: used };
  } finally {
    await db.close();
  }
}

/**
 * Opens DATABASE_URL, applies pending migrations, runs `fn` with the services, closes. The services are those of
 * the server (createServices): the CLI goes through the same rules as the API.
 */
export async function withDb<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = connect(config.databaseUrl);
  used = describeDatabase(config.databaseUrl);
  try {
    const applied = await migrateToLatest(db);
    const withKey = await withSecret(db, config);
    return await fn({ db, config: withKey, services: createServices(db, withKey), database: used, applied });
  } finally {
    await db.close();
  }
}

/** `--workspace <id>`, required, or FORMCAST_WORKSPACE from the environment. */
export function workspaceOption(): Option {
  return new Option('--workspace <id>', 'workspace id (default: $FORMCAST_WORKSPACE)')
    .env('FORMCAST_WORKSPACE')
    .makeOptionMandatory();
}

export function jsonOption(): Option {
  return new Option('--json', 'print JSON (for scripts) instead of text');
}

/** The workspace, or a not-found error that names the database looked in (the wrong database is the usual cause). */
export async function requireWorkspace(ctx: Context, id: string): Promise<Workspace> {
  const ws = await getWorkspace(ctx.db.kysely, id);
  if (!ws) throw new CliError(`no workspace with id ${id} in ${ctx.database}`, EXIT.NOT_FOUND);
  return ws;
}

/** Every page of a keyset-paginated list (newest first), as one array. */
export async function allPages<T extends { id: string }>(
  page: (beforeId: string | undefined) => Promise<T[]>,
): Promise<T[]> {
  const all: T[] = [];
  for (let rows = await page(undefined); rows.length; rows = await page(rows[rows.length - 1]!.id)) all.push(...rows);
  return all;
}
