/**
 * The operator CLI (docs/api.md §10), run for real: `node bin/formcast …` as child processes, each
 * describe on a SQLite file of its own in a temp dir (PostgreSQL too when TEST_DATABASE_URL is set).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.TEST_DATABASE_URL;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The environment a CLI child sees: ours minus Formcast's own variables, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ['PORT', 'HOST', 'DATABASE_URL', 'SMTP_URL', 'PUBLIC_URL', 'DNS_SERVERS', 'LOG_LEVEL']) delete base[name];
  return { ...base, ...env };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['bin/formcast', ...args], { cwd: ROOT, env: childEnv(env) });
}

function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = start(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Exit 0, nothing on stderr, stdout parsed as JSON. */
function json(run: Run): any {
  expect(run.stderr, 'stderr').toBe('');
  expect(run.code, `exit code (stderr: ${run.stderr})`).toBe(0);
  return JSON.parse(run.stdout);
}

/** A failed command: non-zero exit, nothing on stdout, exactly one line on stderr. Returns that line. */
function failure(run: Run): string {
  expect(run.code, `exit code (stdout: ${run.stdout})`).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout, 'stdout').toBe('');
  expect(run.stderr.endsWith('\n'), 'stderr ends with a newline').toBe(true);
  const lines = run.stderr.slice(0, -1).split('\n');
  expect(lines, 'stderr lines').toHaveLength(1);
  expect(lines[0]).toMatch(/^formcast: \S/);
  return lines[0]!;
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-cli-'));
}

/** A SQLite DATABASE_URL in a fresh temp dir, removed after the describe. */
function sqliteEnv(): Record<string, string> {
  const dir = tempDir();
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { DATABASE_URL: path.join(dir, 'formcast.db') };
}

// ---------------------------------------------------------------------------------------------------
// `formcast serve` helpers

interface Server {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when serve has logged that it is shutting down (it has handled the signal). */
  shuttingDown: Promise<void>;
}

async function serve(env: Record<string, string>): Promise<Server> {
  const child = start(['serve'], { ...env, PORT: '0', HOST: '127.0.0.1' });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('no "listening on" line within 60 s')), 60_000);
    function fail(err: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }
    child.stdout.on('data', (d: string) => {
      stdout += d;
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then(({ code, signal }) => fail(new Error(`serve exited early (code ${code}, signal ${signal})`)));
  });
  const shuttingDown = new Promise<void>((resolve) => {
    const check = () => {
      if (/"msg":"shutting down"/.test(stdout)) resolve();
    };
    child.stdout.on('data', check);
    check();
  });
  afterAll(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, url, port: Number(new URL(url).port), stdout: () => stdout, stderr: () => stderr, exited, shuttingDown };
}

