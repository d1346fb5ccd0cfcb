import {
  audience,
  audienceIds,
  contactEmail,
  CONTACT_COLUMNS,
  getTopic,
  nextSlice,
  noteEngagement,
  suppressionsOf,
  toContactRecord,
  type IdRange,
} from '../audience/index.js';
import { getWorkspace } from '../access/index.js';
import { isForeignKeyViolation, type Db } from '../db/connection.js';
import { BatchWriter } from '../db/batch-writer.js';
import { GroupCommit } from '../db/group-commit.js';
import { newId } from '../lib/ids.js';
import { parseMailbox } from '../lib/email.js';
import { getSigningKey } from '../mail-setup/index.js';
import { insertTrackingEvents, recordEvent } from '../outbox/index.js';
import { recordBounce, reportRules, type ReportRules } from '../sending/bounces/bounces.service.js';
import { tripIfOver, type FinalFloor } from '../sending/broadcasts/broadcasts.breaker.js';
import {
  getBroadcast,
  getBroadcastsForSending,
  sendingMaterializedBroadcasts,
} from '../sending/broadcasts/broadcasts.repository.js';
import * as broadcasts from '../sending/broadcasts/broadcasts.writer.js';
import { abBatch, selectTestShare, withVariant, type AbSelection } from '../sending/broadcasts/broadcasts.ab.js';
import type { Broadcast } from '../sending/broadcasts/broadcasts.schemas.js';
import { AudienceReader, type AudienceBatch } from '../sending/deliveries/audience-reader.js';
import { withLocalReleases } from '../sending/deliveries/local-time.js';
import {
  handOff,
  handOffMany,
  insertDeliveries,
  insertLeasedRecipients,
  type MaterializedRecipient,
} from '../sending/deliveries/deliveries.batch-sql.js';
import { recordOutcome, recordSentMany } from '../sending/deliveries/deliveries.outcomes.js';
import { emailPartsForSending, emailsPartsForSending } from '../sending/emails/emails.repository.js';
import { claimDeliveries, countQueued, renewLeases } from '../sending/deliveries/deliveries.repository.js';
import type {
  AttemptOutcome,
  BroadcastFinish,
  ClaimedDelivery,
  DeliveryStore,
  MaterializationJob,
  Recipient,
  SendingBroadcast,
  TransactionalParts,
} from '../sending/deliveries/store.js';

/**
 * The delivery engine's port (src/sending/deliveries/store.ts) over the database: its adapter, in the composition
 * layer because it reaches across contexts (as listmonk's cmd/manager_store.go implements internal/manager's Store).
 * The broadcast's side is the broadcasts writer's (broadcasts.writer.ts), a delivery's the deliveries feature's
 * (outcomes, batch SQL, claims), a bounce the bounces feature's; contacts, suppressions and topics are the audience's,
 * the signing key mail-setup's, the workspace access's, the events the outbox's. Built where the pipeline is
 * (src/jobs/jobs.ts; the tests' and benchmarks' helpers).
 */

/**
 * settle() weighs a broadcast for the circuit breaker (a count of its final deliveries, with their bounces and
 * complaints) after every batch while it has few final deliveries, then once this process has recorded another
 * WEIGH_AFTER_SHARE of that count since the last weighing, or BREAKER_EVERY_MS have passed. A count of the final
 * deliveries reads an entry of each: counted after every batch, a large broadcast spent more on counting than on
 * sending (bench/README.md, "Sending: design notes"). The last count is also kept as a floor of the next ones (a final
 * delivery stays final): a weighing counts the hard bounces and complaints (few rows) and weighs them against the floor,
 * and counts the final deliveries again only when a rate could be over its limit (tripIfOver). A healthy broadcast's
 * floor is counted again each time its bounces reach the limit's share of it, rarely; at a million recipients the
 * counts of the minute's weighing cost SQLite's one thread up to a second (bench/README.md, "The breaker's count").
 */
const WEIGH_ALWAYS_BELOW = 2_000;
const WEIGH_AFTER_SHARE = 0.1;
const BREAKER_EVERY_MS = 60_000;

/**
 * prefetchForSending reads a batch's emails at most this many at a time, each read's ids made up to the next of these
 * counts (the last id repeated): an `in (…)` list of every length would be a statement of its own in SQLite's cache of
 * prepared statements (sqlite-dialect.ts), pushing the API's out. 500 ids is far within the bound parameters a query
 * allows (SQLite 32,766, PostgreSQL 65,535).
 */
