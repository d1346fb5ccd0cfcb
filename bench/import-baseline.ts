/**
 * The baseline for bench/import.bench.ts: what reading the CSV and writing its rows costs with nothing on
 * top. It parses the file with csv-parse (streaming, `for await`), and inserts every row with prepared
 * statements into a fresh better-sqlite3 file, 1000 rows per transaction. The database is opened with the same
 * pragmas as src/db/connection.ts (WAL, synchronous=NORMAL, foreign_keys=ON, busy_timeout=5000) and holds
 * Formcast's own schema (the benchmark runs the migrations on it before this starts), so that both sides
 * maintain the same tables and B-trees. No validation, no email normalisation (lower-casing only), no HTTP.
 *
 * Two modes:
 * - `events` (the goal's): the inserts Formcast makes for a new SUBSCRIBED contact, i.e. the contact row and
 *   its two events, `contact.created` and `contact.subscribed`, with the same data (docs/events.md). Since
 *   events are written in the transaction of their change, every imported row writes three rows. The events are
 *   written dispatched, as Formcast writes them on SQLite when no webhook endpoint listens.
 * - `contacts`: the contact row only, as Formcast imported before it wrote events (the baseline of the
 *   figures in issue 13, kept for comparison).
 *
 * Usage: node --import tsx bench/import-baseline.ts <file.csv> <migrated database file> [events|contacts]
 * Prints one JSON line: { rows, ms, cpuMs, peakRssMb } (CPU: user + system from the start of the import; peak RSS =
 * VmHWM of this process).
 */
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { parse } from 'csv-parse';

const [file, dbFile, mode = 'events'] = process.argv.slice(2);
if (!file || !dbFile || (mode !== 'events' && mode !== 'contacts')) {
  process.stderr.write('usage: import-baseline.ts <file.csv> <migrated database file> [events|contacts]\n');
  process.exit(2);
}

const BATCH = 1000;
const WORKSPACE = 'ws_baseline';
let seq = 0; // ids in insertion order, like the ULIDs the service issues
const nextId = (prefix: string) => `${prefix}_${String(++seq).padStart(26, '0')}`;
const started = performance.now();
const cpuStart = process.cpuUsage();

const db = new SQLite(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.prepare('INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)').run(
  WORKSPACE,
  'baseline',
  new Date().toISOString(),
);
const insertContact =
  db.prepare(`INSERT INTO contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
  VALUES (?, '${WORKSPACE}', ?, ?, ?, ?, 'SUBSCRIBED', ?, ?)`);
// dispatched = 1: what Formcast writes on SQLite for a workspace with no enabled webhook endpoint (nothing for the
// fan-out to take; src/outbox/events/events.repository.ts), so both sides write the same rows and index entries.
const insertEvent = db.prepare(`INSERT INTO events (id, workspace_id, type, occurred_at, contact_id, data, dispatched)
  VALUES (?, '${WORKSPACE}', ?, ?, ?, ?, 1)`);
const withEvents = mode === 'events';
const insertBatch = db.transaction((rows: string[][], columns: string[], now: string) => {
  for (const r of rows) {
    const properties: Record<string, string> = {};
    for (let i = 3; i < columns.length; i++) properties[columns[i]!] = r[i]!;
    const id = nextId('ct');
    const email = r[0]!.toLowerCase();
    insertContact.run(id, email, r[1]!, r[2]!, JSON.stringify(properties), now, now);
    if (withEvents) {
      insertEvent.run(
        nextId('evt'),
        'contact.created',
        now,
        id,
        JSON.stringify({ email, status: 'SUBSCRIBED', source: 'import' }),
      );
      insertEvent.run(nextId('evt'), 'contact.subscribed', now, id, JSON.stringify({ email, source: 'import' }));
    }
  }
});

let columns: string[] | undefined;
let batch: string[][] = [];
let rows = 0;
for await (const record of fs.createReadStream(file).pipe(parse())) {
  if (!columns) {
    columns = record as string[];
    continue;
  }
  batch.push(record as string[]);
  rows++;
  if (batch.length === BATCH) {
    insertBatch(batch, columns, new Date().toISOString());
    batch = [];
  }
}
if (batch.length) insertBatch(batch, columns!, new Date().toISOString());
db.close();

const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
const cpu = process.cpuUsage(cpuStart);
process.stdout.write(
  `${JSON.stringify({ rows, ms: Math.round(performance.now() - started), cpuMs: Math.round((cpu.user + cpu.system) / 1000), peakRssMb: hwm ? Math.round(Number(hwm[1]) / 1024) : null })}\n`,
);
