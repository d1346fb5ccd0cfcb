import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connection.js';
import { grants } from '../../src/http/scopes.js';
import { configWarnings, defaultSendThreads, loadConfig } from '../../src/config.js';
import { normalizeDomainName } from '../../src/mail-setup/domains/domains.service.js';
import { buildPipeline } from '../../src/jobs/jobs.js';
import { newId } from '../../src/lib/ids.js';
import { applyLeanHeap, leanHeapWanted } from '../../src/lib/lean-heap.js';
import { toIso } from '../../src/lib/time.js';
import { DEFAULT_BREAKER_RULES } from '../../src/sending/broadcasts/broadcasts.breaker.js';

describe('ids', () => {
  it('are prefixed and sort by creation', () => {
    const ids = Array.from({ length: 1000 }, () => newId('form'));
    expect(ids.every((id) => /^form_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('toIso', () => {
  it.each([
    ['2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21 10:00:00+00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21 10:00:00.12+00', '2026-11-21T10:00:00.120Z'],
    ['2026-11-21 12:00:00.123+02', '2026-11-21T10:00:00.123Z'],
  ])('%s → %s', (input, out) => expect(toIso(input)).toBe(out));
});

describe('scopes', () => {
  it('admin grants everything, write grants read, read does not grant write', () => {
    expect(grants(['admin'], 'write:forms')).toBe(true);
    expect(grants(['write:forms'], 'read:forms')).toBe(true);
    expect(grants(['read:forms'], 'write:forms')).toBe(false);
    expect(grants(['write:broadcasts'], 'read:forms')).toBe(false);
  });
});

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, host: '127.0.0.1', smtpUrl: null, publicUrl: 'http://127.0.0.1:3000' });
    // The defaults are in the project's folder (of package.json), not the working directory.
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    expect(c.databaseUrl).toBe(path.join(root, 'data', 'formcast.db'));
    expect(c.outboxDir).toBe(path.join(root, 'data', 'outbox'));
    // The key file: beside the SQLite file; for PostgreSQL in data/; none for an in-memory database; SECRET_KEY_FILE.
    expect(c.secretKeyFile).toBe(path.join(root, 'data', 'secret.key'));
    expect(loadConfig({ DATABASE_URL: '/srv/fc/main.db' }).secretKeyFile).toBe('/srv/fc/secret.key');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).secretKeyFile).toBe(path.join(root, 'data', 'secret.key'));
    expect(loadConfig({ DATABASE_URL: ':memory:' }).secretKeyFile).toBeNull();
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db', SECRET_KEY_FILE: '/etc/formcast/key' }).secretKeyFile).toBe(
      '/etc/formcast/key',
    );
  });
  it('rejects values that cannot work', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT/);
    expect(() => loadConfig({ SMTP_URL: 'http://x' })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ PUBLIC_URL: 'not a url' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ TRUST_PROXY: '1' })).toThrow(/hop count/);
    expect(() => loadConfig({ SECRET_KEY: 'short' })).toThrow(/SECRET_KEY/);
    // An unknown scheme is refused (it used to be taken for a file path, creating a file named `mysql:`).
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL: unsupported scheme "mysql:"/);
    expect(() => loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.db' })).toThrow(/unsupported scheme "sqlite:"/);
    expect(() => connect('mysql://x')).toThrow(/unsupported scheme/);
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).databaseUrl).toBe('postgresql://u@h/db');
    expect(loadConfig({ DATABASE_URL: '/tmp/f.db' }).databaseUrl).toBe('/tmp/f.db');
    expect(loadConfig({ DATABASE_URL: ':memory:' }).databaseUrl).toBe(':memory:');
    expect(() => loadConfig({ PAUSE_BOUNCE_RATE: '0' })).toThrow(/PAUSE_BOUNCE_RATE/);
    expect(loadConfig({}).submissionIntake).toBe('auto');
    expect(loadConfig({ SUBMISSION_INTAKE: 'always' }).submissionIntake).toBe('always');
    expect(loadConfig({ SUBMISSION_INTAKE: 'off' }).submissionIntake).toBe('off');
    expect(() => loadConfig({ SUBMISSION_INTAKE: 'sometimes' })).toThrow(
      /SUBMISSION_INTAKE must be auto, always or off/,
    );
    expect(loadConfig({}).sqliteCheckpoints).toBe('background');
    expect(loadConfig({ SQLITE_CHECKPOINTS: 'inline' }).sqliteCheckpoints).toBe('inline');
    expect(() => loadConfig({ SQLITE_CHECKPOINTS: 'never' })).toThrow(
      /SQLITE_CHECKPOINTS must be background or inline/,
    );
  });
  it('greets SMTP servers with SMTP_HELO_NAME, else the host of an explicit PUBLIC_URL (never an address)', () => {
    expect(loadConfig({}).smtpHeloName).toBeNull();
    expect(loadConfig({ PUBLIC_URL: 'https://mail.acme.test' }).smtpHeloName).toBe('mail.acme.test');
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:3000' }).smtpHeloName).toBeNull();
    expect(loadConfig({ PUBLIC_URL: 'http://[::1]:3000' }).smtpHeloName).toBeNull();
    expect(loadConfig({ PUBLIC_URL: 'https://a.test', SMTP_HELO_NAME: 'mta.a.test' }).smtpHeloName).toBe('mta.a.test');
  });
  it('warns about what keeps mail from arriving', () => {
    expect(configWarnings(loadConfig({})).join('\n')).toMatch(
      /PUBLIC_URL is not set[\s\S]*SMTP_URL is not set[\s\S]*BOUNCE_MX_HOST is 127\.0\.0\.1/,
    );
    expect(configWarnings(loadConfig({ PUBLIC_URL: 'http://mail.acme.test', SMTP_URL: 'smtp://relay.test' }))).toEqual([
      expect.stringMatching(/http:\/\/ on mail\.acme\.test/),
    ]);
    expect(configWarnings(loadConfig({ PUBLIC_URL: 'https://mail.acme.test', SMTP_URL: 'smtp://relay.test' }))).toEqual(
      [],
    );
    expect(
      configWarnings(
        loadConfig({ PUBLIC_URL: 'https://mail.acme.test', SMTP_URL: 'smtp://relay.test', SERVE_WORKER: 'false' }),
      ),
    ).toEqual([
      expect.stringMatching(
        /SERVE_WORKER=false: this process sends nothing.*formcast worker` on this machine, against the same SQLite file/,
      ),
    ]);
    expect(() => loadConfig({ SERVE_WORKER: 'no' })).toThrow(/SERVE_WORKER must be true or false, got "no"/);
    expect(() => loadConfig({ SEND_THREADS: '-1' })).toThrow(/SEND_THREADS must be a whole number from 0 to 64/);
    expect(loadConfig({ SEND_THREADS: '0', WORKER_BATCHES: '3' }).worker).toMatchObject({
      sendThreads: 0,
      batches: 3,
      inServe: true,
    });
    expect(loadConfig({}).worker.sendThreadsNice).toBe(0);
    expect(loadConfig({ SEND_THREADS_NICE: '10' }).worker.sendThreadsNice).toBe(10);
    // One send thread fewer than the cores (their signatures use libuv's pool), none on one core.
    expect([1, 2, 4, 16].map((cores) => defaultSendThreads(cores))).toEqual([0, 1, 3, 8]);
    expect(loadConfig({ SEND_THREADS_NICE: '0' }).worker.sendThreadsNice).toBe(0);
    expect(() => loadConfig({ SEND_THREADS_NICE: '20' })).toThrow(
      /SEND_THREADS_NICE must be a whole number from 0 to 19/,
    );
    expect(() => loadConfig({ LEAN_HEAP: 'yes' })).toThrow(/LEAN_HEAP must be true or false, got "yes"/);
    expect(loadConfig({ LEAN_HEAP: 'true' }).leanHeap).toBe(true);
  });
  it("keeps V8's heap lean where LEAN_HEAP says, or by the command's default (`formcast worker`)", () => {
    expect(leanHeapWanted({}, false)).toBe(false);
    expect(leanHeapWanted({}, true)).toBe(true);
    expect(leanHeapWanted({ LEAN_HEAP: 'true' }, false)).toBe(true);
    expect(leanHeapWanted({ LEAN_HEAP: 'false' }, true)).toBe(false);
    expect(leanHeapWanted({ LEAN_HEAP: '' }, true)).toBe(true);
    // A wrong value turns nothing on, and is left for the configuration to refuse, on every command.
    for (const wrong of ['no', '0', 'FALSE', 'yes']) expect(leanHeapWanted({ LEAN_HEAP: wrong }, true)).toBe(false);
    const env = { LEAN_HEAP: 'no' };
    expect(applyLeanHeap(env, true)).toBe(false);
    expect(env.LEAN_HEAP).toBe('no');
  });
  /** Runs a fixture that watches the young generation (test/fixtures) in a child process; its figures by label. */
  const youngGeneration = (fixture: string, env: NodeJS.ProcessEnv) => {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(path.dirname(fileURLToPath(import.meta.url)), `../fixtures/${fixture}`)],
      { env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    return (label: string) => Number(new RegExp(`${label}: new space MB ([\\d.]+)`).exec(out)?.[1]);
  };
  it("serve's start-up keeps the young generation at its first size; once started V8 grows it as it would (a child process)", () => {
    const plain = youngGeneration('startup-lean.ts', { LEAN_HEAP: '' });
    // The first size while starting (4 MB here; V8's own growth makes it 32 MB for this garbage), V8's growth after.
    expect(plain('starting')).toBeLessThanOrEqual(8);
    expect(plain('started')).toBeGreaterThanOrEqual(16);
    // With LEAN_HEAP=true the heap stays lean after start-up too: leanWhileStarting leaves it to applyLeanHeap.
    expect(youngGeneration('startup-lean.ts', { LEAN_HEAP: 'true' })('starting')).toBeGreaterThanOrEqual(16);
  }, 30_000);
  it('keeps the young generation at its size for sending while batches go out, and gives V8 its own growth after', () => {
    const plain = youngGeneration('sending-heap.ts', { LEAN_HEAP: '' });
    // 8 MB while sending (4 MB semi-spaces; V8's own growth makes it 32 MB for this garbage), V8's growth after.
    expect(plain('sending')).toBeLessThanOrEqual(8);
    expect(plain('idle')).toBeGreaterThanOrEqual(16);
    // With LEAN_HEAP=true sending changes nothing: the process is lean from its start (applyLeanHeap, not run here).
    expect(youngGeneration('sending-heap.ts', { LEAN_HEAP: 'true' })('sending')).toBeGreaterThanOrEqual(16);
  }, 60_000);
  it('builds the pipeline with the send threads the configuration says (SEND_THREADS, SEND_THREADS_NICE, LEAN_HEAP)', () => {
    const silent = { warn() {}, error() {}, info() {}, debug() {} } as never;
    const build = (env: Record<string, string>) =>
      buildPipeline({} as never, {} as never, { ...loadConfig(env), secret: Buffer.alloc(32) }, silent).renderer;
    const linux = process.platform === 'linux';
    // The threads start with the first message: nothing is started here.
    expect(build({ SEND_THREADS: '1', SEND_THREADS_NICE: '6' })).toMatchObject({ threads: 1, nice: linux ? 6 : 0 });
    expect(build({ SEND_THREADS: '2', SEND_THREADS_NICE: '0' })).toMatchObject({ threads: 2, nice: 0 });
    expect(build({ SEND_THREADS: '0' })).toMatchObject({ threads: 0, nice: 0 });
    const cores = os.availableParallelism();
    expect(build({}).threads).toBe(defaultSendThreads(cores));
    expect(build({ LEAN_HEAP: 'true' }).threads).toBe(defaultSendThreads(cores));
    expect(build({}).nice).toBe(0);
  });
  it('reads rates as fractions or percentages', () => {
    expect(loadConfig({ PAUSE_BOUNCE_RATE: '10%', PAUSE_COMPLAINT_RATE: '0.001' }).bounces).toMatchObject({
      pauseBounceRate: 0.1,
      pauseComplaintRate: 0.001,
    });
  });
  it("pauses a broadcast past contract §11's default complaint rate, 0.5% (0.3% when set so)", () => {
    expect(loadConfig({}).bounces.pauseComplaintRate).toBe(0.005);
    expect(DEFAULT_BREAKER_RULES.complaintRate).toBe(0.005);
    expect(loadConfig({ PAUSE_COMPLAINT_RATE: '0.3%' }).bounces.pauseComplaintRate).toBeCloseTo(0.003);
  });
});

describe('normalizeDomainName', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['mail.example.co.uk.', 'mail.example.co.uk'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['localhost', null],
    ['not a domain', null],
    ['-bad.example', null],
    ['1.2.3.4', null],
  ])('%s → %s', (input, out) => expect(normalizeDomainName(input)).toBe(out));
});