const PREFETCH_SIZES = [8, 32, 128, 500] as const;
const PREFETCH_CHUNK = PREFETCH_SIZES[PREFETCH_SIZES.length - 1]!;

/** The batch memo's key of what prefetchForSending read ahead for one email. */
const readAheadKey = (kind: 'broadcast' | 'parts', workspaceId: string, id: string) =>
  `${kind}\u0000${workspaceId}\u0000${id}`;

/** `ids` (1 to PREFETCH_CHUNK of them) made up to the next of PREFETCH_SIZES with its last id. */
function padIds(ids: readonly string[]): string[] {
  const size = PREFETCH_SIZES.find((n) => n >= ids.length) ?? ids.length;
  return [...ids, ...Array<string>(size - ids.length).fill(ids[ids.length - 1]!)];
}

export type StoreRules = ReportRules;

/** The positions of `items` in the order of their deliveries' ids. */
function byId(items: readonly { d: ClaimedDelivery }[]): number[] {
  return items
    .map((_, i) => i)
    .sort((a, b) => (items[a]!.d.id < items[b]!.d.id ? -1 : items[a]!.d.id > items[b]!.d.id ? 1 : 0));
}

export const DEFAULT_STORE_RULES: StoreRules = reportRules();

/** A write of every message: its hand-off, or its "sent" outcome. */
type PerMessageWrite =
  | { kind: 'handOff'; d: ClaimedDelivery; owner: string; now: string }
  | { kind: 'sent'; d: ClaimedDelivery; outcome: Extract<AttemptOutcome, { op: 'sent' }>; now: string };

/**
 * How long a batch of hand-offs and outcomes waits for more: on SQLite 3 ms (a commit costs more than a delivery's
 * change; waiting 3 ms made about a third of the commits, longer waits slowed the lanes down). On PostgreSQL, none: a
 * batch starts at the end of the turn, the units that come while it is written make the next one, and a lane's wait is
 * the rate's bound there. The measurements: bench/README.md, "Sending: design notes" (and "Fewer, larger commits",
 * 2026-12-01: a commit's cost follows the pages it writes, so fewer commits saved little).
 */
const WRITE_LINGER_MS = { sqlite: 3, postgres: 0 } as const;

export class SqlDeliveryStore implements DeliveryStore {
  /**
   * The last weighing of each broadcast: when, the final deliveries it knew of (counted, or its floor and this
   * process's outcomes since: what the next weighing is rationed by), and the last count, a floor of the counts to come.
   */
  private readonly weighed = new Map<
    string,
    { at: number; final: number; recorded: number; floor: FinalFloor & { recorded: number } }
  >();
  /** Outcomes this process recorded, per broadcast (what settle() weighs the next count against). */
  private readonly recorded = new Map<string, number>();
  /**
   * The two writes of every message, the hand-off and the "sent" outcome (with its email.sent event), are batched
   * (db/batch-writer.ts), both kinds by one writer: those of the messages in flight share one transaction and one
   * commit, and the events of a batch are one INSERT. A commit, and the statements around it, cost
   * more than one delivery's change (on SQLite ~0.25 ms a message when every write had a commit of its own; bench/README.md,
   * "bench:send"). A batch waits WRITE_LINGER_MS (SQLite) for more units; the
   * lanes that wait meanwhile are few against the SMTP connections, so the rate does not suffer. The other outcomes
   * (retries, failures, bounces: few) are group-committed on SQLite, each in a savepoint of its own
   * (db/group-commit.ts), since a bounce changes the contact and the suppression list too.
   * On PostgreSQL each kind of a batch is one statement (handOffMany, recordSentMany): a statement per delivery was a round
   * trip the writer waited for, one after the other, and bounded the rate (bench/README.md, "bench:send").
   */
  private readonly perMessage: BatchWriter<PerMessageWrite, boolean>;
  private readonly writes: GroupCommit;

