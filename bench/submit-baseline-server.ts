/**
 * The baseline for bench/submit.bench.ts: what one form POST costs with nothing on top. A bare Fastify app (no
 * schemas, no logger, no hooks, no rate limit) on a better-sqlite3 file opened with the pragmas of
 * src/db/connection.ts. `POST /f/:slug` reads the form-encoded (or JSON) body, inserts one row (the submission:
 * its id, the slug, the email, the first name and the body as JSON) with a prepared statement, and answers a
 * small HTML page (or `{ ok: true }` to a JSON request), as Formcast's hosted page and embed do.
 *
 * Environment: DATABASE_URL (a SQLite file path, required), PORT (default 0), HOST (default 127.0.0.1).
 * Prints `listening on http://HOST:PORT` on stdout once ready, like `formcast serve`.
 */
import Fastify from 'fastify';
import { parse as parseQuery } from 'fast-querystring';
import { openDatabase, serveUntilSignal } from './bare-server.js';

const db = openDatabase('submit-baseline-server');
db.exec(`CREATE TABLE IF NOT EXISTS submissions (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL,
  email TEXT,
  first_name TEXT,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
)`);
const insert = db.prepare('INSERT INTO submissions (slug, email, first_name, data, created_at) VALUES (?, ?, ?, ?, ?)');

const app = Fastify({ logger: false });
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
  done(null, parseQuery(body as string)),
);

const PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Thanks</title></head><body><p>Thank you for signing up.</p></body></html>';

app.post<{ Params: { slug: string }; Body: Record<string, unknown> | undefined }>('/f/:slug', async (req, reply) => {
  const body = req.body ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  insert.run(req.params.slug, text(body.email), text(body.first_name), JSON.stringify(body), new Date().toISOString());
  if ((req.headers.accept ?? '').includes('application/json'))
    return { ok: true, message: 'Thank you for signing up.' };
  return reply.type('text/html; charset=utf-8').send(PAGE);
});

await serveUntilSignal(app, db);