/** Resolves to the exit, or rejects when the process is still running after `ms`. */
function exitWithin(server: Server, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return Promise.race([
    server.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`serve still running ${ms} ms after the signal`)), ms)),
  ]);
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` until it holds; rejects with `message` after `ms`. */
async function until(check: () => Promise<boolean>, ms: number, message: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Exercises a running server with an admin key of workspace `ws`. */
async function checkServing(server: Server, ws: { id: string; name: string }, key: string): Promise<void> {
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  const ready = await fetch(`${server.url}/readyz`);
  expect(ready.status).toBe(200);
  // The body says what to fix before real mail goes out: the transport's state and the configuration's warnings.
  const readiness = (await ready.json()) as { status: string; warnings: string[]; transport?: { mode: string } };
  expect(readiness.status).toBe('ready');
  expect(readiness.warnings.some((w) => w.startsWith('SMTP_URL is not set'))).toBe(true);

  const res = await fetch(`${server.url}/v1/workspace`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['createdAt', 'id', 'name', 'settings']);
  expect(body).toMatchObject({ id: ws.id, name: ws.name });
  expect(body.createdAt).toMatch(TIMESTAMP);

  const anonymous = await fetch(`${server.url}/v1/workspace`);
  expect(anonymous.status).toBe(401);
}

// ---------------------------------------------------------------------------------------------------

// Everything below runs concurrently (each describe has its own database): process spawns dominate the
// runtime and mostly wait on I/O and module loading.
// Each `formcast` process compiles the TypeScript as it starts (~1 CPU-second); several run at once, so a
// loaded machine needs far more than the default test timeout.
describe.concurrent('formcast CLI', { timeout: 120_000 }, () => {
  describe('formcast --help and usage errors', () => {
    const env = sqliteEnv();

    it.each([
      [[], ['serve', 'migrate', 'workspace', 'key', 'domain']],
      [['serve'], ['serve the HTTP API']],
      [['migrate'], ['apply pending database migrations']],
      [['workspace', 'create'], ['<name>', '--json']],
      [['key', 'create'], ['--workspace <id>', '--scopes', '--json']],
      [['domain', 'add'], ['<name>', '--workspace <id>', '--verified', '--json']],
    ])('formcast %j --help', async (command, mentions) => {
      const run = await cli([...command, '--help'], env);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: formcast${command.length ? ` ${command.join(' ')}` : ''} `));
      for (const text of mentions) expect(run.stdout).toContain(text);
    });

    it.each([
      ['an unknown command', ['bogus'], /unknown command 'bogus'/],
      ['a missing argument', ['workspace', 'create'], /missing required argument 'name'/],
      ['an unknown option', ['migrate', '--bogus'], /unknown option '--bogus'/],
    ])('%s exits non-zero with a one-line error', async (_what, args, message) => {
      expect(failure(await cli(args, env))).toMatch(message);
    });

    it('did not touch the database for help or usage errors', () => {
      expect(fs.existsSync(env.DATABASE_URL!)).toBe(false);
    });
  });

  describe('formcast migrate (SQLite)', () => {
    const env = sqliteEnv();

    it('applies the migrations, then reports the database is up to date', async () => {
      const first = await cli(['migrate'], env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^applied: 0001_foundation/);
      expect(fs.existsSync(env.DATABASE_URL!)).toBe(true);

      const second = await cli(['migrate'], env);
      expect(second.stderr).toBe('');
      expect(second.code).toBe(0);
      expect(second.stdout).toBe('database is up to date\n');
    });
  });

  describe('formcast workspace / key / domain (SQLite)', () => {
    const env = sqliteEnv();
    let created: any;

    beforeAll(async () => {
      created = json(await cli(['workspace', 'create', 'Acme Newsletters', '--json'], env));
    });

    it('workspace create --json prints exactly { workspace: { id, name }, apiKey: { id, key, scopes } }', () => {
      expect(Object.keys(created).sort()).toEqual(['apiKey', 'workspace']);
      expect(Object.keys(created.workspace).sort()).toEqual(['id', 'name']);
      expect(Object.keys(created.apiKey).sort()).toEqual(['id', 'key', 'scopes']);
      expect(created.workspace.id).toMatch(/^ws_[0-9A-Z]{26}$/);
      expect(created.workspace.name).toBe('Acme Newsletters');
      expect(created.apiKey.id).toMatch(/^key_[0-9A-Z]{26}$/);
      expect(typeof created.apiKey.key).toBe('string');
      expect(created.apiKey.key.length).toBeGreaterThanOrEqual(32);
      expect(created.apiKey.scopes).toEqual(['admin']);
    });

    it('workspace create with a blank name fails with one line', async () => {
      expect(failure(await cli(['workspace', 'create', '   ', '--json'], env))).toMatch(/name/);
    });

    describe('key create', () => {
      it('--json prints exactly { id, key, scopes }', async () => {
        const key = json(await cli(['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms,write:forms', '--json'], env));
        expect(Object.keys(key).sort()).toEqual(['id', 'key', 'scopes']);
        expect(key.id).toMatch(/^key_[0-9A-Z]{26}$/);
        expect(typeof key.key).toBe('string');
        expect(key.key).not.toBe(created.apiKey.key);
        expect(key.scopes).toEqual(['read:forms', 'write:forms']);
      });

      it('an unknown scope fails with one line naming it', async () => {
        const line = failure(await cli(['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms,launch:missiles', '--json'], env));
        expect(line).toContain('launch:missiles');
      });

      it('a missing --workspace fails with one line', async () => {
        expect(failure(await cli(['key', 'create', '--scopes', 'read:forms', '--json'], env))).toContain('--workspace');
      });

      it('an unknown workspace id fails with one line', async () => {
        expect(failure(await cli(['key', 'create', '--workspace', 'ws_NOPE', '--scopes', 'read:forms', '--json'], env))).toContain('ws_NOPE');
      });
    });

    describe('domain add', () => {
      let domain: any;

      beforeAll(async () => {
        domain = json(await cli(['domain', 'add', 'Example.com', '--workspace', created.workspace.id, '--json'], env));
      });

      it('--json prints the domain with its DNS records, PENDING', () => {
        expect(Object.keys(domain).sort()).toEqual(['createdAt', 'id', 'name', 'records', 'status', 'verification', 'verifiedAt']); // as the API's create
        expect(domain.id).toMatch(/^dom_/);
        expect(domain.name).toBe('example.com');
        expect(domain.status).toBe('PENDING');
        expect(domain.createdAt).toMatch(TIMESTAMP);
        expect(domain.verifiedAt).toBeNull();

        expect(Array.isArray(domain.records)).toBe(true);
        for (const record of domain.records.slice(0, 2)) {
          expect(Object.keys(record).sort()).toEqual(['name', 'type', 'value']);
          expect(record.type).toBe('TXT');
        }
        expect(domain.records[2]).toMatchObject({ type: 'MX', name: 'bounces.example.com', priority: 10 });
        const ownership = domain.records.find((r: any) => r.name.startsWith('_formcast.'));
        expect(ownership).toBeDefined();
        expect(ownership.name.endsWith('example.com')).toBe(true);
        expect(ownership.value.length).toBeGreaterThan(16);

        const dkim = domain.records.find((r: any) => /^[A-Za-z0-9-]+\._domainkey\.example\.com$/.test(r.name));
        expect(dkim, 'a <selector>._domainkey.example.com record').toBeDefined();
        expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
        const publicKey = crypto.createPublicKey({ key: Buffer.from(dkim.value.split('p=')[1], 'base64'), format: 'der', type: 'spki' });
        expect(publicKey.asymmetricKeyType).toBe('rsa');
        expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      });

      it('never prints the private key', async () => {
        expect(JSON.stringify(domain)).not.toMatch(/PRIVATE KEY|privateKey/i);
        const human = await cli(['domain', 'add', 'human.example.com', '--workspace', created.workspace.id], env);
        expect(human.code).toBe(0);
        expect(human.stdout).toContain('._domainkey.human.example.com');
        expect(human.stdout + human.stderr).not.toContain('PRIVATE KEY');
      });

      it('--verified gives status VERIFIED', async () => {
        const verified = json(await cli(['domain', 'add', 'mail.example.org', '--workspace', created.workspace.id, '--verified', '--json'], env));
        expect(verified.name).toBe('mail.example.org');
        expect(verified.status).toBe('VERIFIED');
        expect(verified.verifiedAt).toMatch(TIMESTAMP);
        expect(JSON.stringify(verified)).not.toContain('PRIVATE KEY');
      });

      it('an invalid name fails with one line', async () => {
        expect(failure(await cli(['domain', 'add', 'not a domain', '--workspace', created.workspace.id, '--json'], env))).toMatch(/domain/);
      });

      it('adding the same domain twice fails with one line', async () => {
        expect(failure(await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--json'], env))).toContain('example.com');
      });
    });
  });

  describe('formcast serve (SQLite)', () => {
    const env = sqliteEnv();
    let created: any;

    beforeAll(async () => {
      created = json(await cli(['workspace', 'create', 'Served', '--json'], env));
    });

    it('listens, answers /healthz, /readyz and /v1/workspace, and exits 0 on SIGTERM, closing the port', async () => {
      const server = await serve(env);
      await checkServing(server, created.workspace, created.apiKey.key);

      // An in-flight request when the signal arrives: headers and half the body sent, then SIGTERM. The
      // server must stop accepting, finish this request, and only then exit.
      const body = JSON.stringify({ name: 'in flight', scopes: ['read:forms'] });
      const socket = net.connect({ port: server.port, host: '127.0.0.1' });
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let response = '';
      socket.setEncoding('utf8').on('data', (d: string) => (response += d));
      const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      // This request's own log line (an earlier request's line may still be on its way through the async logger).
      const requestsLogged = () => server.stdout().match(/"method":"POST","url":"\/v1\/api-keys"[^\n]*"msg":"incoming request"/g)?.length ?? 0;
      const before = requestsLogged();
      socket.write(
        `POST /v1/api-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${created.apiKey.key}\r\n`
        + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
      );
      // The signal must find the request in progress (an idle connection would simply be closed).
      await until(async () => requestsLogged() > before, 10_000, 'serve never logged the in-flight request');

      server.child.kill('SIGTERM');
      await server.shuttingDown;
      await until(async () => !(await accepts(server.port)), 5_000, 'serve still accepts connections after SIGTERM');
      await new Promise((r) => setTimeout(r, 100));
      expect(server.child.exitCode, 'serve waits for the in-flight request').toBeNull();

      socket.write(body.slice(10));
      const exit = await exitWithin(server, 5_000);
      await socketClosed;
      expect(response).toMatch(/^HTTP\/1\.1 201 /);
      const answer = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
      expect(answer).toMatchObject({ name: 'in flight', scopes: ['read:forms'] });

      expect(exit, `stderr: ${server.stderr()}`).toEqual({ code: 0, signal: null });
      expect(await accepts(server.port)).toBe(false);
      expect(server.stdout()).not.toContain(created.apiKey.key);
    });

    it('exits 0 on SIGINT too', async () => {
      const server = await serve(env);
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      server.child.kill('SIGINT');
      expect(await exitWithin(server, 5_000)).toEqual({ code: 0, signal: null });
      expect(await accepts(server.port)).toBe(false);
    });

    it('a bad environment makes serve fail at once with one line', async () => {
      expect(failure(await cli(['serve'], { ...env, SMTP_URL: 'http://mail' }))).toContain('SMTP_URL');
    });
  });

  describe('PostgreSQL (TEST_DATABASE_URL)', () => {
    const database = `formcast_cli_${crypto.randomBytes(5).toString('hex')}`;
    let env: Record<string, string> = {};
    let createdDatabase = false;

    beforeAll(async () => {
      if (!PG_URL) return;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`create database ${database}`);
        createdDatabase = true;
      } finally {
        await admin.end();
      }
      const url = new URL(PG_URL);
      url.pathname = `/${database}`;
      env = { DATABASE_URL: url.toString() };
    });

    afterAll(async () => {
      if (!PG_URL || !createdDatabase) return;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`drop database if exists ${database} with (force)`);
      } finally {
        await admin.end();
      }
    });

    it.skipIf(!PG_URL)('migrate, workspace create, key create, domain add and serve work against PostgreSQL', { timeout: 120_000 }, async () => {
      const first = await cli(['migrate'], env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^applied: 0001_foundation/);
      const second = await cli(['migrate'], env);
      expect(second.code).toBe(0);
      expect(second.stdout).toBe('database is up to date\n');

      const created = json(await cli(['workspace', 'create', 'On Postgres', '--json'], env));
      expect(Object.keys(created).sort()).toEqual(['apiKey', 'workspace']);
      expect(created.workspace).toEqual({ id: expect.stringMatching(/^ws_/), name: 'On Postgres' });
      expect(created.apiKey).toEqual({ id: expect.stringMatching(/^key_/), key: expect.any(String), scopes: ['admin'] });

      const key = json(await cli(['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms', '--json'], env));
      expect(key).toEqual({ id: expect.stringMatching(/^key_/), key: expect.any(String), scopes: ['read:forms'] });
      failure(await cli(['key', 'create', '--workspace', 'ws_NOPE', '--scopes', 'read:forms'], env));

      const domain = json(await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--verified', '--json'], env));
      expect(domain).toMatchObject({ name: 'example.com', status: 'VERIFIED' });
      expect(failure(await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--json'], env))).toContain('example.com');

      // The rows really are in the new database (not in some default one).
      const check = new pg.Client({ connectionString: env.DATABASE_URL });
      await check.connect();
      try {
        const { rows } = await check.query('select name from workspaces');
        expect(rows).toEqual([{ name: 'On Postgres' }]);
      } finally {
        await check.end();
      }

      const server = await serve(env);
      await checkServing(server, created.workspace, created.apiKey.key);
      server.child.kill('SIGTERM');
      expect(await exitWithin(server, 5_000)).toEqual({ code: 0, signal: null });
      expect(await accepts(server.port)).toBe(false);
    });
  });
});