  constructor(
    private readonly db: Db,
    private readonly rules: StoreRules = DEFAULT_STORE_RULES,
  ) {
    this.writes = new GroupCommit(db);
    // Rows are written in the order of their ids (byId): two transactions that change several deliveries each lock
    // them in one order, which avoids most deadlocks on PostgreSQL; one that still happens is retried (BatchWriter).
    this.perMessage = new BatchWriter(
      db,
      async (trx, items) => {
        const out: boolean[] = new Array<boolean>(items.length);
        const events = [];
        // PostgreSQL: each kind in one statement (a round trip per row otherwise), unless a delivery is in the batch twice.
        const batched =
          db.dialect === 'postgres' && items.length > 1 && new Set(items.map((w) => w.d.id)).size === items.length;
        const handOffs = batched ? items.filter((w) => w.kind === 'handOff') : [];
        const handed = handOffs.length
          ? await handOffMany(
              trx,
              handOffs.map((w) => ({
                workspaceId: w.d.workspaceId,
                id: w.d.id,
                owner: w.owner,
                attempts: w.d.attempts,
                now: w.now,
              })),
            )
          : new Set<string>();
        const sents = batched
          ? items.filter((w): w is Extract<PerMessageWrite, { kind: 'sent' }> => w.kind === 'sent')
          : [];
        const sent = sents.length
          ? await recordSentMany(
              trx,
              sents.map((w) => ({
                workspaceId: w.d.workspaceId,
                id: w.d.id,
                now: w.now,
                messageId: w.outcome.messageId,
                response: w.outcome.response,
              })),
            )
          : new Set<string>();
        for (const i of byId(items)) {
          const w = items[i]!;
          if (w.kind === 'handOff') {
            out[i] = batched
              ? handed.has(`${w.d.id}:${w.d.attempts}`)
              : await handOff(trx, w.d.workspaceId, w.d.id, w.owner, w.d.attempts, w.now);
            continue;
          }
          // An outcome is recorded once: a delivery no longer SENDING (taken over, canceled) keeps what it has, and no event.
          out[i] = batched ? sent.has(w.d.id) : await recordOutcome(trx, w.d.workspaceId, w.d.id, w.outcome, w.now);
          if (!out[i]) continue;
          events.push({
            id: newId('evt'),
            workspaceId: w.d.workspaceId,
            event: {
              type: 'email.sent' as const,
              occurredAt: w.now,
              contactId: w.d.contactId,
              broadcastId: w.d.broadcastId,
              deliveryId: w.d.id,
              data: { email: w.d.email, messageId: w.outcome.messageId },
            },
          });
        }
        if (events.length) {
          await insertTrackingEvents(trx, events, events[0]!.event.occurredAt);
          // The contacts' engagement summary (last_sent_at), in the same transaction as the events.
          await noteEngagement(
            trx,
            events.map((e) => ({
              workspaceId: e.workspaceId,
              contactId: e.event.contactId,
              kind: 'delivered' as const,
              at: e.event.occurredAt,
            })),
          );
        }
        return out;
      },
      { lingerMs: WRITE_LINGER_MS[db.dialect] },
    );
  }

  startDueBroadcasts(now: string) {
    return this.db.kysely.transaction().execute((trx) => broadcasts.startDueBroadcasts(trx, now));
  }

  queuedAhead(workspaceId: string, broadcastId: string, atMost: number) {
    return countQueued(this.db.kysely, workspaceId, broadcastId, atMost);
  }

  claimAudience(owner: string, now: string, leaseUntil: string) {
    return broadcasts.claimMaterialization(this.db.kysely, owner, now, leaseUntil);
  }

