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
import { startDnsServer } from './helpers/dns.js';
import { startSmtpServer } from './helpers/smtp.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.TEST_DATABASE_URL;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The environment a CLI child sees: ours minus Formcast's own variables, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of [
    'PORT',
    'HOST',
    'DATABASE_URL',
    'SMTP_URL',
    'PUBLIC_URL',
    'DNS_SERVERS',
    'LOG_LEVEL',
    'NO_COLOR',
    'FORMCAST_WORKSPACE',
    'OUTBOX_DIR',
  ])
    delete base[name];
  return { ...base, ...env };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>, cwd = ROOT): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [path.join(ROOT, 'bin/formcast'), ...args], { cwd, env: childEnv(env) });
}

/** `formcast <args>` to its end; `input` is written to its standard input, `cwd` is where it runs (the repository). */
function cli(args: string[], env: Record<string, string>, opts: { input?: string; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = start(args, env, opts.cwd);
    child.stdin.end(opts.input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * `formcast <args>` on a pseudo-terminal (util-linux `script`), as a person at a terminal runs it: `stdout` is what the
 * terminal showed (both streams, progress bars included), `code` the command's exit code.
 */
function pty(args: string[], env: Record<string, string>): Promise<Run> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, path.join(ROOT, 'bin/formcast'), ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end();
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout: stdout.replace(/\r\n/g, '\n'), stderr }));
  });
}

/** Text as a terminal shows it, without its escape sequences (colours, cursor moves). */
function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- the escape character is what is matched
  return text.replace(/\u001b(\[[0-9;?]*[A-Za-z]|[78])/g, '');
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
      // A JSON log line like the others, with the contract's text in msg (docs/api.md §10).
      const m = /"msg":"listening on (http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout);
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
  return {
    child,
    url,
    port: Number(new URL(url).port),
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    shuttingDown,
  };
}

