import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Command, Option } from 'commander';
import type { ImportFormat, ImportJob } from '../../audience/contacts/contacts.schemas.js';
import { jsonOption, requireWorkspace, withDb, workspaceOption } from '../context.js';
import { CliError, color, count, EXIT, note, print, progressBar, status, table } from '../output.js';

/** The format of a file by its extension: .ndjson, .jsonl and .json are NDJSON, anything else CSV. */
function formatOf(file: string, given: string | undefined): ImportFormat {
  if (given) return given.toUpperCase() as ImportFormat;
  return /\.(ndjson|jsonl|json)$/i.test(file) ? 'NDJSON' : 'CSV';
}

/**
 * The file as the import service reads it, counting as it goes: the bytes (the bar's progress and its ETA) and the
 * lines (the rows per second shown, an estimate: the service alone parses the file and its result is what counts).
 */
function counting(onChunk: (bytes: number, lines: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let lines = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      onChunk(chunk.length, lines);
      done(null, chunk);
    },
  });
}

function summary(job: ImportJob, seconds: number): string {
  const lines = [
    `import ${job.id} ${status(job.status)}: ${count(job.total)} rows in ${seconds.toFixed(1)} s: ${count(job.created)} created, ${count(job.updated)} updated, ${count(job.skipped)} skipped${job.suppressed ? `, ${count(job.suppressed)} kept their status (suppressed address)` : ''}`,
  ];
  if (job.error) lines.push(color.red(`stopped: ${job.error}`));
  if (job.errors.length) {
    lines.push(
      '',
      color.bold(`Rejected rows (${count(job.skipped)}):`),
      table(
        ['LINE', 'REASON'],
        job.errors.map((e) => [e.line, e.reason]),
      ),
    );
    if (job.errorsTruncated) lines.push(`… and ${count(job.errorsTruncated)} more, not listed`);
  }
  return lines.join('\n');
}

/** contacts import | export. */
export function registerContacts(program: Command): void {
  const contacts = program.command('contacts').description('import and export contacts');

  contacts
    .command('import')
    .description(
      'import contacts from a CSV or NDJSON file (creates or updates by email), with a progress bar on a terminal',
    )
    .argument('<file>', 'the file to import')
    .addOption(workspaceOption())
    .addOption(
      new Option(
        '--format <format>',
        "the file's format (default: by extension: .ndjson/.jsonl are NDJSON, else CSV)",
      ).choices(['csv', 'ndjson']),
    )
    .option('--columns <map>', 'CSV: map columns to fields, e.g. "E-Mail=email,Vorname=firstName" (docs/contacts.md)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nRows the service rejects are listed at the end with their line; the import goes on past them.\nExit code 6 when the import stopped (a malformed file); the rows before it are kept.\n\nExample:\n  formcast contacts import subscribers.csv --workspace ws_01JD…',
    )
    .action(async (file: string, opts: { workspace: string; format?: string; columns?: string; json?: boolean }) => {
      let size: number;
      try {
        const stat = fs.statSync(file);
        if (!stat.isFile()) throw new Error('not a file');
        size = stat.size;
      } catch {
        throw new CliError(`cannot read ${path.resolve(file)}: no such file`, EXIT.NOT_FOUND);
      }
      const format = formatOf(file, opts.format);
      const started = Date.now();
      const job = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        const bar = opts.json
          ? null
          : progressBar(
              `importing ${path.basename(file)} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_formatted}`,
              size,
              { rows: '0', rate: '0' },
            );
        let bytes = 0;
        let lines = 0;
        const body = fs.createReadStream(file).pipe(
          counting((b, l) => {
            bytes += b;
            lines += l;
            const rows = Math.max(0, lines - (format === 'CSV' ? 1 : 0));
            const elapsed = Math.max(0.001, (Date.now() - started) / 1000);
            bar?.update(bytes, { rows: count(rows), rate: count(Math.round(rows / elapsed)) });
          }),
        );
        try {
          return await ctx.services.contacts.importContacts(opts.workspace, format, body, size, {
            columns: opts.columns,
          });
        } finally {
          bar?.update(bytes);
          bar?.stop();
        }
      });
      print(job, opts.json, summary(job, (Date.now() - started) / 1000));
      if (job.status === 'FAILED') process.exitCode = EXIT.CHECK_FAILED;
    });

  contacts
    .command('export')
    .description("export contacts as CSV (every contact, or a segment's), streamed to standard output or a file")
    .addOption(workspaceOption())
    .option('--segment <id>', "only this segment's contacts")
    .option('--out <file>', 'write to this file instead of standard output')
    .addOption(new Option('--json', 'with --out: print the summary as JSON'))
    .addHelpText(
      'after',
      '\nColumns: id, email, firstName, lastName, status, suppressed, properties (JSON), createdAt, updatedAt.\n--json prints a summary as JSON (with --out).\n\nExample:\n  formcast contacts export --workspace ws_01JD… --segment seg_01JD… --out vip.csv',
    )
    .action(async (opts: { workspace: string; segment?: string; out?: string; json?: boolean }) => {
      let bytes = 0;
      await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        const { chunks } = await ctx.services.contacts.exportCsv(opts.workspace, opts.segment);
        const source = Readable.from(
          (async function* () {
            for await (const chunk of chunks) {
              const buf = Buffer.from(chunk, 'utf8');
              bytes += buf.length;
              yield buf;
            }
          })(),
        );
        if (!opts.out) {
          await pipeline(source, process.stdout, { end: false });
          return;
        }
        // Whole or not at all: written beside the target, renamed when complete.
        const tmp = `${opts.out}.partial`;
        try {
          await pipeline(source, fs.createWriteStream(tmp));
          fs.renameSync(tmp, opts.out);
        } catch (err) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
      });
      if (opts.out)
        print(
          { file: path.resolve(opts.out), bytes },
          opts.json,
          `wrote ${path.resolve(opts.out)} (${count(bytes)} bytes)`,
        );
      else if (!opts.json && process.stdout.isTTY) note(`${count(bytes)} bytes of CSV`);
    });
}