  /**
   * One batch of a broadcast's audience, at most `maxRows` recipients, written in one transaction with the cursor
   * (the last recipient written, or the end of what was read) and the lease's renewal.
   *
   * SQLite (one connection, statements on the event loop) reads within one slice of contacts per call
   * (segments/slices.ts nextSlice, sized by the filter's cost), in the transaction, so that no statement evaluates the
   * filter over an unbounded number of contacts; the cursor moves to the slice's end, or to the last recipient written
   * when `maxRows` were, and after a full batch the next one goes on within the same slice (its end kept with the job in
   * this process) instead of walking the id index anew. Before slices it was maxRows contacts a transaction, a thousand
   * transactions per million contacts (bench/README.md, "bench:segments").
   *
   * PostgreSQL (statements off the event loop): the audience is read by one cursor, outside the transactions, a batch
   * ahead of the one being written (audience-reader.ts), and each batch is written by one statement
   * (insertLeasedRecipients with the broadcast's materializationStep: the lease check, the insert, the cursor; atomic
   * as a transaction, without its BEGIN/COMMIT round trips). Measured in bench:segments (bench/README.md).
   */
  async writeAudienceSlice(
    job: MaterializationJob,
    owner: string,
    maxRows: number,
    now: string,
    leaseUntil: string,
  ): Promise<{ written: number; state: 'more' | 'done' | 'lost'; finished?: BroadcastFinish }> {
    const k = this.db.kysely;
    // An A/B broadcast's first pass: the test share is chosen over the whole audience before its first batch, once
    // (stored with the broadcast; a worker that takes the job over, or a restart, reads it back).
    if (job.ab && job.ab.winner === null && !job.ab.selection) {
      const selection = await this.chooseTestShare(job);
      if (!selection) return { written: 0, state: 'lost' };
      job.ab.selection = selection;
    }
    let batch: AudienceBatch;
    let written: MaterializedRecipient[];
    if (this.db.dialect === 'postgres') {
      let reader = this.readers.get(job);
      if (!reader || reader.position !== job.cursor || reader.maxRows !== maxRows) {
        void reader?.close();
        reader = new AudienceReader(k, job, maxRows, job.cursor);
        this.readers.set(job, reader);
      }
      try {
        batch = await reader.take();
      } catch (err) {
        // A read that failed is not to be awaited again: the next call reads anew from the cursor.
        void reader.close();
        this.readers.delete(job);
        throw err;
      }
      let held: boolean;
      try {
        const lease = broadcasts.materializationStep(
          job.workspaceId,
          job.broadcastId,
          owner,
          leaseUntil,
          batch.next ?? job.cursor,
          batch.next === null,
          now,
        );
        // An A/B broadcast writes its test share, then the rest with the winner (abBatch); the cursor moves over all read.
        // Local-time sending (issue 34): each recipient due at its zone's turn (withLocalReleases).
        written = withLocalReleases(job, abBatch(job.broadcastId, job.ab, batch.rows), now);
        held = await insertLeasedRecipients(k, lease, job.workspaceId, job.broadcastId, written, now);
      } catch (err) {
        void reader.close();
        this.readers.delete(job);
        // A contact of the batch deleted while it was written: nothing was written; the next round reads it again.
        if (isForeignKeyViolation(err)) return { written: 0, state: 'more' };
        throw err;
      }
      if (!held) {
        void reader.close();
        this.readers.delete(job);
        return { written: 0, state: 'lost' };
      }
    } else {
      const slices = this.sqliteSlices;
      const result = await k.transaction().execute(async (trx) => {
        if (!(await broadcasts.renewMaterialization(trx, job.workspaceId, job.broadcastId, owner, leaseUntil)))
          return undefined;
        const { inSlice, sliceRows } = await audience(trx, this.db.dialect, job.workspaceId, {
          segmentId: job.segmentId,
          topicId: job.topicId,
          resend: job.resend,
        });
        // Within the slice of the last batch when it stopped there (full), else a new slice from the cursor.
        const within = slices.get(job);
        const range: IdRange =
          within && within.after === job.cursor
            ? { after: within.after, upTo: within.upTo }
            : await nextSlice(trx, job.workspaceId, { rows: sliceRows, order: 'asc', cursor: job.cursor ?? undefined });
        const rows = (
          await inSlice(range)
            .select(['contacts.id', 'contacts.email', 'contacts.timezone'])
            .orderBy('contacts.id')
            .limit(maxRows)
            .execute()
        ).map((r) => ({ contactId: r.id, email: r.email, timezone: r.timezone }));
        const next = rows.length >= maxRows ? rows.at(-1)!.contactId : (range.upTo ?? null);
        // An A/B broadcast writes its test share, then the rest with the winner (abBatch); the cursor moves over all read.
        // Local-time sending (issue 34): each recipient due at its zone's turn (withLocalReleases).
        const toWrite = withLocalReleases(job, abBatch(job.broadcastId, job.ab, rows), now);
        await insertDeliveries(trx, job.workspaceId, job.broadcastId, toWrite, now);
        await broadcasts.advanceMaterialization(
          trx,
          job.workspaceId,
          job.broadcastId,
          next ?? job.cursor,
          next === null,
          now,
        );
        return { rows, next, upTo: range.upTo, toWrite };
      });
      if (!result) return { written: 0, state: 'lost' };
      batch = result;
      written = result.toWrite;
      // A full batch that did not end at its slice's end (the last recipient is at most the end: `!==`, not an order of strings).
      if (result.next !== null && result.upTo !== undefined && result.next !== result.upTo)
        slices.set(job, { after: result.next, upTo: result.upTo });
      else slices.delete(job);
    }
    // The job moves only once its batch is committed: a failed commit leaves it where the database has it.
    job.cursor = batch.next ?? job.cursor;
    if (batch.next !== null) return { written: written.length, state: 'more' };
    void this.readers.get(job)?.close();
    this.readers.delete(job);
    const finished = await k
      .transaction()
      .execute((trx) => broadcasts.completeIfDone(trx, job.workspaceId, job.broadcastId, now));
    return { written: written.length, state: 'done', finished };
  }

