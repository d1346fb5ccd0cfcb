// The baseline of bench/startup.bench.ts: the least a Node HTTP service on SQLite does to start. A bare Fastify app
// and a better-sqlite3 file opened with Formcast's pragmas, one /readyz route running `select 1`; plain JavaScript,
// no TypeScript loader. Environment: DATABASE_URL (a SQLite file), PORT (default 0), HOST (default 127.0.0.1).
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const db = new Database(process.env.DATABASE_URL ?? ':memory:');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
const ping = db.prepare('select 1');
const app = Fastify({ logger: false });
app.get('/readyz', () => ({ status: 'ready', one: ping.pluck().get() }));
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
