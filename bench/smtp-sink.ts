/**
 * The SMTP sink of `npm run bench:send`, run in a process of its own (`node --import tsx bench/smtp-sink.ts`):
 * an smtp-server on loopback (no STARTTLS, no AUTH) that accepts every message, reads and discards it, and
 * counts. Started with an IPC channel by bench/send.bench.ts, it answers:
 *   { cmd: 'stats' } → { type: 'stats', count, unique, signed, bytes, first, last, perSecond, connections }
 *   { cmd: 'reset' } → { type: 'reset' } (counters back to zero, marks forgotten)
 *   { cmd: 'marks' } → { type: 'marks', marks: { <X-Bench-Mark value>: arrival ms } } (the first arrival of each)
 * `first`/`last` are the wall-clock arrival times (ms, fractional) of the first and last complete message;
 * `signed` counts messages whose header carries a DKIM-Signature, `unique` the distinct Message-IDs. At start it prints `sink listening on PORT`.
 * Without IPC (run by hand), it prints its stats every 5 s. PORT (default 0: any free port) sets the port.
 */
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

const now = () => performance.timeOrigin + performance.now();

let count = 0;
let signed = 0;
let bytes = 0;
let first: number | null = null;
let last: number | null = null;
/** Messages by the wall-clock second they arrived in: the rate over time (issue 36, goal 3). */
let perSecond: Record<string, number> = {};
/** Message-IDs seen: a message that arrives twice (a worker died after sending it, before recording it) counts once. */
const ids = new Set<string>();
/** Arrival times of the messages marked with an `X-Bench-Mark` header, by its value (bench:emails' receipts). */
const marks = new Map<string, number>();

const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  // More than any pool the benchmark opens.
  maxClients: 1000,
  onData(stream, _session, callback) {
    let head = '';
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 8192 && !head.includes('\r\n\r\n'))
        head += chunk.toString('latin1', 0, Math.min(chunk.length, 8192));
      size += chunk.length;
    });
    stream.on('error', () => {});
    stream.on('end', () => {
      const t = now();
      count++;
      bytes += size;
      const header = head.split('\r\n\r\n')[0]!;
      if (/^dkim-signature:/im.test(header)) signed++;
      const id = /^message-id:\s*(<[^>\r\n]+>)/im.exec(header)?.[1];
      // A copy: the match is a slice of the message's text, and V8 keeps the whole of it alive for the slice (~4.5 KB a
      // message: the sink ran out of its 4 GB heap after ~900,000 messages of a million-recipient run).
      if (id) ids.add(Buffer.from(id, 'latin1').toString('latin1'));
      const mark = /^x-bench-mark:[ \t]*([^\r\n]+)/im.exec(header)?.[1];
      if (mark !== undefined && !marks.has(mark)) marks.set(mark, t);
      first ??= t;
      last = t;
      const second = Math.floor(t / 1000);
      perSecond[second] = (perSecond[second] ?? 0) + 1;
      callback(null, 'OK');
    });
  },
});
server.on('error', () => {});

const stats = () => ({
  type: 'stats',
  count,
  unique: ids.size,
  signed,
  bytes,
  first,
  last,
  perSecond,
  connections: (server as unknown as { connections: Set<unknown> }).connections.size,
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.server.address() as AddressInfo;
  process.stdout.write(`sink listening on ${port}\n`);
});

if (process.send) {
  process.on('message', (msg: { cmd?: string }) => {
    if (msg?.cmd === 'stats') process.send!(stats());
    else if (msg?.cmd === 'reset') {
      count = 0;
      signed = 0;
      bytes = 0;
      first = null;
      last = null;
      perSecond = {};
      ids.clear();
      marks.clear();
      process.send!({ type: 'reset' });
    } else if (msg?.cmd === 'marks') process.send!({ type: 'marks', marks: Object.fromEntries(marks) });
  });
  // The benchmark went away: so do we.
  process.on('disconnect', () => process.exit(0));
} else {
  setInterval(() => process.stdout.write(`${JSON.stringify(stats())}\n`), 5000).unref();
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
