import { DomainError } from '../../errors/errors.js';

/**
 * The per-workspace budget of POST /v1/events/track (docs/automations.md, "Custom events"): events and bytes of event
 * data a minute, counted in the database (`track_quota`, in the transaction that writes the event) so that the
 * budget holds across processes. Without it one key could write a 16 KiB event per request as fast as the server
 * answers (300 MB in 20 s).
 */
export interface TrackQuota {
  /** Events a minute per workspace; 0: no limit (TRACK_EVENTS_PER_MINUTE). */
  eventsPerMinute: number;
  /** Bytes of event data (the name and properties as JSON) a minute per workspace; 0: no limit (TRACK_BYTES_PER_MINUTE). */
  bytesPerMinute: number;
}

export const DEFAULT_TRACK_QUOTA: TrackQuota = { eventsPerMinute: 600, bytesPerMinute: 1024 * 1024 };

/** The minute `now` falls in (Unix time in minutes): the quota's window. */
export const minuteOf = (now: number) => Math.floor(now / 60_000);

/** 429 when this minute's use (this event included) is over a budget; the headers say when the next minute starts. */
export function checkTrackQuota(quota: TrackQuota, used: { events: number; bytes: number }, now: number): void {
  const overEvents = quota.eventsPerMinute > 0 && used.events > quota.eventsPerMinute;
  const overBytes = quota.bytesPerMinute > 0 && used.bytes > quota.bytesPerMinute;
  if (!overEvents && !overBytes) return;
  const reset = String(Math.max(1, Math.ceil(((minuteOf(now) + 1) * 60_000 - now) / 1000)));
  const detail = overEvents
    ? `this workspace may track ${quota.eventsPerMinute} events a minute; retry after ${reset} seconds`
    : `this workspace may track ${quota.bytesPerMinute} bytes of event data a minute; retry after ${reset} seconds`;
  throw new DomainError('rate_limited', detail, {
    headers: {
      'retry-after': reset,
      'ratelimit-limit': String(overEvents ? quota.eventsPerMinute : quota.bytesPerMinute),
      'ratelimit-remaining': '0',
      'ratelimit-reset': reset,
    },
  });
}
