/**
 * `bench:send --sink postfix`: Debian's `smtp-sink` (package `postfix`, C) as the SMTP server, instead of the
 * Node sink (bench/smtp-sink.ts), whose parsing of every message took a share of the same two cores that the
 * measured sides need (issue 36, goal 2). smtp-sink accepts every message and, with `-d`, writes each one to a
 * file of its own (its envelope first, as `X-Client-Addr:`… lines, then a `Received:` line, then the message).
 *
 * The counters are read from those files: how many there are; for each new one, its Message-ID, whether it carries a
 * DKIM-Signature, its size, and its arrival (the file's modification time: smtp-sink closes it when the message
 * ends). The files are written under a directory per second (`%Y%m%d%H%M%S/`), so each poll reads only the seconds it has
 * not finished. The benchmark reads them in its own process, outside the measured processes' CPU time.
 *
 * `verifyDkim(n)` checks n messages picked at random with mailauth, the public key answered by a resolver in this
 * process for the selector and domain the message names.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BenchError, HOST, atCleanup, cpuSeconds, type Sink, type SinkStats } from './harness.js';

export const SMTP_SINK_PATH = process.env.SMTP_SINK_PATH || '/usr/sbin/smtp-sink';

/** Why the Postfix sink cannot run here (with the way to install it), or null. */
export function postfixSinkUnavailable(): string | null {
  try {
    fs.accessSync(SMTP_SINK_PATH, fs.constants.X_OK);
    return null;
  } catch {
    return `${SMTP_SINK_PATH} not found: install Debian's postfix package (apt-get install postfix; then \`service postfix stop\` if it started, the benchmark needs only the smtp-sink program)`;
  }
}

interface Seen {
  id: string | null;
  signed: boolean;
  bytes: number;
  at: number;
  /** Read after smtp-sink had finished writing it. */
  final: boolean;
}

