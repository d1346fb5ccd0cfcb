import type { Db } from '../../db/connection.js';
import { notFound, payloadTooLarge, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { normalizeEmail } from '../../lib/email.js';
import { normalizeDateTime } from '../../lib/time.js';
import {
  countTrackedEvent,
  insertTrackingEvents,
  listEvents,
  pruneEvents,
  type EventFilter,
} from './events.repository.js';
import { DEFAULT_TRACK_QUOTA, checkTrackQuota, minuteOf, type TrackQuota } from './events.quota.js';
import type { TrackEventInput } from './events.schemas.js';
import type { EventRecord } from './events.types.js';

/** Events pruned per statement: retention never runs one long delete. */
const PRUNE_BATCH = 1000;
/** Batches per run of the retention job; it runs again at once while there is more (jobs/runner.ts). */
const PRUNE_BATCHES_PER_RUN = 20;

/** The event stream's API side (docs/events.md): list a workspace's events, and retention. */
/**
 * Who a tracked event is about: the contact of an id or of a (normalised) address, in the workspace, or undefined.
 * Contacts are the Audience context's (a port: the outbox sits below it; src/app.ts wires the lookup).
 */
export interface ContactLookup {
  contactIdOf(workspaceId: string, ref: { contactId: string } | { email: string }): Promise<string | undefined>;
}

export class EventsService {
  constructor(
    private readonly db: Db,
    private readonly contacts: ContactLookup,
    private readonly quota: TrackQuota = DEFAULT_TRACK_QUOTA,
  ) {}

  async list(workspaceId: string, f: Omit<EventFilter, 'since'> & { since?: string }): Promise<EventRecord[]> {
    let since: string | undefined;
    if (f.since !== undefined) {
      since = normalizeDateTime(f.since);
      if (since === undefined)
        throw validationFailed([{ path: '/query/since', message: 'must be an RFC 3339 date-time' }]);
    }
    return listEvents(this.db.kysely, workspaceId, { ...f, since });
  }

  /**
   * Records a custom event of a contact (POST /v1/events/track): an `event.tracked` event, `data: { name,
   * properties }`, that automations with an `event` trigger of that name react to (docs/automations.md).
   */
  async track(workspaceId: string, input: TrackEventInput, now = Date.now()): Promise<{ id: string }> {
    if ((input.contactId === undefined) === (input.email === undefined)) {
      throw validationFailed([{ path: '/contactId', message: 'give either contactId or email' }]);
    }
    const properties = input.properties ?? {};
    if (Buffer.byteLength(JSON.stringify(properties), 'utf8') > 16_384)
      throw payloadTooLarge('properties must be at most 16 KiB of JSON');
    const db = this.db.kysely;
    let contactId = input.contactId;
    if (input.email !== undefined) {
      const email = normalizeEmail(input.email);
      if (!email)
        throw validationFailed([
          { path: '/email', message: 'must be a valid email address', keyword: 'format', params: { format: 'email' } },
        ]);
      contactId = await this.contacts.contactIdOf(workspaceId, { email });
    } else contactId = await this.contacts.contactIdOf(workspaceId, { contactId: contactId! });
    if (!contactId) throw notFound('contact');
    const id = newId('evt');
    const data = { name: input.name, properties };
    // The workspace's budget (events.quota.ts), counted in the transaction that writes the event: a refused one is not counted.
    const bytes = Buffer.byteLength(JSON.stringify(data), 'utf8');
    await db.transaction().execute(async (trx) => {
      if (this.quota.eventsPerMinute > 0 || this.quota.bytesPerMinute > 0) {
        checkTrackQuota(this.quota, await countTrackedEvent(trx, workspaceId, minuteOf(now), bytes), now);
      }
      await insertTrackingEvents(
        trx,
        [{ id, workspaceId, event: { type: 'event.tracked', contactId, data } }],
        new Date(now).toISOString(),
      );
    });
    return { id };
  }
}

/**
 * Deletes events older than `retentionDays` (EVENTS_RETENTION_DAYS), PRUNE_BATCH at a time, so that no statement holds
 * the database for long. Returns how many were deleted (the retention job runs it again while > 0).
 */
export async function pruneOldEvents(db: Db, retentionDays: number, now = Date.now()): Promise<number> {
  const before = new Date(now - retentionDays * 86_400_000).toISOString();
  let total = 0;
  for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
    const n = await pruneEvents(db.kysely, before, PRUNE_BATCH);
    total += n;
    if (n < PRUNE_BATCH) break;
  }
  return total;
}
