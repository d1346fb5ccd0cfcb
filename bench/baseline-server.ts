/**
 * The baseline for bench/api.bench.ts: what one HTTP round trip plus one SQLite write costs with no
 * framework features on top. A bare Fastify app (no schemas, no auth, no logger, no hooks) and a
 * better-sqlite3 database opened with the same pragmas as src/db/connection.ts; `PUT /forms/:id` runs
 * one prepared UPDATE per request and answers a small JSON object.
 *
 * Environment: DATABASE_URL (a SQLite file path, required), PORT (default 0), HOST (default 127.0.0.1),
 * BENCH_FORM_ID (the id of the one row, default `form_baseline`).
 * Prints `listening on http://HOST:PORT` on stdout once ready, like `formcast serve`.
 */
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';

const file = process.env.DATABASE_URL;
if (!file) {
  process.stderr.write('baseline-server: DATABASE_URL (a SQLite file path) is required\n');
  process.exit(1);
}
const host = process.env.HOST || '127.0.0.1';
const port = Number(process.env.PORT || 0);

const db = new SQLite(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.exec(`CREATE TABLE IF NOT EXISTS forms (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
const FORM_ID = process.env.BENCH_FORM_ID || 'form_baseline';
db.prepare('INSERT OR IGNORE INTO forms (id, name, updated_at) VALUES (?, ?, ?)').run(FORM_ID, 'Bench', new Date().toISOString());
const update = db.prepare('UPDATE forms SET name = ?, updated_at = ? WHERE id = ?');

const app = Fastify({ logger: false });

app.put<{ Params: { id: string }; Body: { name?: unknown } }>('/forms/:id', async (req, reply) => {
  const name = typeof req.body?.name === 'string' ? req.body.name : 'Bench';
  const updatedAt = new Date().toISOString();
  const res = update.run(name, updatedAt, req.params.id);
  if (res.changes === 0) return reply.code(404).send({ error: 'not found' });
  return { id: req.params.id, name, updatedAt };
});

await app.listen({ port, host });
const address = app.server.address();
const actualPort = typeof address === 'object' && address ? address.port : port;
process.stdout.write(`listening on http://${host}:${actualPort}\n`);

let closing = false;
const shutdown = () => {
  if (closing) process.exit(1);
  closing = true;
  app.close().then(() => {
    db.close();
    process.exit(0);
  }, () => process.exit(1));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