export interface PostfixSink extends Sink {
  /** Verifies the DKIM signature of `n` messages picked at random; returns how many passed, and the failures' reasons. */
  verifyDkim(n: number, publicKeyPem: string): Promise<{ checked: number; passed: number; failures: string[] }>;
  /** The CPU time smtp-sink has used so far, in seconds. */
  cpuSeconds(): number;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** The message as it was sent: smtp-sink's envelope lines and its Received line taken off the top. */
export function messageOfDump(dump: Buffer): Buffer {
  let at = 0;
  for (;;) {
    const end = dump.indexOf('\n', at);
    if (end < 0) return dump.subarray(at);
    const line = dump.toString('latin1', at, end);
    if (/^X-(Client-Addr|Client-Proto|Helo-Args|Mail-Args|Rcpt-Args|Data-Args|Rcpt-Count|Client-Name):/i.test(line))
      at = end + 1;
    else if (/^Received: /i.test(line)) {
      // Its continuation lines start with white space.
      let next = end + 1;
      while (next < dump.length && (dump[next] === 0x20 || dump[next] === 0x09)) {
        const e = dump.indexOf('\n', next);
        next = e < 0 ? dump.length : e + 1;
      }
      return dump.subarray(next);
    } else return dump.subarray(at);
  }
}

export async function startPostfixSink(): Promise<PostfixSink> {
  const why = postfixSinkUnavailable();
  if (why) throw new BenchError(why);
  // smtp-sink drops its privileges to `-u` (nobody) when started as root: the directory, and every directory above
  // it, must let that user in (the benchmark's temp directory is mode 0700), so it gets one of its own in /tmp.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-bench-smtp-sink-'));
  fs.chmodSync(root, 0o777);
  atCleanup(async () => fs.rmSync(root, { recursive: true, force: true }));
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(
    SMTP_SINK_PATH,
    [...(asRoot ? ['-u', 'nobody'] : []), '-d', `${root}/%Y%m%d%H%M%S/`, `${HOST}:${port}`, '1024'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2000)));
  atCleanup(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  // Ready when it accepts a connection.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new BenchError(`smtp-sink exited: ${stderr}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, HOST, () => {
        c.end();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (ok) break;
    if (i > 100) throw new BenchError(`smtp-sink did not listen on ${HOST}:${port} within 5 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  let seen = new Map<string, Seen>();
  /** Directories (seconds) whose files were all read whole: more than 3 s older than the newest. */
  let done = new Set<string>();
  const head = Buffer.alloc(16_384);

  function scan(): void {
    const seconds = fs.readdirSync(root).sort();
    const newest = seconds.at(-1);
    for (const s of seconds) {
      if (done.has(s)) continue;
      const sub = path.join(root, s);
      let whole = true;
      for (const name of fs.readdirSync(sub)) {
        const file = path.join(sub, name);
        if (seen.get(file)?.final) continue;
        const fd = fs.openSync(file, 'r');
        try {
          const st = fs.fstatSync(fd);
          // smtp-sink writes the file as the message comes: one changed within the last second may not be whole yet,
          // and is read again at the next poll.
          const final = Date.now() - st.mtimeMs > 1000;
          const n = fs.readSync(fd, head, 0, head.length, 0);
          const text = head.toString('latin1', 0, n);
          const end = text.search(/\r?\n\r?\n/);
          const header = end < 0 ? text : text.slice(0, end);
          seen.set(file, {
            id: /^message-id:\s*(<[^>\r\n]+>)/im.exec(header)?.[1] ?? null,
            signed: /^dkim-signature:/im.test(header),
            bytes: st.size,
            at: st.mtimeMs,
            final,
          });
          whole &&= final;
        } finally {
          fs.closeSync(fd);
        }
      }
      // A file is named for the second its transaction began: one a few seconds older than the newest is complete.
      if (whole && newest !== undefined && secondsOf(newest) - secondsOf(s) > 3) done.add(s);
    }
  }

  function stats(): SinkStats {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new BenchError(`smtp-sink exited (${child.signalCode ?? `code ${child.exitCode}`}): ${stderr.trim()}`);
    scan();
    const ids = new Set<string>();
    let signed = 0;
    let bytes = 0;
    let first: number | null = null;
    let last: number | null = null;
    const perSecond: Record<string, number> = {};
    for (const m of seen.values()) {
      const second = Math.floor(m.at / 1000);
      perSecond[second] = (perSecond[second] ?? 0) + 1;
      if (m.id) ids.add(m.id);
      if (m.signed) signed++;
      bytes += m.bytes;
      if (first === null || m.at < first) first = m.at;
      if (last === null || m.at > last) last = m.at;
    }
    return { count: seen.size, unique: ids.size, signed, bytes, first, last, perSecond };
  }

  return {
    port,
    pid: child.pid!,
    stats: async () => stats(),
    reset: async () => {
      for (const d of fs.readdirSync(root)) fs.rmSync(path.join(root, d), { recursive: true, force: true });
      seen = new Map();
      done = new Set();
    },
    marks: async () => {
      throw new BenchError('the Postfix sink does not time marked messages (bench:emails uses the Node sink)');
    },
    cpuSeconds: () => cpuSeconds(child.pid!),
    async verifyDkim(n, publicKeyPem) {
      const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
      const files = [...seen.keys()];
      const picked = Array.from({ length: Math.min(n, files.length) }, () => files[crypto.randomInt(files.length)]!);
      const p = crypto.createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }).toString('base64');
      const resolver = async (name: string, type: string) => {
        if (type !== 'TXT' || !name.includes('._domainkey.'))
          throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
        return [[`v=DKIM1; k=rsa; p=${p}`]];
      };
      const failures: string[] = [];
      let passed = 0;
      for (const file of picked) {
        const message = messageOfDump(fs.readFileSync(file));
        const r = (await dkimVerify(message, { resolver })) as {
          results: { status: { result: string; comment?: string } }[];
        };
        const result = r.results[0]?.status;
        if (result?.result === 'pass') passed++;
        else
          failures.push(
            `${path.basename(path.dirname(file))}/${path.basename(file)}: ${result?.result ?? 'no signature'} ${result?.comment ?? ''}`.trim(),
          );
      }
      return { checked: picked.length, passed, failures };
    },
  };
}

/** A directory's name (`%Y%m%d%H%M%S`, smtp-sink's local time) as seconds since the epoch. */
const secondsOf = (name: string) =>
  new Date(
    Number(name.slice(0, 4)),
    Number(name.slice(4, 6)) - 1,
    Number(name.slice(6, 8)),
    Number(name.slice(8, 10)),
    Number(name.slice(10, 12)),
    Number(name.slice(12, 14)),
  ).getTime() / 1000;
