/**
 * SQLite's checkpoints in a thread of their own (db/checkpointer.ts, SQLITE_CHECKPOINTS=background): the thread copies
 * the log back into the file while the connection writes, the connection's own automatic checkpoint is a backstop
 * while it runs and SQLite's default again when it stops or fails, a process that writes little never starts it, and
 * a process killed with SIGKILL while both write and checkpoint leaves a whole database with every commit it reported.
 * SQLite only: PostgreSQL has no such thing to do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../src/db/connection.js';
import { startCheckpointer } from '../../src/db/checkpointer.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { waitFor } from '../helpers/workers.js';

const dirs: string[] = [];
const open: Db[] = [];
/** Children still running when a test ends (it failed or timed out): killed, never left writing. */
const children = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const db of open.splice(0)) await db.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-ckpt-'));
  dirs.push(dir);
  return path.join(dir, 'test.db');
}

async function writeRows(db: Db, batches: number, rows = 200): Promise<void> {
  await sql`create table if not exists rows (id integer primary key, data text not null)`.execute(db.kysely);
  for (let b = 0; b < batches; b++) {
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < rows; i++) await sql`insert into rows (data) values (${'y'.repeat(500)})`.execute(trx);
    });
  }
}

const autocheckpoint = (db: Db) =>
  sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`
    .execute(db.kysely)
    .then((r) => r.rows[0]!.wal_autocheckpoint);

describe('SQLite checkpoints in the background', () => {
  it('connect() starts a checkpointer only for a SQLite file asked for it', async () => {
    const inline = connect(tempFile());
    const memory = connect(':memory:', { checkpoints: 'background' });
    const background = connect(tempFile(), { checkpoints: 'background' });
    open.push(inline, memory, background);
    expect(inline.checkpointer).toBeNull();
    expect(memory.checkpointer).toBeNull();
    expect(background.checkpointer).not.toBeNull();
    // A process that has not written yet has no thread.
    expect(background.checkpointer!.running).toBe(false);
    expect(await autocheckpoint(background)).toBe(1000);
  });

  it("a first start's migrations leave an empty log: the thread does not start for them", async () => {
    const file = tempFile();
    const db = connect(file, { checkpoints: 'background' });
    open.push(db);
    expect((await migrateToLatest(db)).length).toBeGreaterThan(10);
    // Every migration, ~2.1 MB of log before they were checkpointed: past the 2 MiB at which the thread starts.
    expect(fs.statSync(`${file}-wal`).size).toBe(0);
    expect(db.checkpointer!.running).toBe(false);
    // Already migrated: nothing applied, nothing checkpointed.
    expect(await migrateToLatest(db)).toEqual([]);
  });

  it('the thread copies the log into the file while the connection writes; the connection keeps a backstop only', async () => {
    const file = tempFile();
    const db = connect(file, { checkpoints: 'background' });
    open.push(db);
    db.checkpointer!.start();
    expect(db.checkpointer!.running).toBe(true);
    expect(await autocheckpoint(db)).toBe(10_000);
    await writeRows(db, 20);
    await waitFor('a checkpoint by the thread', 10_000, () => db.checkpointer!.checkpoints > 0 || undefined);
    // Whole and complete, read by another connection; and copied into the file itself: ~2 MB of rows is far below the
    // connection's backstop (10,000 pages), so only the thread can have copied them.
    const pages = new SQLite(file, { readonly: true });
    try {
      expect((pages.pragma('integrity_check') as { integrity_check: string }[])[0]!.integrity_check).toBe('ok');
      expect((pages.prepare('select count(*) as n from rows').get() as { n: number }).n).toBe(4000);
    } finally {
      pages.close();
    }
    expect(fs.statSync(file).size).toBeGreaterThan(4000 * 500);
    await db.close();
    open.pop();
  });

  it("starts by itself once the log has grown, and stops with the connection, which gets SQLite's default back", async () => {
    const file = tempFile();
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    const checkpointer = startCheckpointer(sqlite, file, { startAtBytes: 64 * 1024, watchMs: 10 });
    try {
      sqlite.exec('create table t (x text)');
      expect(checkpointer.running).toBe(false);
      const insert = sqlite.prepare('insert into t values (?)');
      sqlite.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run('z'.repeat(500));
      })();
      await waitFor('the thread started', 5000, () => checkpointer.running || undefined);
      expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
    } finally {
      await checkpointer.close();
    }
    expect(checkpointer.running).toBe(false);
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    sqlite.close();
  });

  it('a thread that cannot run gives the checkpoints back to the connection, with a warning', async () => {
    const file = tempFile();
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    const warnings: string[] = [];
    const checkpointer = startCheckpointer(sqlite, file, {
      workerFile: path.join(path.dirname(file), 'missing.worker.mjs'),
      log: { warn: (_obj, msg) => void warnings.push(msg) },
    });
    try {
      checkpointer.start();
      await waitFor('the failure noticed', 5000, () => warnings.length > 0 || undefined);
      expect(checkpointer.running).toBe(false);
      expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      expect(warnings[0]).toMatch(/checkpoints run in the process's own thread again/);
      // Failed once: not started again.
      checkpointer.start();
      expect(checkpointer.running).toBe(false);
    } finally {
      await checkpointer.close();
      sqlite.close();
    }
  });

  /** Runs test/fixtures/checkpoint-exit.ts; resolves with its exit code and output, or null if it still runs after `ms`. */
  async function runExitFixture(
    mode: 'leave' | 'close',
    ms: number,
  ): Promise<{ code: number | null; out: string } | null> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, '../fixtures/checkpoint-exit.ts'), tempFile(), mode],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms));
    const code = await Promise.race([exited, late]);
    if (code === 'late') return null;
    children.delete(child);
    return { code, out };
  }

  it('a process whose thread runs still ends by itself when it has nothing left to do', async () => {
    const result = await runExitFixture('leave', 20_000);
    expect(result, 'the process did not end within 20 s').not.toBeNull();
    expect(result!.out).toContain('running true');
    expect(result!.code).toBe(0);
  }, 30_000);

  it('close() resolves (called twice, once), and what awaits it runs before the process ends', async () => {
    const result = await runExitFixture('close', 20_000);
    expect(result, 'the process did not end within 20 s').not.toBeNull();
    expect(result!.out).toContain('running true');
    expect(result!.out).toContain('closed');
    expect(result!.code).toBe(0);
  }, 30_000);

  it("with LEAN_HEAP=true, the thread's start leaves V8's heap lean (it sets the process-wide flags back to Node's)", async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, '../fixtures/checkpoint-lean.ts'), tempFile()],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LEAN_HEAP: 'true' } },
    );
    children.add(child);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    children.delete(child);
    expect(code, out).toBe(0);
    expect(out).toContain('running true');
    // Lean: 1 MB semi-spaces (2 MB), at most a step of growth in the moment before the flags are set again; V8's own
    // choice here is 32 MB.
    expect(Number(/new space MB ([\d.]+)/.exec(out)?.[1])).toBeLessThanOrEqual(8);
  }, 30_000);

  it('a process killed with SIGKILL while it writes and checkpoints leaves a whole database with every reported commit', async () => {
    const file = tempFile();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, '../fixtures/checkpoint-writer.ts'), file],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let committed = 0;
    let checkpoints = 0;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        const m = /^(committed|checkpoints) (\d+)$/.exec(line);
        if (m?.[1] === 'committed') committed = Number(m[2]);
        else if (m) checkpoints = Number(m[2]);
      }
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitFor(
        'commits and checkpoints by the child',
        40_000,
        () => (committed >= 150 && checkpoints >= 2) || undefined,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; its standard error: ${stderr.slice(-2000)}`, { cause: err });
    } finally {
      child.kill('SIGKILL');
      await exited;
      children.delete(child);
    }
    const reported = committed;
    const after = new SQLite(file);
    try {
      expect((after.pragma('integrity_check') as { integrity_check: string }[])[0]!.integrity_check).toBe('ok');
      const { batches, rows } = after
        .prepare('select count(distinct batch) as batches, count(*) as rows from rows')
        .get() as { batches: number; rows: number };
      // Every commit it reported is there, whole; at most the one it made before it could say so besides.
      expect(batches).toBeGreaterThanOrEqual(reported);
      expect(batches).toBeLessThanOrEqual(reported + 1);
      expect(rows).toBe(batches * 200);
    } finally {
      after.close();
    }
  }, 60_000);
});
