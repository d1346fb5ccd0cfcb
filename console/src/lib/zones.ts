/**
 * Time zones for pickers (contact page, workspace settings): every IANA zone the browser knows, by name. The server
 * checks each again with Intl (docs/contacts.md, "Time zone").
 */
let zones: string[] | undefined;

/** The browser's IANA zone names, UTC first. */
export function timeZones(): string[] {
  if (!zones) {
    let names: string[];
    try {
      names = Intl.supportedValuesOf('timeZone');
    } catch {
      names = [];
    }
    zones = ['UTC', ...names.filter((z) => z !== 'UTC')];
  }
  return zones;
}

/** Picker options: the zones (with `current` kept even if this browser does not list it), and an optional empty choice. */
export function timeZoneOptions(current: string, empty?: string): { value: string; label: string }[] {
  const names = timeZones();
  const list = current && !names.includes(current) ? [current, ...names] : names;
  return [
    ...(empty !== undefined ? [{ value: '', label: empty }] : []),
    ...list.map((z) => ({ value: z, label: z.replace(/_/g, ' ') })),
  ];
}

/** The browser's own zone (a sensible first guess). */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** An instant as the wall-clock time of a zone, e.g. "Sun 28 Mar, 09:00". */
export function timeIn(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date(iso));
  } catch {
    return iso;
  }
}

/** The wall-clock time (YYYY-MM-DDTHH:mm, as a datetime-local input holds it) that an instant shows in a zone. */
export function wallIn(ms: number, timeZone: string): string {
  const parts: Record<string, string> = {};
  for (const p of new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(ms))
    parts[p.type] = p.value;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/**
 * The instant at which a zone's clocks show `wall` (a datetime-local value), or null. Local-time sending sends that
 * instant as `sendAt`: the service reads it back in the workspace's zone (docs/sending.md).
 */
export function instantIn(wall: string, timeZone: string): Date | null {
  const target = Date.parse(`${wall}Z`);
  if (!wall || Number.isNaN(target)) return null;
  const offset = (ms: number) => Date.parse(`${wallIn(ms, timeZone)}Z`) - Math.floor(ms / 60_000) * 60_000;
  const guesses = [target - offset(target - 86_400_000), target - offset(target + 86_400_000)];
  const exact = guesses.filter((t) => wallIn(t, timeZone) === wall);
  return new Date(exact.length ? Math.min(...exact) : guesses[0]!);
}
