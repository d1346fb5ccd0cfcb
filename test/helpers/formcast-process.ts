/**
 * Formcast as a new user runs it, for the end-to-end tests: `bin/formcast` commands and `formcast serve` as child
 * processes of this checkout, with an environment of the test's own (nothing of the caller's leaks in).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_SECRET_KEY } from './secret.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The send threads at the process's own priority (SEND_THREADS_NICE=0; docs/sending.md, "Send threads"), unless the test
// says otherwise: the suite keeps both cores busy with processes at the normal priority, and lowered threads would get
// only the CPU those processes leave (a kill -9 test's 10 s deadline passed before its worker's first message). Their
// priority is a matter of speed, not of what these tests check.
// SECRET_KEY: the tests' installation key (secret.ts), which the test's own process seals and signs with (TEST_SECRET).
export const TEST_PROCESS_DEFAULTS = { SEND_THREADS_NICE: '0', SECRET_KEY: TEST_SECRET_KEY };

/** The caller's environment without the settings a test gives itself, then those. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of [
    'PORT',
    'HOST',
    'DATABASE_URL',
    'SMTP_URL',
    'PUBLIC_URL',
    'DNS_SERVERS',
    'LOG_LEVEL',
    'OUTBOX_DIR',
  ])
    delete base[name];
  return { ...base, ...TEST_PROCESS_DEFAULTS, ...env };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `formcast <args>` with its exit code and output, whatever the code. */
export function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/formcast', ...args], { cwd: ROOT, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Runs `formcast <args> --json`-style commands: resolves with the parsed stdout, rejects with stderr on a non-zero exit. */
export async function cli(args: string[], env: Record<string, string>, stdin?: string): Promise<any> {
  const { code, stdout, stderr } = await runCli(args, env, stdin);
  if (code !== 0) throw new Error(`formcast ${args.join(' ')} exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

/**
 * The environment of a Formcast of its own for a test: a SQLite file in `dir`, loopback only, warnings logged, DNS at a
 * port nothing answers (quickly), and mail to the test SMTP server at `smtpPort`; `extra` on top.
 */
export function localServeEnv(
  dir: string,
  smtpPort: number,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: path.join(dir, 'formcast.db'),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DNS_SERVERS: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '300',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    ...extra,
  };
}

/** A port nothing listens on right now (on loopback). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * `formcast serve` on a free port (or env.PORT, with env.PUBLIC_URL as given), resolved once it logs its
 * `listening on` line; `output()` is what it wrote so far. The free port is let go before serve takes it, so another
 * test's server may take it meanwhile: serve then exits with EADDRINUSE, and is started again on another port.
 */
export async function serve(
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<{ child: ChildProcessWithoutNullStreams; url: string; output(): string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await serveOnce(env, timeoutMs);
    } catch (err) {
      if (env.PORT || attempt >= 5 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

async function serveOnce(
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ child: ChildProcessWithoutNullStreams; url: string; output(): string }> {
  const own = env.PORT
    ? {}
    : await freePort().then((port) => ({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }));
  const child = spawn(process.execPath, ['bin/formcast', 'serve'], { cwd: ROOT, env: childEnv({ ...env, ...own }) });
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stdout.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no "listening on" line within ${timeoutMs / 1000} s`), timeoutMs);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${why}\n${output}`));
    }
    child.stdout.on('data', (d: string) => {
      output += d;
      const m = /"msg":"listening on (http:\/\/[^"]+)"/.exec(output); // serve's JSON log line
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    // 'close', not 'exit': only then has all its output (an EADDRINUSE on stderr, say) been read.
    child.once('close', (code, signal) => fail(`serve exited early (code ${code}, signal ${signal})`));
  });
  return { child, url, output: () => output };
}

/**
 * A JSON caller of a running server's API with a key: `api('POST', '/v1/forms', body)` answers the parsed body (null
 * when empty) and throws on any status that is not 2xx. Both are read when called (a suite sets them in beforeAll).
 */
export function apiCaller(
  baseUrl: () => string,
  key: () => string,
): (method: string, url: string, body?: unknown) => Promise<any> {
  return async (method, url, body) => {
    const res = await fetch(`${baseUrl()}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key()}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

/** Why a console suite cannot run here, or null: it signs in (`user create --password-stdin`) to the built console. */
export function consoleUnavailable(): string | null {
  const help = spawnSync(process.execPath, ['bin/formcast', 'user', 'create', '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (help.status !== 0 || !help.stdout.includes('--password-stdin'))
    return '`formcast user create --password-stdin` is not available';
  if (!fs.existsSync(path.join(ROOT, 'dist', 'console', 'index.html')))
    return 'the console is not built: run `npm run build:console`';
  return null;
}
