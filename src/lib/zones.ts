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

/**
 * The zone's canonical spelling (`europe/berlin` → `Europe/Berlin`) as Intl resolves it, or undefined when `name` is
 * no zone this runtime knows. What the API stores for a contact's or a workspace's zone.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!isTimeZone(name)) return undefined;
  return formatIn(name).resolvedOptions().timeZone;
}

/** A wall-clock time as written in ISO 8601 without an offset: `2026-03-29T09:00:00`. */
export type WallTime = string;

/** The wall-clock time that instant `ms` shows in the zone (seconds precision). */
export function wallTimeIn(ms: number, timeZone: string): WallTime {
  return new Date(wallClock(ms, timeZone)).toISOString().slice(0, 19);
}

/**
 * The UTC instant (ms) at which the zone's clocks show `wall` (`YYYY-MM-DDTHH:mm[:ss]`), through Intl alone (no
 * offset table of our own). DST resolved as Temporal's `compatible` does: a time that occurs twice (clocks set back)
 * is the earlier instant; a time that never occurs (clocks set forward) is moved forward by the gap (02:30 on the day
 * Berlin skips 02:00–03:00 is 03:30 CEST).
 */
export function instantOfWallTime(wall: WallTime, timeZone: string): number {
  const target = Date.parse(`${wall.length === 16 ? `${wall}:00` : wall}Z`);
  if (Number.isNaN(target)) throw new RangeError(`not a wall-clock time: ${wall}`);
  const offsetAt = (ms: number) => wallClock(ms, timeZone) - Math.floor(ms / 1000) * 1000;
  // The offsets a day either side: a zone changes its offset at most once in between.
  const before = offsetAt(target - 86_400_000);
  const after = offsetAt(target + 86_400_000);
  const candidates = [target - before, target - after].filter((t) => wallClock(t, timeZone) === target);
  if (candidates.length) return Math.min(...candidates);
  // A skipped time: with the offset before the change, the instant that many minutes after it.
  return target - before;
}
