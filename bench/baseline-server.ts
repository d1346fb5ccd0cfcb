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
import Fastify from 'fastify';
import { openDatabase, serveUntilSignal } from './bare-server.js';

const db = openDatabase('baseline-server');
db.exec(`CREATE TABLE IF NOT EXISTS forms (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
const FORM_ID = process.env.BENCH_FORM_ID || 'form_baseline';
db.prepare('INSERT OR IGNORE INTO forms (id, name, updated_at) VALUES (?, ?, ?)').run(
  FORM_ID,
  'Bench',
  new Date().toISOString(),
);
const update = db.prepare('UPDATE forms SET name = ?, updated_at = ? WHERE id = ?');

const app = Fastify({ logger: false });

app.put<{ Params: { id: string }; Body: { name?: unknown } }>('/forms/:id', async (req, reply) => {
  const name = typeof req.body?.name === 'string' ? req.body.name : 'Bench';
  const updatedAt = new Date().toISOString();
  const res = update.run(name, updatedAt, req.params.id);
  if (res.changes === 0) return reply.code(404).send({ error: 'not found' });
  return { id: req.params.id, name, updatedAt };
});

await serveUntilSignal(app, db);
