/**
 * Webhooks are at least once across a crash (contract §13): `formcast serve` is started on a SQLite file with events
 * pending and the receiver down (connections refused), killed with SIGKILL while it retries, more events are written
 * while it is dead, and it is started again with the receiver up: every event arrives, each signed, and every
 * delivery ends SUCCEEDED. The events are written by this process into the server's database file, as the features
 * write them (in a transaction, through recordEvents); the endpoint is created through the service with the
 * server's secret (SECRET_KEY), so the server can open it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { loadServerSecret } from '../../src/db/secrets.js';
import { recordEvents } from '../../src/outbox/events/events.repository.js';
import { createServices } from '../../src/app.js';
import { TEST_PROCESS_DEFAULTS } from '../helpers/formcast-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SECRET_KEY = 'reliability-webhooks-secret-key-0123456789';

interface Server {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exited: Promise<void>;
}

const servers = new Set<Server>();

function startServer(env: Record<string, string>): Promise<Server> {
  const base = { ...process.env };
  for (const name of Object.keys(base))
    if (/^(PORT|HOST|DATABASE_URL|SMTP_URL|PUBLIC_URL|LOG_LEVEL|SECRET_KEY|WORKER_|WEBHOOKS_)/.test(name))
      delete base[name];
  const child = spawn(process.execPath, ['bin/formcast', 'serve'], {
    cwd: ROOT,
    env: { ...base, ...TEST_PROCESS_DEFAULTS, ...env },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: Server = { child, output: () => out, exited };
  servers.add(server);
  void exited.then(() => servers.delete(server));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 60 s:\n${out}`)), 60_000);
    const check = () => {
      if (/"msg":"listening on /.test(out)) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve(server);
      }
    };
    child.stdout.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited before starting:\n${out}`));
    });
  });
}

async function kill(s: Server, signal: NodeJS.Signals): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) {
    s.child.kill(signal);
    await s.exited;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

describe('webhooks: no event lost when the server is killed (SIGKILL) while they are pending', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-webhooks-rel-'));
  const dbFile = path.join(dir, 'formcast.db');
  let db: Db;

  beforeAll(async () => {
    db = connect(dbFile);
    await migrateToLatest(db);
  });

  afterAll(async () => {
    await Promise.all([...servers].map((s) => kill(s, 'SIGKILL')));
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every event arrives after the restart, signed, and every delivery ends SUCCEEDED', async () => {
    // The receiver holds its port from the start and cuts every connection until the restart below: a port taken and
    // let go could be handed to another test's server meanwhile.
    const arrived = new Map<number, number>();
    const bodies: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        bodies.push({ headers: req.headers, body });
        const n = (JSON.parse(body) as { data: { data: { n: number } } }).data.data.n;
        arrived.set(n, (arrived.get(n) ?? 0) + 1);
        res.writeHead(200).end();
      });
    });
    onTestFinished(() => {
      if (receiver.listening) receiver.close();
    });
    let up = false;
    receiver.on('connection', (socket) => {
      if (!up) socket.destroy();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;

    const secret = await loadServerSecret(db, { secretKey: SECRET_KEY, secretKeyFile: null });
    const services = createServices(db, {
      logLevel: 'silent',
      publicUrl: 'http://localhost:3000',
      secret,
      webhooks: { allowHttp: true, allowPrivate: true },
    });
    const { workspace } = await services.workspaces.createWithAdminKey('reliability webhooks');
    const webhook = await services.webhooks.create(workspace.id, {
      url: `http://127.0.0.1:${port}/hook`,
      eventTypes: ['contact.created'],
    });
    // This process writes into the server's file as a second writer: on a loaded machine the server's own write
    // transactions can hold the lock past the 5 s busy timeout, so a write that finds the file locked is tried again.
    const write = async (from: number, n: number) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await db.kysely.transaction().execute((trx) =>
            recordEvents(
              trx,
              workspace.id,
              Array.from({ length: n }, (_, i) => ({ type: 'contact.created' as const, data: { n: from + i } })),
              new Date().toISOString(),
            ),
          );
          return;
        } catch (err) {
          if (attempt >= 5 || !/database is locked/.test(String(err))) throw err;
        }
      }
    };
    await write(0, 50);

    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: dbFile,
      LOG_LEVEL: 'warn',
      SECRET_KEY,
      WORKER_POLL_MS: '100',
      // A delivery the killed server had claimed is taken over when its claim's lease runs out: 5 s rather than 60.
      WORKER_LEASE_MS: '5000',
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      OUTBOX_DIR: path.join(dir, 'outbox'),
    };
    const first = await startServer(env);
    // The first attempts fail (connection refused): those wait for their retry, 5 s later, and the rest of the batch is
    // given back untried (an endpoint that does not answer costs a batch one attempt per lane), due 5 s later too.
    await waitFor('failed first attempts', 20_000, async () => {
      const n = (
        await db.kysely
          .selectFrom('webhook_attempts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
      return Number(n) >= 1 ? true : undefined;
    });
    await write(50, 50); // more events while the server runs: some may be fanned out, some not
    await kill(first, 'SIGKILL');
    await write(100, 50); // and while it is dead
    const before = await db.kysely.selectFrom('webhook_deliveries').select(['status']).execute();
    expect(before.every((d) => d.status !== 'SUCCEEDED')).toBe(true);

    up = true;
    try {
      const second = await startServer(env);
      // A delivery the killed server had claimed (SENDING) waits for its lease (5 s here) to run out.
      await waitFor('all 150 events at the receiver', 90_000, () => {
        if (second.child.exitCode !== null) throw new Error(`the server exited:\n${second.output()}`);
        return arrived.size === 150 ? true : undefined;
      });
      await waitFor('every delivery SUCCEEDED', 10_000, async () => {
        const rows = await db.kysely
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('endpoint_id', '=', webhook.id)
          .execute();
        return rows.length === 150 && rows.every((r) => r.status === 'SUCCEEDED') ? true : undefined;
      });
      await kill(second, 'SIGTERM');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
    expect([...arrived.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    // Nothing was delivered twice here (no delivery was in flight when the server died), and each request verifies.
    expect([...arrived.values()].every((n) => n === 1)).toBe(true);
    const wh = new Webhook(webhook.secret);
    for (const b of bodies) expect(() => wh.verify(b.body, b.headers as Record<string, string>)).not.toThrow();
    const undispatched = await db.kysely.selectFrom('events').select('id').where('dispatched', '=', 0).execute();
    expect(undispatched).toEqual([]);
  }, 150_000);
});