  /**
   * An A/B broadcast's test share (docs/ab-tests.md, "The test share"): exactly round(N × testPercent / 100) of the N
   * recipients the audience has now, ranked by a keyed hash of broadcast and contact (broadcasts.ab.ts selectTestShare:
   * one read of the audience's ids, 8 bytes a recipient in memory), stored unless one is stored already (then that
   * one). Null: the first pass is over (the winner was chosen meanwhile).
   */
  private async chooseTestShare(job: MaterializationJob): Promise<AbSelection | null> {
    const k = this.db.kysely;
    const spec = { segmentId: job.segmentId, topicId: job.topicId, resend: job.resend };
    const chosen = await selectTestShare(job.broadcastId, job.ab!, async (visit) => {
      for await (const ids of audienceIds(k, this.db.dialect, job.workspaceId, spec)) visit(ids);
    });
    return broadcasts.storeAbSelection(k, job.workspaceId, job.broadcastId, chosen);
  }

  /** PostgreSQL: each job's audience, read ahead (audience-reader.ts); a job that ends or is lost takes its reader out. */
  private readonly readers = new Map<MaterializationJob, AudienceReader>();

  /** Lets go of what this store holds: the audience readers' connections (PostgreSQL), at once rather than when idle. */
  async close(): Promise<void> {
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((r) => r.close()));
  }

  /** SQLite: the rest of the slice each job's last batch stopped within (full). */
  private readonly sqliteSlices = new WeakMap<MaterializationJob, { after: string; upTo: string }>();

  claimDeliveries(...args: Parameters<DeliveryStore['claimDeliveries']>) {
    return claimDeliveries(this.db.kysely, this.db.dialect, ...args);
  }

  renewLeases(owner: string, leaseUntil: string) {
    return renewLeases(this.db.kysely, owner, leaseUntil);
  }

  prefetchForSending(workspaceId: string, broadcastIds: readonly string[], memo: Map<string, Promise<unknown>>): void {
    // Transactional emails only (`em_…`): a broadcast's batch is one message, read once anyway.
    const ids = [...new Set(broadcastIds)].filter(
      (id) => id.startsWith('em_') && !memo.has(readAheadKey('broadcast', workspaceId, id)),
    );
    if (ids.length < 2) return;
    const k = this.db.kysely;
    for (let i = 0; i < ids.length; i += PREFETCH_CHUNK) {
      const chunk = ids.slice(i, i + PREFETCH_CHUNK);
      // Three queries for the chunk (its hidden broadcasts; its emails' recipients and headers; their files): each
      // email's own entries in the memo are what broadcastForSending takes instead of reading.
      const padded = padIds(chunk);
      const broadcastsRead = getBroadcastsForSending(k, workspaceId, padded);
      const partsRead = emailsPartsForSending(k, workspaceId, padded);
      for (const id of chunk) {
        const broadcast = broadcastsRead.then((found) => found.get(id));
        const parts = partsRead.then((found) => found.get(id));
        // Awaited by broadcastForSending; one the batch never reaches (it failed before) is not an unhandled rejection.
        broadcast.catch(() => {});
        parts.catch(() => {});
        memo.set(readAheadKey('broadcast', workspaceId, id), broadcast);
        memo.set(readAheadKey('parts', workspaceId, id), parts);
      }
    }
  }

  async broadcastForSending(
    workspaceId: string,
    broadcastId: string,
    secret: Buffer,
    variant?: string | null,
    memo?: Map<string, Promise<unknown>>,
  ): Promise<SendingBroadcast | undefined> {
    const k = this.db.kysely;
    // What prefetchForSending read ahead for the batch, if it did.
    const readAhead = <T>(kind: 'broadcast' | 'parts') =>
      memo?.get(readAheadKey(kind, workspaceId, broadcastId)) as Promise<T | undefined> | undefined;
    // A transactional email's hidden broadcast (its id is the email's, `em_…`): its recipients, headers and files, read
    // beside the broadcast. The reads of one call go together, not one after the other: each waits its turn on SQLite's
    // one connection behind the API's requests (bench:emails, e2e), so a chain of them is a wait for each link.
    const partsRead = broadcastId.startsWith('em_')
      ? (readAhead<TransactionalParts>('parts') ?? emailPartsForSending(k, workspaceId, broadcastId))
      : null;
    partsRead?.catch(() => {}); // awaited below, or not needed when the broadcast is gone
    const stored = await (readAhead<Broadcast>('broadcast') ??
      getBroadcast(k, workspaceId, broadcastId, { automationMessages: true }));
    if (!stored) return undefined;
    // An A/B variant's recipients get the broadcast with the variant applied (its subject, sender, body).
    const broadcast = withVariant(stored, stored.abTest, variant ?? null);
    const domain = broadcast.from ? parseMailbox(broadcast.from)?.domain : undefined;
    // What the batch's other messages read already (`memo`: a batch of transactional emails is one hidden broadcast
    // per email, and each read its workspace and its signing key again, and decrypted the key again).
    const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
      if (!memo) return read();
      let value = memo.get(key) as Promise<T> | undefined;
      if (!value) memo.set(key, (value = read()));
      return value;
    };
    const [key, topic, workspace, parts] = await Promise.all([
      domain
        ? once(`key\u0000${workspaceId}\u0000${domain}`, () => getSigningKey(k, workspaceId, domain, secret))
        : undefined,
      broadcast.topicId ? getTopic(k, workspaceId, broadcast.topicId) : undefined,
      once(`ws\u0000${workspaceId}`, () => getWorkspace(k, workspaceId)),
      partsRead,
    ]);
    if (!workspace) return undefined;
    const transactional = parts ?? null;
    return {
      transactional,
      broadcast,
      workspace: { id: workspace.id, name: workspace.name, settings: workspace.settings },
      topic: topic ? { id: topic.id, name: topic.name } : null,
      dkim: key ? { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey } : null,
      trackingHost: key?.trackingHost ?? null,
    };
  }

  /** Contacts and suppressions of the batch, two queries: whoever unsubscribed, bounced or complained since the audience was taken is not mailed. */
  async recipients(workspaceId: string, deliveries: readonly ClaimedDelivery[]): Promise<Map<string, Recipient>> {
    const k = this.db.kysely;
    const ids = deliveries.map((d) => d.contactId).filter((id): id is string => id !== null);
    const rows = ids.length
      ? await k
          .selectFrom('contacts')
          .select(CONTACT_COLUMNS)
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', ids)
          .execute()
      : [];
    const contacts = new Map(rows.map((r) => [r.id, toContactRecord(r)]));
    const suppressed = await suppressionsOf(
      k,
      workspaceId,
      deliveries.map((d) => d.email),
    );
    const out = new Map<string, Recipient>();
    for (const d of deliveries) {
      const reason = suppressed.get(d.email);
      if (d.transactional) {
        // Transactional (docs/emails.md): no contact, no topic, no status; only a hard bounce or a complaint stops it.
        out.set(d.id, {
          contact: { email: d.email, firstName: null, lastName: null, properties: {} },
          excluded:
            reason === 'BOUNCED' || reason === 'COMPLAINED'
              ? `suppressed: the address is on the suppression list (${reason})`
              : null,
          invalidAddress: contactEmail(d.email) !== d.email,
        });
        continue;
      }
      const contact = d.contactId ? contacts.get(d.contactId) : undefined;
      const excluded = !contact
        ? 'contact was deleted'
        : reason
          ? `the address is suppressed (${reason})`
          : contact.status !== 'SUBSCRIBED'
            ? `contact is ${contact.status}`
            : contact.email !== d.email
              ? "the contact's address changed since the audience was taken"
              : null;
      // Addresses stored before the input rules tightened (a quoted local part kept without its quotes) are never sent to.
      out.set(d.id, { contact, excluded, invalidAddress: contactEmail(d.email) !== d.email });
    }
    return out;
  }

  handOff(d: ClaimedDelivery, owner: string, now: string) {
    return this.perMessage.run({ kind: 'handOff', d, owner, now });
  }

  async record(d: ClaimedDelivery, outcome: AttemptOutcome, now: string): Promise<void> {
    if (outcome.op === 'sent' || outcome.op === 'fail' || outcome.op === 'bounce' || outcome.op === 'skip') {
      // Final outcomes, what the breaker's next count is weighed against (settle()).
      if (this.recorded.size > 1000) this.recorded.clear();
      this.recorded.set(d.broadcastId, (this.recorded.get(d.broadcastId) ?? 0) + 1);
    }
    if (outcome.op === 'sent') {
      await this.perMessage.run({ kind: 'sent', d, outcome, now });
      return;
    }
    if (outcome.op !== 'bounce') {
      // A message failed for good is an event (docs/events.md), written with its outcome (as email.sent is, above).
      const type = outcome.op === 'fail' ? 'email.failed' : null;
      if (!type) {
        await this.writes.run((trx) => recordOutcome(trx, d.workspaceId, d.id, outcome, now));
        return;
      }
      await this.writes.run(async (trx) => {
        if (!(await recordOutcome(trx, d.workspaceId, d.id, outcome, now))) return;
        const data = { email: d.email, error: outcome.op === 'fail' ? outcome.error.slice(0, 500) : null };
        await recordEvent(
          trx,
          d.workspaceId,
          { type, contactId: d.contactId, broadcastId: d.broadcastId, deliveryId: d.id, data },
          now,
        );
      });
      return;
    }
    await this.writes.run((trx) =>
      recordBounce(
        trx,
        {
          workspaceId: d.workspaceId,
          deliveryId: d.id,
          broadcastId: d.broadcastId,
          contactId: d.contactId,
          email: d.email,
        },
        outcome.bounceClass,
        outcome.error,
        'sync',
        this.rules.bounces,
        now,
      ),
    );
  }

  async settle(workspaceId: string, broadcastId: string, now: string): Promise<BroadcastFinish | undefined> {
    const k = this.db.kysely;
    const last = this.weighed.get(broadcastId);
    const recorded = this.recorded.get(broadcastId) ?? 0;
    // The outcomes recorded since the last weighing and since the floor's count; after `recorded` was cleared (it also
    // counts transactional emails' hidden broadcasts, which are not weighed), those since the clearing.
    const since = (mark: number) => (recorded >= mark ? recorded - mark : recorded);
    if (
      !last ||
      last.final < WEIGH_ALWAYS_BELOW ||
      since(last.recorded) >= last.final * WEIGH_AFTER_SHARE ||
      Date.now() - last.at >= BREAKER_EVERY_MS
    ) {
      const weighed = await k
        .transaction()
        .execute((trx) => tripIfOver(trx, workspaceId, broadcastId, this.rules.breaker, now, last?.floor));
      if (this.weighed.size > 1000) this.weighed.clear();
      const floor = weighed.counted || !last ? { since: weighed.since, final: weighed.final, recorded } : last.floor;
      // Not counted: the floor, and this process's final outcomes since it (an estimate, for the rationing only).
      const final = weighed.counted ? weighed.final : floor.final + since(floor.recorded);
      this.weighed.set(broadcastId, { at: Date.now(), final, recorded, floor });
      if (weighed.tripped) return undefined;
    }
    return k.transaction().execute((trx) => broadcasts.completeIfDone(trx, workspaceId, broadcastId, now));
  }

  /** The A/B timer (docs/ab-tests.md): each due choice in a transaction of its own. */
  chooseDueWinners(now: string) {
    const k = this.db.kysely;
    return broadcasts.chooseDueWinners(k, (fn) => k.transaction().execute(fn), now);
  }

  sendingBroadcasts(limit: number) {
    return sendingMaterializedBroadcasts(this.db.kysely, limit);
  }
}
