/**
 * The webhook receiver of `npm run bench:webhooks`, run in a process of its own (`node --import tsx
 * bench/webhook-receiver.ts`): an HTTP server on loopback (keep-alive) that answers every POST 200 at once, parses
 * its body and records the lag from the event's commit (`data.occurredAt`, written by the benchmark just before the
 * commit) to its arrival here. Started with an IPC channel by bench/webhooks.bench.ts, it answers:
 *   { cmd: 'stats' } → { type: 'stats', count, distinct, duplicates, unsigned, first, last, lag: { p50, p99, max } }
 *   { cmd: 'reset' } → { type: 'reset' }
 * `first`/`last` are wall-clock arrival times (ms). At start it prints `receiver listening on PORT`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

const now = () => performance.timeOrigin + performance.now();

let lags: number[] = [];
let ids = new Set<string>();
let count = 0;
let duplicates = 0;
let unsigned = 0;
let first: number | null = null;
let last: number | null = null;

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const t = now();
    res.writeHead(200, { 'content-length': '0' }).end();
    count++;
    first ??= t;
    last = t;
    const id = String(req.headers['webhook-id'] ?? '');
    if (ids.has(id)) duplicates++;
    ids.add(id);
    if (!/^v1,/.test(String(req.headers['webhook-signature'] ?? ''))) unsigned++;
    const occurredAt = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { occurredAt: string } }).data
      .occurredAt;
    lags.push(t - Date.parse(occurredAt));
  });
});
server.keepAliveTimeout = 60_000;

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

process.on('message', (msg: { cmd?: string }) => {
  if (msg?.cmd === 'stats') {
    const sorted = Float64Array.from(lags).sort();
    const arr = Array.from(sorted);
    process.send!({
      type: 'stats',
      count,
      distinct: ids.size,
      duplicates,
      unsigned,
      first,
      last,
      lag: { p50: percentile(arr, 50), p99: percentile(arr, 99), max: arr.length ? arr[arr.length - 1] : null },
    });
  } else if (msg?.cmd === 'reset') {
    lags = [];
    ids = new Set();
    count = duplicates = unsigned = 0;
    first = last = null;
    process.send!({ type: 'reset' });
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`receiver listening on ${(server.address() as AddressInfo).port}\n`);
});
