/**
 * The baseline for bench/import.bench.ts: what reading the CSV and writing its rows costs with nothing on
 * top. It parses the file with csv-parse (streaming, `for await`), and inserts every row with one prepared
 * INSERT into a fresh better-sqlite3 file, 1000 rows per transaction. The database is opened with the same
 * pragmas as src/db/connection.ts (WAL, synchronous=NORMAL, foreign_keys=ON, busy_timeout=5000) and the
 * table has the shape and indexes of `contacts` (migration 0002), so that both sides maintain the same
 * B-trees. No validation, no email normalisation, no HTTP.
 *
 * Usage: node --import tsx bench/import-baseline.ts <file.csv> <database file>
 * Prints one JSON line: { rows, ms, peakRssMb } (peak RSS = VmHWM of this process).
 */
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { parse } from 'csv-parse';

const [file, dbFile] = process.argv.slice(2);
if (!file || !dbFile) {
  process.stderr.write('usage: import-baseline.ts <file.csv> <database file>\n');
  process.exit(2);
}

const BATCH = 1000;
let seq = 0; // ids in insertion order, like the ULIDs the service issues
const started = performance.now();

const db = new SQLite(dbFile);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.exec(`
  CREATE TABLE contacts (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, email TEXT NOT NULL, first_name TEXT, last_name TEXT,
    properties TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    CONSTRAINT contacts_workspace_email UNIQUE (workspace_id, email)
  );
  CREATE INDEX contacts_workspace ON contacts (workspace_id, id);
  CREATE INDEX contacts_workspace_status ON contacts (workspace_id, status, id);
`);
const insert = db.prepare(`INSERT INTO contacts (id, workspace_id, email, first_name, last_name, properties, status, created_at, updated_at)
  VALUES (?, 'ws_baseline', ?, ?, ?, ?, 'SUBSCRIBED', ?, ?)`);
const insertBatch = db.transaction((rows: string[][], columns: string[], now: string) => {
  for (const r of rows) {
    const properties: Record<string, string> = {};
    for (let i = 3; i < columns.length; i++) properties[columns[i]!] = r[i]!;
    insert.run(`ct_${String(++seq).padStart(26, "0")}`, r[0]!.toLowerCase(), r[1]!, r[2]!, JSON.stringify(properties), now, now);
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
process.stdout.write(`${JSON.stringify({ rows, ms: Math.round(performance.now() - started), peakRssMb: hwm ? Math.round(Number(hwm[1]) / 1024) : null })}\n`);