/** Resolves to the exit, or rejects when the process is still running after `ms`. */
function exitWithin(server: Server, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return Promise.race([
    server.exited,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`serve still running ${ms} ms after the signal`)), ms),
    ),
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
  expect(Object.keys(body).sort()).toEqual(['createdAt', 'id', 'name', 'settings', 'slug']);
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
      [
        ['workspace', 'create'],
        ['<name>', '--json'],
      ],
      [
        ['key', 'create'],
        ['--workspace <id>', '--scopes', '--json'],
      ],
      [
        ['domain', 'add'],
        ['<name>', '--workspace <id>', '--verified', '--json'],
      ],
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

    it('applies the migrations, then reports the database is up to date, naming the database on stderr', async () => {
      const first = await cli(['migrate'], env);
      expect(first.stderr).toBe(`database: ${env.DATABASE_URL} (SQLite)\n`);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^applied: 0001_foundation/);
      expect(fs.existsSync(env.DATABASE_URL!)).toBe(true);

      const second = await cli(['migrate'], env);
      expect(second.stderr).toBe(`database: ${env.DATABASE_URL} (SQLite)\n`);
      expect(second.code).toBe(0);
      expect(second.stdout).toBe('database is up to date (no migration pending)\n');
      expect(json(await cli(['migrate', '--json'], env))).toEqual({
        applied: [],
        database: `${env.DATABASE_URL} (SQLite)`,
      });
    });
  });

  describe('formcast migrate and the installation key (SQLite)', () => {
    const env = sqliteEnv();

    it('reads no installation key and makes none (a release step run elsewhere must not adopt or create it)', async () => {
      const keyless = { ...env, SECRET_KEY: '', SECRET_KEY_FILE: '' };
      expect((await cli(['migrate'], keyless)).code).toBe(0);
      expect(fs.existsSync(path.join(path.dirname(env.DATABASE_URL!), 'secret.key'))).toBe(false);
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
        const key = json(
          await cli(
            ['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms,write:forms', '--json'],
            env,
          ),
        );
        expect(Object.keys(key).sort()).toEqual(['id', 'key', 'scopes']);
        expect(key.id).toMatch(/^key_[0-9A-Z]{26}$/);
        expect(typeof key.key).toBe('string');
        expect(key.key).not.toBe(created.apiKey.key);
        expect(key.scopes).toEqual(['read:forms', 'write:forms']);
      });

      it('an unknown scope fails with one line naming it', async () => {
        const line = failure(
          await cli(
            ['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms,launch:missiles', '--json'],
            env,
          ),
        );
        expect(line).toContain('launch:missiles');
      });

      it('a missing --workspace fails with one line', async () => {
        expect(failure(await cli(['key', 'create', '--scopes', 'read:forms', '--json'], env))).toContain('--workspace');
      });

      it('an unknown workspace id fails with one line', async () => {
        expect(
          failure(await cli(['key', 'create', '--workspace', 'ws_NOPE', '--scopes', 'read:forms', '--json'], env)),
        ).toContain('ws_NOPE');
      });
    });

    describe('domain add', () => {
      let domain: any;

      beforeAll(async () => {
        domain = json(await cli(['domain', 'add', 'Example.com', '--workspace', created.workspace.id, '--json'], env));
      });

      it('--json prints the domain with its DNS records, PENDING', () => {
        expect(Object.keys(domain).sort()).toEqual([
          'createdAt',
          'id',
          'name',
          'records',
          'status',
          'trackingHost',
          'verification',
          'verifiedAt',
        ]); // as the API's create
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
        const publicKey = crypto.createPublicKey({
          key: Buffer.from(dkim.value.split('p=')[1], 'base64'),
          format: 'der',
          type: 'spki',
        });
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
        const verified = json(
          await cli(
            ['domain', 'add', 'mail.example.org', '--workspace', created.workspace.id, '--verified', '--json'],
            env,
          ),
        );
        expect(verified.name).toBe('mail.example.org');
        expect(verified.status).toBe('VERIFIED');
        expect(verified.verifiedAt).toMatch(TIMESTAMP);
        expect(JSON.stringify(verified)).not.toContain('PRIVATE KEY');
      });

      it('an invalid name fails with one line', async () => {
        expect(
          failure(await cli(['domain', 'add', 'not a domain', '--workspace', created.workspace.id, '--json'], env)),
        ).toMatch(/domain/);
      });

      it('adding the same domain twice fails with one line', async () => {
        expect(
          failure(await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--json'], env)),
        ).toContain('example.com');
      });

      it('--verified on a domain already there (FAILED) marks that one verified, same id and keys', async () => {
        const ws = created.workspace.id;
        const name = 'failed.example.net';
        const added = json(await cli(['domain', 'add', name, '--workspace', ws, '--json'], env));
        // A DNS check that finds nothing (no resolver answers): FAILED, exit 6.
        const check = await cli(['domain', 'verify', name, '--workspace', ws, '--json'], {
          ...env,
          DNS_SERVERS: '127.0.0.1:9',
          DNS_TIMEOUT_MS: '200',
        });
        expect(check.code).toBe(6);
        expect(JSON.parse(check.stdout).status).toBe('FAILED');
        const marked = json(await cli(['domain', 'add', name, '--workspace', ws, '--verified', '--json'], env));
        expect(marked).toMatchObject({ id: added.id, name, status: 'VERIFIED', records: added.records });
        expect(marked.verifiedAt).toMatch(TIMESTAMP);
        const listed = json(await cli(['domain', 'list', '--workspace', ws, '--json'], env)).filter(
          (d: any) => d.name === name,
        );
        expect(listed).toEqual([expect.objectContaining({ id: added.id, status: 'VERIFIED' })]);
        // The human text says what happened; again on a VERIFIED one, nothing changes.
        const again = await cli(['domain', 'add', name, '--workspace', ws, '--verified'], env);
        expect(again.code).toBe(0);
        expect(again.stdout).toContain(`domain ${added.id} ${name} VERIFIED (it was verified already)`);
        // Without --verified it is still refused.
        expect(failure(await cli(['domain', 'add', name, '--workspace', ws, '--json'], env))).toContain(name);
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
      const requestsLogged = () =>
        server.stdout().match(/"method":"POST","url":"\/v1\/api-keys"[^\n]*"msg":"incoming request"/g)?.length ?? 0;
      const before = requestsLogged();
      socket.write(
        `POST /v1/api-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${created.apiKey.key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
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
      // Standard output is JSON log lines only: `listening on …` is one of them (its msg), not a plain line among them.
      const lines = server.stdout().split('\n').filter(Boolean);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(
        lines.map((l) => JSON.parse(l)).find((l) => l.msg === server.url.replace(/^/, 'listening on ')),
      ).toMatchObject({ level: 30, url: server.url });
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

  // -------------------------------------------------------------------------------------------------
  // The operator commands (docs/cli.md): each describe on a database of its own, its tests in order.

  describe.sequential('formcast --version, exit codes and the environment', () => {
    const env = sqliteEnv();

    it('--version prints the package version', async () => {
      const run = await cli(['--version'], env);
      const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
      expect(run).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    });

    it('usage errors exit 2, with one line', async () => {
      for (const args of [
        ['bogus'],
        ['key', 'create', '--scopes', 'nope', '--workspace', 'ws_X'],
        ['broadcast', 'status'],
      ]) {
        const run = await cli(args, env);
        failure(run);
        expect(run.code, args.join(' ')).toBe(2);
      }
    });

    it('DATABASE_URL with an unknown scheme is refused (exit 3), and creates no file', async () => {
      const dir = tempDir();
      try {
        for (const args of [['migrate'], ['workspace', 'list'], ['serve']]) {
          const run = await cli(args, { DATABASE_URL: 'mysql://x' }, { cwd: dir });
          expect(failure(run)).toContain('DATABASE_URL: unsupported scheme "mysql:"');
          expect(run.code).toBe(3);
        }
        expect(fs.readdirSync(dir)).toEqual([]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it("without DATABASE_URL, a command run from another folder uses the project's data/formcast.db, not ./data there", async () => {
      const dir = tempDir();
      try {
        // doctor opens nothing it does not find and changes nothing: it says which database it looked at.
        const run = await cli(
          ['doctor', '--json'],
          { DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200' },
          { cwd: dir },
        );
        const report = JSON.parse(run.stdout);
        const database = report.checks.find((c: any) => c.check === 'database');
        expect(database.detail).toContain(`${path.join(ROOT, 'data', 'formcast.db')} (SQLite)`);
        expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('formcast worker on SQLite is refused with the reason (exit 3)', async () => {
      const run = await cli(['worker'], env);
      expect(failure(run)).toMatch(/PostgreSQL.*SERVE_WORKER=false/);
      expect(run.code).toBe(3);
    });

    it.each([
      [['worker'], ['SERVE_WORKER=false']],
      [
        ['key', 'create'],
        ['Scopes: read:forms, write:forms', 'admin'],
      ],
      [
        ['key', 'revoke'],
        ['<id>', '--workspace <id>'],
      ],
      [
        ['contacts', 'import'],
        ['<file>', '--format', 'Example:'],
      ],
      [
        ['contacts', 'export'],
        ['--segment <id>', '--out <file>'],
      ],
      [
        ['broadcast', 'status'],
        ['--watch', '--interval'],
      ],
      [['doctor'], ['PUBLIC_URL', 'exit 6']],
      [['send-test'], ['--to <address>', '--from']],
      [['queue', 'status'], ['--workspace']],
      [[], ['Exit codes:', 'doctor', 'send-test', 'queue', 'contacts', 'broadcast', 'user']],
    ])('formcast %j --help', async (command, mentions) => {
      const run = await cli([...command, '--help'], env);
      expect(run.code).toBe(0);
      for (const text of mentions) expect(run.stdout).toContain(text);
    });
  });

  describe.sequential('formcast workspace / key / user (SQLite)', () => {
    const env = sqliteEnv();
    let created: any;

    beforeAll(async () => {
      created = json(await cli(['workspace', 'create', 'Acme', '--json'], env));
    });

    it('workspace list and rename, as text and JSON; an unknown id exits 4', async () => {
      const list = json(await cli(['workspace', 'list', '--json'], env));
      expect(list).toEqual([{ id: created.workspace.id, name: 'Acme', createdAt: expect.stringMatching(TIMESTAMP) }]);
      const renamed = json(await cli(['workspace', 'rename', created.workspace.id, 'Acme Weekly', '--json'], env));
      expect(renamed).toMatchObject({ id: created.workspace.id, name: 'Acme Weekly' });
      const human = await cli(['workspace', 'list'], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(
        new RegExp(`^ID\\s+NAME\\s+CREATED\\n${created.workspace.id}\\s+Acme Weekly\\s+\\d{4}-`),
      );
      // Not a terminal: no colours. The database is named on stderr.
      expect(human.stdout).not.toContain('\u001b[');
      expect(human.stderr).toBe(`database: ${env.DATABASE_URL} (SQLite)\n`);
      const missing = await cli(['workspace', 'rename', 'ws_NOPE', 'x'], env);
      expect(failure(missing)).toContain(`no workspace with id ws_NOPE in ${env.DATABASE_URL} (SQLite)`);
      expect(missing.code).toBe(4);
    });

    it('key list never shows a key; revoke; the last admin key is refused (exit 5)', async () => {
      const ws = created.workspace.id;
      const reader = json(
        await cli(['key', 'create', '--workspace', ws, '--scopes', 'read:forms', '--name', 'reader', '--json'], env),
      );
      const list = json(await cli(['key', 'list', '--workspace', ws, '--json'], env));
      expect(list.map((k: any) => k.id).sort()).toEqual([created.apiKey.id, reader.id].sort());
      for (const k of list)
        expect(Object.keys(k).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'scopes']);
      const human = await cli(['key', 'list', '--workspace', ws], env);
      expect(human.stdout).toMatch(/ID\s+NAME\s+SCOPES\s+CREATED\s+LAST USED\s+STATUS/);
      expect(human.stdout).toContain(reader.id);
      for (const out of [JSON.stringify(list), human.stdout, human.stderr]) {
        expect(out).not.toContain(reader.key);
        expect(out).not.toContain(created.apiKey.key);
        expect(out).not.toMatch(/fc_[0-9A-Z]{26}_/);
      }

      const revoked = await cli(['key', 'revoke', reader.id, '--workspace', ws], env);
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toBe(`API key ${reader.id} revoked\n`);
      expect(
        json(await cli(['key', 'list', '--workspace', ws, '--json'], env)).find((k: any) => k.id === reader.id)
          .revokedAt,
      ).toMatch(TIMESTAMP);

      const last = await cli(['key', 'revoke', created.apiKey.id, '--workspace', ws, '--json'], env);
      expect(failure(last)).toMatch(/last active API key with the admin scope/);
      expect(last.code).toBe(5);
      const unknown = await cli(['key', 'revoke', 'key_NOPE', '--workspace', ws], env);
      failure(unknown);
      expect(unknown.code).toBe(4);

      // With a second admin key the first may go.
      const second = json(await cli(['key', 'create', '--workspace', ws, '--scopes', 'admin', '--json'], env));
      expect(json(await cli(['key', 'revoke', created.apiKey.id, '--workspace', ws, '--json'], env))).toEqual({
        id: created.apiKey.id,
        revoked: true,
      });
      expect(second.scopes).toEqual(['admin']);
    });

    it('--workspace may come from FORMCAST_WORKSPACE', async () => {
      const list = json(await cli(['key', 'list', '--json'], { ...env, FORMCAST_WORKSPACE: created.workspace.id }));
      expect(list.length).toBeGreaterThan(0);
    });

    it('user create, list, update and remove; the last owner stays (exit 5)', async () => {
      const ws = created.workspace.id;
      const owner = json(
        await cli(
          [
            'user',
            'create',
            '--workspace',
            ws,
            '--email',
            'Ann@Example.com',
            '--role',
            'owner',
            '--password-stdin',
            '--json',
          ],
          env,
          { input: 'correct horse battery staple\n' },
        ),
      );
      expect(owner).toMatchObject({
        id: expect.stringMatching(/^usr_/),
        email: 'ann@example.com',
        role: 'owner',
        workspaceId: ws,
      });
      const editor = json(
        await cli(
          [
            'user',
            'create',
            '--workspace',
            ws,
            '--email',
            'bo@example.com',
            '--role',
            'viewer',
            '--password-stdin',
            '--json',
          ],
          env,
          { input: 'another long passphrase' },
        ),
      );
      const updated = json(
        await cli(['user', 'update', editor.id, '--workspace', ws, '--role', 'editor', '--name', 'Bo', '--json'], env),
      );
      expect(updated).toMatchObject({ id: editor.id, role: 'editor', name: 'Bo' });
      const human = await cli(['user', 'list', '--workspace', ws], env);
      expect(human.stdout).toMatch(/ID\s+EMAIL\s+NAME\s+ROLE\s+LAST SIGN-IN/);
      expect(human.stdout).toMatch(/bo@example\.com\s+Bo\s+editor/);
      expect(human.stdout + human.stderr).not.toContain('passphrase');

      const demote = await cli(['user', 'update', owner.id, '--workspace', ws, '--role', 'admin'], env);
      expect(failure(demote)).toContain('last owner');
      expect(demote.code).toBe(5);
      expect(json(await cli(['user', 'remove', editor.id, '--workspace', ws, '--json'], env))).toEqual({
        id: editor.id,
        removed: true,
      });
      expect(json(await cli(['user', 'list', '--workspace', ws, '--json'], env)).map((u: any) => u.id)).toEqual([
        owner.id,
      ]);
      const noPassword = await cli(
        ['user', 'create', '--workspace', ws, '--email', 'c@example.com', '--role', 'viewer'],
        env,
      );
      expect(failure(noPassword)).toContain('--password-stdin');
      expect(noPassword.code).toBe(2);
    });
  });

  describe.sequential('formcast contacts import / export (SQLite)', () => {
    const env = sqliteEnv();
    const dir = tempDir();
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    let ws: string;

    beforeAll(async () => {
      ws = json(await cli(['workspace', 'create', 'Imports', '--json'], env)).workspace.id;
    });

    it('imports a CSV file and lists the rejected rows at the end (text and JSON)', async () => {
      const file = path.join(dir, 'people.csv');
      fs.writeFileSync(file, 'email,first_name\nann@example.com,Ann\nnot-an-email,Bob\ncy@example.com,Cy\n');
      const human = await cli(['contacts', 'import', file, '--workspace', ws], env);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^import imp_\S+ COMPLETED: 3 rows in [\d.]+ s: 2 created, 0 updated, 1 skipped\n/);
      expect(human.stdout).toMatch(/Rejected rows \(1\):\nLINE\s+REASON\n3\s+email .*not-an-email/);
      // Not a terminal: no progress bar.
      expect(human.stderr).toBe(`database: ${env.DATABASE_URL} (SQLite)\n`);

      const ndjson = path.join(dir, 'more.ndjson');
      fs.writeFileSync(ndjson, '{"email":"ann@example.com","lastName":"Lee"}\n{"email":"dee@example.com"}\n');
      const job = json(await cli(['contacts', 'import', ndjson, '--workspace', ws, '--json'], env));
      expect(job).toMatchObject({
        status: 'COMPLETED',
        format: 'NDJSON',
        total: 2,
        created: 1,
        updated: 1,
        skipped: 0,
        errors: [],
      });
    });

    it('a file that stops the import exits 6; a missing file exits 4', async () => {
      const broken = path.join(dir, 'broken.csv');
      fs.writeFileSync(broken, 'email\neve@example.com\n"unclosed@example.com\n');
      const run = await cli(['contacts', 'import', broken, '--workspace', ws, '--json'], env);
      expect(run.code).toBe(6);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'FAILED', error: expect.any(String) });
      const missing = await cli(['contacts', 'import', path.join(dir, 'nope.csv'), '--workspace', ws], env);
      expect(failure(missing)).toContain('nope.csv');
      expect(missing.code).toBe(4);
    });

    it('on a terminal, the import draws a progress bar with rows/s and ETA', async () => {
      const file = path.join(dir, 'many.csv');
      fs.writeFileSync(
        file,
        `email\n${Array.from({ length: 5000 }, (_, i) => `p${i}@example.com`).join('\n')}\nbad-row\n`,
      );
      const run = await pty(['contacts', 'import', file, '--workspace', ws], env);
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toMatch(/importing many\.csv \[[█░]+\] 100% \| [\d,]+ rows \| [\d,]+ rows\/s \| ETA \d+s/);
      expect(run.stdout).toMatch(/5,001 rows in [\d.]+ s: 5,000 created/);
      // The rejected row after the bar, and colours on a terminal.
      expect(run.stdout).toMatch(/5002\s+email .*bad-row/);
      expect(run.stdout).toContain('\u001b[32mCOMPLETED');
      // NO_COLOR turns colours off, even on a terminal.
      const plain = await pty(['contacts', 'export', '--workspace', ws, '--out', path.join(dir, 'x.csv')], {
        ...env,
        NO_COLOR: '1',
      });
      expect(plain.stdout).not.toContain('\u001b[2m');
    });

    it('exports CSV to standard output or a file; an unknown segment exits 4', async () => {
      const out = await cli(['contacts', 'export', '--workspace', ws], env);
      expect(out.code).toBe(0);
      const lines = out.stdout.split('\r\n');
      expect(lines[0]).toBe(
        'id,email,firstName,lastName,status,suppressed,properties,createdAt,updatedAt,tags,timezone',
      );
      expect(lines.filter((l) => l.includes('@example.com'))).toHaveLength(5004);
      expect(out.stdout).toMatch(/ann@example\.com,Ann,Lee,SUBSCRIBED,false/);

      const file = path.join(dir, 'export.csv');
      const summary = json(await cli(['contacts', 'export', '--workspace', ws, '--out', file, '--json'], env));
      expect(summary).toEqual({ file, bytes: fs.statSync(file).size });
      expect(fs.readFileSync(file, 'utf8')).toBe(out.stdout);

      const missing = await cli(['contacts', 'export', '--workspace', ws, '--segment', 'seg_NOPE'], env);
      expect(failure(missing)).toContain('segment');
      expect(missing.code).toBe(4);
    });
  });

  describe.sequential('formcast domain / doctor / send-test (SQLite, DNS and SMTP on loopback)', () => {
    const env = sqliteEnv();
    let dns: Awaited<ReturnType<typeof startDnsServer>>;
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let ws: string;
    let domain: any;
    let full: Record<string, string>;

    beforeAll(async () => {
      dns = await startDnsServer();
      smtp = await startSmtpServer();
      full = {
        ...env,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: '1000',
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        PUBLIC_URL: 'http://127.0.0.1:9',
      };
      ws = json(await cli(['workspace', 'create', 'Senders', '--json'], full)).workspace.id;
      domain = json(await cli(['domain', 'add', 'news.example', '--workspace', ws, '--json'], full));
    });
    afterAll(async () => {
      await dns?.close();
      await smtp?.close();
    });

    it('domain verify before the records are published: FAILED, the records as a table, exit 6', async () => {
      const run = await cli(['domain', 'verify', 'news.example', '--workspace', ws], full);
      expect(run.code).toBe(6);
      expect(run.stdout).toMatch(new RegExp(`^domain ${domain.id} news\\.example FAILED\\n`));
      expect(run.stdout).toMatch(/TYPE\s+NAME\s+VALUE\s+STATUS/);
      expect(run.stdout).toMatch(/TXT\s+_formcast\.news\.example\s+formcast-verification=\S+\s+MISSING/);
      expect(run.stdout).toMatch(/TXT\s+\S+\._domainkey\.news\.example\s+v=DKIM1; k=rsa; p=\S+\s+MISSING/);
    });

    it('domain verify once they are: VERIFIED, exit 0; domain list shows it', async () => {
      // A TXT string holds 255 characters at most: the DKIM key is published as several.
      for (const r of domain.records.filter((x: any) => x.type === 'TXT'))
        dns.txt.set(r.name, [r.value.match(/.{1,255}/g)]);
      const verified = json(await cli(['domain', 'verify', domain.id, '--workspace', ws, '--json'], full));
      expect(verified).toMatchObject({ id: domain.id, status: 'VERIFIED' });
      const list = await cli(['domain', 'list', '--workspace', ws], full);
      expect(list.stdout).toMatch(new RegExp(`${domain.id}\\s+news\\.example\\s+VERIFIED`));
      expect(json(await cli(['domain', 'list', '--workspace', ws, '--json'], full)).map((d: any) => d.status)).toEqual([
        'VERIFIED',
      ]);
      const unknown = await cli(['domain', 'verify', 'other.example', '--workspace', ws], full);
      failure(unknown);
      expect(unknown.code).toBe(4);
    });

    it('doctor: every check passes (warnings aside) and says so; exit 0', async () => {
      const run = await cli(['doctor', '--json'], full);
      expect(run.code, run.stdout).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.ok).toBe(true);
      const by = (name: string) => report.checks.find((c: any) => c.check === name);
      expect(by('configuration').status).toBe('ok');
      expect(by('PUBLIC_URL')).toMatchObject({ status: 'warn' });
      expect(by('PUBLIC_URL reachable')).toMatchObject({ status: 'warn' });
      expect(by(`SMTP smtp://127.0.0.1:${smtp.port}`)).toMatchObject({ status: 'ok' });
      // The test server offers no STARTTLS: said, and tolerated on loopback only.
      expect(by(`SMTP smtp://127.0.0.1:${smtp.port} TLS`)).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('not encrypted'),
      });
      expect(by('database')).toMatchObject({ status: 'ok', detail: expect.stringContaining(env.DATABASE_URL!) });
      expect(by('migrations')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^all \d+ applied$/) });
      // Published: ownership, DKIM and the bounce domain's SPF, but no DMARC: a warning that says what to add.
      expect(by(`DNS news.example (${ws})`)).toMatchObject({
        status: 'warn',
        detail: expect.stringMatching(/but no DMARC record: .*rua=mailto:dmarc@bounces\.news\.example/),
      });
      // The relay is on loopback: the address mail leaves from is not known, and doctor says how to have it checked.
      expect(by('PTR')).toMatchObject({ status: 'warn', detail: expect.stringContaining('set SENDING_IPS') });
      dns.txt.set('_dmarc.news.example', [['v=DMARC1; p=none; rua=mailto:dmarc@bounces.news.example']]);
      // PTR through the loopback DNS server: one address forward-confirmed, one without a PTR, one whose name points elsewhere.
      dns.ptr.set('203.0.113.7', ['mail.news.example']);
      dns.a.set('mail.news.example', ['203.0.113.7']);
      dns.ptr.set('203.0.113.9', ['host.isp.example']);
      const withIps = JSON.parse(
        (await cli(['doctor', '--json'], { ...full, SENDING_IPS: '203.0.113.7,203.0.113.8,203.0.113.9' })).stdout,
      );
      const at = (name: string) => withIps.checks.find((c: any) => c.check === name);
      expect(at(`DNS news.example (${ws})`)).toMatchObject({ status: 'ok' });
      expect(at('PTR 203.0.113.7')).toMatchObject({
        status: 'ok',
        detail: 'mail.news.example, which resolves back to 203.0.113.7',
      });
      expect(at('PTR 203.0.113.8')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('has no PTR record'),
      });
      expect(at('PTR 203.0.113.9')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('does not resolve back'),
      });

      const human = await cli(['doctor'], full);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/✓ ok\s+migrations\s+all \d+ applied/);
      expect(human.stdout).toMatch(/all checks passed \(with warnings\)\n$/);
    });

    it("doctor fails (exit 6) when a verified domain's records are gone or SMTP cannot be reached", async () => {
      dns.txt.clear();
      const run = await cli(['doctor', '--json'], { ...full, SMTP_URL: 'smtp://127.0.0.1:9' });
      expect(run.code).toBe(6);
      const report = JSON.parse(run.stdout);
      expect(report.ok).toBe(false);
      expect(report.checks.find((c: any) => c.check === `DNS news.example (${ws})`)).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('MISSING'),
      });
      expect(report.checks.find((c: any) => c.check === 'SMTP smtp://127.0.0.1:9')).toMatchObject({ status: 'fail' });
      const bad = await cli(['doctor'], { ...full, SMTP_URL: 'http://x' });
      expect(bad.code).toBe(6);
      expect(bad.stdout).toMatch(/✗ fail\s+configuration\s+SMTP_URL/);
    });

    it("doctor on the README's laptop setup (no SMTP_URL, no PUBLIC_URL, a domain marked verified): warnings, exit 0", async () => {
      // The records are still unpublished (cleared above), as for `domain add --verified` on a laptop.
      const laptop = { DATABASE_URL: env.DATABASE_URL!, DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '1000' };
      const run = await cli(['doctor', '--json'], laptop);
      expect(run.code, run.stdout).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.ok).toBe(true);
      const by = (name: string) => report.checks.find((c: any) => c.check === name);
      expect(by('PUBLIC_URL')).toMatchObject({ status: 'warn', detail: expect.stringContaining('outbox') });
      expect(by('SMTP')).toMatchObject({ status: 'warn' });
      expect(by(`DNS news.example (${ws})`)).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('MISSING'),
      });
      expect(report.checks.filter((c: any) => c.status === 'fail')).toEqual([]);
      const human = await cli(['doctor'], laptop);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/all checks passed \(with warnings\)\n$/);
    });

    it("send-test: the server's answer; a refusal exits 6; without SMTP_URL, the .eml outbox", async () => {
      const run = await cli(
        ['send-test', '--to', 'Someone@Example.org', '--from', 'Ops <ops@news.example>', '--workspace', ws],
        full,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^transport\s+SMTP smtp:\/\/127\.0\.0\.1:\d+ \(pool of 1\)$/m);
      expect(run.stdout).toMatch(/^connection\s+ok the server greets and answers EHLO; TLS: none$/m);
      expect(run.stdout).toMatch(
        /^message\s+<tst_\S+@news\.example> from ops@news\.example to Someone@example\.org, DKIM \S+\._domainkey\.news\.example$/m,
      );
      expect(run.stdout).toMatch(/^outcome\s+accepted: 250 /m);
      const got = smtp.received.find((m) => m.to === 'Someone@example.org');
      expect(got?.parsed.subject).toBe('Formcast test message');
      expect(got?.raw.toString()).toMatch(/DKIM-Signature: .*d=news\.example/);

      smtp.setPolicy((address) => (address.startsWith('refuse') ? { code: 550, message: 'No such user here' } : null));
      const refused = await cli(
        ['send-test', '--to', 'refuse@example.org', '--from', 'ops@news.example', '--json'],
        full,
      );
      expect(refused.code).toBe(6);
      expect(JSON.parse(refused.stdout)).toMatchObject({
        accepted: false,
        error: expect.stringContaining('550'),
        dkim: null,
        mode: 'smtp',
      });

      const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-outbox-'));
      try {
        const written = json(
          await cli(['send-test', '--to', 'x@example.org', '--from', 'ops@news.example', '--json'], {
            ...env,
            OUTBOX_DIR: outbox,
          }),
        );
        expect(written).toMatchObject({
          mode: 'outbox',
          accepted: true,
          connection: null,
          response: expect.stringContaining('.eml'),
        });
        expect(fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'))).toHaveLength(1);
      } finally {
        fs.rmSync(outbox, { recursive: true, force: true });
      }
    });
  });

  describe.sequential('formcast broadcast / queue with a running server (SQLite, SMTP on loopback)', () => {
    const env = sqliteEnv();
    const dir = tempDir();
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
    let full: Record<string, string>;
    let ws: string;
    let key: string;
    let server: Server;
    let broadcastId: string;

    beforeAll(async () => {
      smtp = await startSmtpServer();
      full = {
        ...env,
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        SEND_THREADS: '0',
        WORKER_POLL_MS: '50',
        LOG_LEVEL: 'warn',
      };
      const created = json(await cli(['workspace', 'create', 'Broadcasts', '--json'], full));
      ws = created.workspace.id;
      key = created.apiKey.key;
      json(await cli(['domain', 'add', 'example.com', '--workspace', ws, '--verified', '--json'], full));
      const file = path.join(dir, 'audience.csv');
      fs.writeFileSync(file, 'email\na@example.org\nb@example.org\nc@example.org\n');
      json(await cli(['contacts', 'import', file, '--workspace', ws, '--json'], full));
      server = await serve(full);
      const res = await fetch(`${server.url}/v1/broadcasts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'Hello',
          from: 'news@example.com',
          emailContent: { subject: 'Hi {{ contact.email }}', html: '<p>Hello</p>' },
        }),
      });
      expect(res.status).toBe(201);
      broadcastId = ((await res.json()) as { id: string }).id;
    });
    afterAll(async () => {
      if (server) {
        server.child.kill('SIGTERM');
        await exitWithin(server, 10_000).catch(() => server.child.kill('SIGKILL'));
      }
      await smtp?.close();
    });

    it('broadcast list and status of a DRAFT; status --watch of a DRAFT says there is nothing to watch (exit 6)', async () => {
      const list = await cli(['broadcast', 'list', '--workspace', ws], full);
      expect(list.stdout).toMatch(
        new RegExp(`ID\\s+NAME\\s+STATUS\\s+RECIPIENTS.*\\n${broadcastId}\\s+Hello\\s+DRAFT\\s+-`),
      );
      expect(json(await cli(['broadcast', 'status', broadcastId, '--workspace', ws, '--json'], full))).toMatchObject({
        id: broadcastId,
        status: 'DRAFT',
      });
      const watch = await cli(['broadcast', 'status', broadcastId, '--workspace', ws, '--watch'], full);
      expect(watch.code).toBe(6);
      expect(watch.stdout).toContain('is DRAFT: nothing is being sent');
      const unknown = await cli(['broadcast', 'status', 'bc_NOPE', '--workspace', ws], full);
      failure(unknown);
      expect(unknown.code).toBe(4);
    });

    it('broadcast send, then status --watch on a terminal: a live bar of sent/failed/bounced until SENT', async () => {
      const sent = await cli(['broadcast', 'send', broadcastId, '--workspace', ws], full);
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(new RegExp(`^broadcast ${broadcastId} is SENDING: the server's worker sends it`));
      const again = await cli(['broadcast', 'send', broadcastId, '--workspace', ws], full);
      failure(again);
      expect(again.code).toBe(5);

      const watch = await pty(
        ['broadcast', 'status', broadcastId, '--workspace', ws, '--watch', '--interval', '100'],
        full,
      );
      expect(watch.code, watch.stdout).toBe(0);
      const shown = stripAnsi(watch.stdout);
      expect(shown).toMatch(/SENT \[[█░]+\] 3\/3 \| sent 3 \| failed 0 \| bounced 0 \| ETA \d+s/);
      expect(shown).toMatch(/^status\s+SENT$/m);
      expect(shown).toMatch(/^recipients\s+3$/m);
      expect(smtp.received.map((m) => m.to).sort()).toEqual(['a@example.org', 'b@example.org', 'c@example.org']);
    });

    it('status --watch without a terminal: one line per change; with --json, one JSON object per line', async () => {
      const plain = await cli(['broadcast', 'status', broadcastId, '--workspace', ws, '--watch'], full);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(/^SENT 3\/3 sent 3 failed 0 bounced 0\n/);
      const lines = (
        await cli(['broadcast', 'status', broadcastId, '--workspace', ws, '--watch', '--json'], full)
      ).stdout
        .trim()
        .split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        id: broadcastId,
        status: 'SENT',
        stats: { recipients: 3, sent: 3, failed: 0, bounced: 0 },
      });
      expect(
        json(await cli(['broadcast', 'list', '--workspace', ws, '--status', 'SENT', '--json'], full)).map(
          (b: any) => b.id,
        ),
      ).toEqual([broadcastId]);
    });

    it('queue status: deliveries by status, the oldest due, the leases (text and JSON)', async () => {
      const q = json(await cli(['queue', 'status', '--json'], full));
      expect(q).toMatchObject({ byStatus: { SENT: 3 }, due: 0, oldestDue: null, leases: [], workspaceId: null });
      const mine = json(await cli(['queue', 'status', '--workspace', ws, '--json'], full));
      expect(mine).toMatchObject({ byStatus: { SENT: 3 }, workspaceId: ws });
      const human = await cli(['queue', 'status'], full);
      expect(human.stdout).toMatch(/STATUS\s+COUNT\nQUEUED\s+0\n.*\nSENT\s+3/s);
      expect(human.stdout).toContain('Oldest due: nothing queued');
      expect(human.stdout).toContain('no worker holds a lease');
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

    it.skipIf(!PG_URL)(
      'migrate, workspace create, key create, domain add and serve work against PostgreSQL',
      { timeout: 240_000 },
      async () => {
        const first = await cli(['migrate'], env);
        expect(first.stderr).toMatch(/^database: postgres:\/\/\S+ \(PostgreSQL\)\n$/);
        expect(first.code).toBe(0);
        expect(first.stdout).toMatch(/^applied: 0001_foundation/);
        const second = await cli(['migrate'], env);
        expect(second.code).toBe(0);
        expect(second.stdout).toBe('database is up to date (no migration pending)\n');

        const created = json(await cli(['workspace', 'create', 'On Postgres', '--json'], env));
        expect(Object.keys(created).sort()).toEqual(['apiKey', 'workspace']);
        expect(created.workspace).toEqual({ id: expect.stringMatching(/^ws_/), name: 'On Postgres' });
        expect(created.apiKey).toEqual({
          id: expect.stringMatching(/^key_/),
          key: expect.any(String),
          scopes: ['admin'],
        });

        const key = json(
          await cli(['key', 'create', '--workspace', created.workspace.id, '--scopes', 'read:forms', '--json'], env),
        );
        expect(key).toEqual({ id: expect.stringMatching(/^key_/), key: expect.any(String), scopes: ['read:forms'] });
        failure(await cli(['key', 'create', '--workspace', 'ws_NOPE', '--scopes', 'read:forms'], env));

        const domain = json(
          await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--verified', '--json'], env),
        );
        expect(domain).toMatchObject({ name: 'example.com', status: 'VERIFIED' });
        expect(
          failure(await cli(['domain', 'add', 'example.com', '--workspace', created.workspace.id, '--json'], env)),
        ).toContain('example.com');

        // The operator commands whose SQL differs on PostgreSQL (row locks, aggregates, streaming pages).
        expect(json(await cli(['workspace', 'list', '--json'], env)).map((w: any) => w.id)).toEqual([
          created.workspace.id,
        ]);
        const last = await cli(['key', 'revoke', created.apiKey.id, '--workspace', created.workspace.id], env);
        expect(failure(last)).toMatch(/last active API key with the admin scope/);
        expect(last.code).toBe(5);
        expect(json(await cli(['key', 'revoke', key.id, '--workspace', created.workspace.id, '--json'], env))).toEqual({
          id: key.id,
          revoked: true,
        });
        const dir = tempDir();
        try {
          fs.writeFileSync(path.join(dir, 'c.csv'), 'email\na@example.org\nnope\nb@example.org\n');
          expect(
            json(
              await cli(
                ['contacts', 'import', path.join(dir, 'c.csv'), '--workspace', created.workspace.id, '--json'],
                env,
              ),
            ),
          ).toMatchObject({ status: 'COMPLETED', created: 2, skipped: 1 });
          const exported = await cli(['contacts', 'export', '--workspace', created.workspace.id], env);
          expect(exported.stdout.split('\r\n').filter((l) => l.includes('@example.org'))).toHaveLength(2);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
        expect(json(await cli(['queue', 'status', '--json'], env))).toMatchObject({
          byStatus: {},
          due: 0,
          oldestDue: null,
          leases: [],
        });
        const doctor = JSON.parse(
          (await cli(['doctor', '--json'], { ...env, DNS_SERVERS: '127.0.0.1:9', DNS_TIMEOUT_MS: '200' })).stdout,
        );
        expect(doctor.checks.find((c: any) => c.check === 'migrations')).toMatchObject({ status: 'ok' });

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
      },
    );
  });
});
