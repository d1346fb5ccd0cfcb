/**
 * Time zones by IANA name (Intl, no data of our own): whether a name is one, and where the hour or day that holds an
 * instant starts in a zone, as a UTC instant. Reports bucket their counts by the reader's hours and days with it.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, f);
  }
  return f;
}

/** Whether `name` is a time zone this runtime knows (`Europe/Paris`, `UTC`). */
export function isTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    formatIn(name);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time of `ms` in the zone, as if it were UTC (milliseconds dropped). */
function wallClock(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatIn(timeZone).formatToParts(ms))
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

/**
 * The start of the hour or day that holds `ms` in `timeZone`, as a UTC instant (ms). The zone's offset at that start
 * is used, so a day that begins before a DST change starts at its own midnight; a midnight a DST change skips starts
 * when the day does.
 */
export function bucketStartIn(ms: number, bucket: 'hour' | 'day', timeZone: string): number {
  const wall = wallClock(ms, timeZone);
  const w = new Date(wall);
  const start =
    bucket === 'hour'
      ? Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate(), w.getUTCHours())
      : Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate());
  const offsetNow = wall - Math.floor(ms / 1000) * 1000;
  const guess = start - offsetNow;
  const exact = start - (wallClock(guess, timeZone) - guess);
  return wallClock(exact, timeZone) === start ? exact : guess;
}
