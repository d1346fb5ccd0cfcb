import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import pc from 'picocolors';
import { ConfigError } from '../config.js';
import { DomainError } from '../errors/errors.js';

/**
 * What every command shares about output (docs/cli.md): human text by default, `--json` for scripts; colours only
 * on a terminal and without NO_COLOR; errors as one line on standard error with an exit code of the table below.
 */

/** The exit codes (docs/cli.md, "Exit codes"). */
export const EXIT = {
  OK: 0,
  /** Anything unexpected: the database cannot be reached, a bug. */
  FAILURE: 1,
  /** Usage: an unknown command or option, a missing or invalid argument. */
  USAGE: 2,
  /** The environment cannot work (DATABASE_URL, SMTP_URL, …), or the command does not apply to it. */
  CONFIG: 3,
  /** No such workspace, key, user, domain, broadcast, segment or file. */
  NOT_FOUND: 4,
  /** Refused: a duplicate, a conflict (the last admin key, a state that does not allow it), invalid input. */
  REFUSED: 5,
  /** Done, but what was checked or attempted did not pass (doctor, domain verify, send-test, a failed import or broadcast). */
  CHECK_FAILED: 6,
} as const;

/** An error written for the operator, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILURE,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ConfigError) return EXIT.CONFIG;
  if (err instanceof DomainError) {
    if (err.status === 404) return EXIT.NOT_FOUND;
    if (err.status >= 500) return EXIT.FAILURE;
    return EXIT.REFUSED;
  }
  return EXIT.FAILURE;
}

/** Colours for a stream: only a terminal, and not when NO_COLOR is set to anything but an empty string (no-color.org). */
function colorsFor(stream: NodeJS.WriteStream): ReturnType<typeof pc.createColors> {
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
  return pc.createColors(Boolean(stream.isTTY) && !noColor);
}

/** Colours of standard output; `errColor` those of standard error. */
export const color = colorsFor(process.stdout);
export const errColor = colorsFor(process.stderr);

/** A status word, coloured by what it means. */
export function status(word: string): string {
  if (/^(VERIFIED|SENT|COMPLETED|active|ok|SUBSCRIBED)$/.test(word)) return color.green(word);
  if (/^(FAILED|CANCELED|revoked|fail|BOUNCED|MISSING|MISMATCH|ERROR|TIMEOUT)$/.test(word)) return color.red(word);
  if (/^(PENDING|SENDING|SCHEDULED|PAUSED|RUNNING|QUEUED|warn)$/.test(word)) return color.yellow(word);
  return word;
}

/** An RFC 3339 timestamp as `2026-11-24 10:00:00Z`; a dash for none. */
export function time(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z` : '-';
}

/** A number with thousands separators. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Columns without borders, two spaces apart, the header in bold (on a terminal): it reads well piped too. */
export function table(head: string[], rows: (string | number)[][]): string {
  const t = new Table({
    head: head.map((h) => color.bold(h)),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  t.push(...rows.map((r) => r.map(String)));
  return t
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}

/** Writes a command's result: `value` as JSON with --json, `human` otherwise. */
export function print(value: unknown, json: boolean | undefined, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** A note for the person at the terminal, on standard error (never with --json). */
export function note(text: string): void {
  process.stderr.write(`${errColor.dim(text)}\n`);
}

/**
 * A progress bar on standard error, drawn only when standard error is a terminal (null otherwise: a script or a
 * pipe gets the result alone). `format` is cli-progress's, with the payload's tokens.
 */
export function progressBar(
  format: string,
  total: number,
  payload: Record<string, unknown>,
): cliProgress.SingleBar | null {
  if (!process.stderr.isTTY) return null;
  const bar = new cliProgress.SingleBar(
    {
      format,
      stream: process.stderr,
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      fps: 10,
      formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? count(Number(v)) : String(v)),
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, payload);
  return bar;
}

/** Seconds as `1m 05s`, `42s`. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
