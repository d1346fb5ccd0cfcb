import type { BroadcastStatus, DeliveryStatus } from '../../db/schema.js';
import type { BounceClass } from '../../mail/classify.js';
import type { FooterSettings } from './message.assembly.js';
import type { MessageTemplates, RenderScope } from './message.content.js';

/**
 * The delivery engine's port: what the pipeline needs from the rest of the service, and nothing more
 * (deliveries/CONTEXT.md), in its own terms. The pipeline depends on this narrow store, as listmonk's manager
 * depends on its Store, not on the repositories of five features. Its adapter over the database is
 * src/composition/sql-delivery-store.ts (as listmonk's is cmd/manager_store.go); a test may give another.
 */
export interface DeliveryStore {
  /** Starts due SCHEDULED broadcasts; returns those started. */
  startDueBroadcasts(now: string): Promise<{ id: string; workspaceId: string }[]>;
  /** Takes the lease on one SENDING broadcast whose audience is not yet all in deliveries. */
  claimAudience(owner: string, now: string, leaseUntil: string): Promise<MaterializationJob | undefined>;
  /** How many of the broadcast's deliveries are QUEUED, counted up to `atMost` (the pipeline's materializeLead). */
  queuedAhead(workspaceId: string, broadcastId: string, atMost: number): Promise<number>;
  /** Writes the next batch of the job's audience as deliveries (one transaction); `lost` when the lease is gone. */
  writeAudienceSlice(
    job: MaterializationJob,
    owner: string,
    maxRows: number,
    now: string,
    leaseUntil: string,
  ): Promise<{ written: number; state: 'more' | 'done' | 'lost'; finished?: BroadcastFinish }>;
  /**
   * Claims due deliveries with a lease (at-least-once: see CONTEXT.md): of every lane (transactional first), or with
   * `transactional` only the transactional lane's.
   */
  claimDeliveries(
    owner: string,
    now: string,
    leaseUntil: string,
    limit: number,
    lane?: 'all' | 'transactional',
    /**
     * `lapsed: false`: expired leases only to fill the batch; `from`: the broadcasts' due deliveries from that due time
     * on (deliveries.repository.ts, claimDeliveries).
     */
    options?: { lapsed?: boolean; from?: string },
  ): Promise<ClaimedDelivery[]>;
  renewLeases(owner: string, leaseUntil: string): Promise<void>;
  /**
   * A broadcast as sending needs it: content, sender, signing key (opened with the installation's key, `secret`); with
   * `variant`, as that A/B variant's recipients get it (its subject, sender, body). `memo`: one per batch, where the
   * store may keep what the batch's other messages share (their workspace, a domain's signing key).
   */
  broadcastForSending(
    workspaceId: string,
    broadcastId: string,
    secret: Buffer,
    variant?: string | null,
    memo?: Map<string, Promise<unknown>>,
  ): Promise<SendingBroadcast | undefined>;
  /**
   * Optional: reads ahead into `memo` (the batch's) what broadcastForSending will read of these broadcasts of one
   * workspace, so that a batch of transactional emails (a hidden broadcast per email) is read in a few queries rather
   * than a few per email. broadcastForSending gives the same without it.
   */
  prefetchForSending?(workspaceId: string, broadcastIds: readonly string[], memo: Map<string, Promise<unknown>>): void;
  /** A/B broadcasts whose wait has ended get their winner (docs/ab-tests.md); returns those chosen. */
  chooseDueWinners?(now: string): Promise<{ id: string; workspaceId: string; variant: string }[]>;
  /** The recipients of these deliveries as they are now: contact data, and whether they may still be mailed. */
  recipients(workspaceId: string, deliveries: readonly ClaimedDelivery[]): Promise<Map<string, Recipient>>;
  /** The point of no return (see CONTEXT.md): false when the delivery must not be sent. */
  handOff(d: ClaimedDelivery, owner: string, now: string): Promise<boolean>;
  /** Records the outcome of an attempt; a bounce changes the contact and the suppression list with it. */
  record(d: ClaimedDelivery, outcome: AttemptOutcome, now: string): Promise<void>;
  /** After a batch: finishes the broadcast if nothing is open (and says so), or pauses it if the circuit breaker trips. */
  settle(workspaceId: string, broadcastId: string, now: string): Promise<BroadcastFinish | undefined>;
  /** SENDING broadcasts whose audience is written (the sweep settles those no batch touched last). */
  sendingBroadcasts(limit: number): Promise<{ id: string; workspaceId: string }[]>;
  /** Lets go of what the store holds between calls (connections), when the pipeline stops. */
  close?(): Promise<void>;
}

/** A broadcast that just finished, with its deliveries counted (what the worker logs). */
export interface BroadcastFinish {
  status: 'SENT' | 'FAILED';
  counts: { total: number; byStatus: Partial<Record<DeliveryStatus, number>>; outboxed: number };
}

/**
 * Who is in an A/B broadcast's test share, and with which variant: what broadcasts.ab.ts selectTestShare chooses and
 * the broadcast stores (`ab_selection`; the fields are explained there). Here because the materialisation job carries it.
 */
export interface AbSelection {
  audience: number;
  test: number;
  cuts: string[];
}

/** A SENDING broadcast whose audience is being written into deliveries, and where the writing stands. */
export interface MaterializationJob {
  broadcastId: string;
  workspaceId: string;
  segmentId: string | null;
  topicId: string | null;
  /** A resend's audience (docs/sending.md, "Resend to non-openers"): the original's recipients without a human open or click then. */
  resend: { of: string; to: 'NON_OPENERS' | 'NON_CLICKERS'; asOf: string } | null;
  cursor: string | null;
  /**
   * An A/B broadcast (docs/ab-tests.md): its variants and test share, and the winner once chosen. Until then this pass
   * writes only the test share, each with its variant; after, the rest of the audience, with the winner. Null: a
   * broadcast without a test, every recipient written alike. `selection`: who is in the test share and with which
   * variant (broadcasts.ab.ts AbSelection), chosen once over the whole audience when the first pass starts and stored
   * with the broadcast; null until then.
   */
  ab?: {
    variants: string[];
    testPercent: number;
    winner: string | null;
    selection?: AbSelection | null;
  } | null;
  /**
   * Local-time sending (docs/sending.md): each recipient's delivery is due when `wallTime` comes in their zone
   * (`defaultZone`, the workspace's, for those without one); null: every delivery is due at once.
   */
  local: { wallTime: string; defaultZone: string } | null;
}

export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  broadcastId: string;
  contactId: string | null;
  email: string;
  attempts: number;
  unsubscribeToken: string;
  /** When it was queued (a delivery waiting for its destination longer than SEND_PACING's giveUpAfterMs fails). */
  createdAt: string;
  /**
   * When it was due (`next_attempt_at`), on those a claim took from the due range in due order (not an expired lease's,
   * not the transactional lane's taken first): where the pipeline's next claim looks from (claimDeliveries, `from`).
   */
  dueAt?: string;
  /** An A/B broadcast's delivery: the variant whose message it gets (docs/ab-tests.md); null or absent: the broadcast's. */
  variant?: string | null;
  /** A transactional email's recipient (lane 1, docs/emails.md): contact status and topics do not apply. */
  transactional?: boolean;
}

/** What a transactional email's message has beyond a broadcast's (docs/emails.md): sent as the caller gave it. */
export interface TransactionalParts {
  /** The To and Cc headers: the visible recipients (Bcc never appears in a header). */
  to: string[];
  cc: string[];
  /** The caller's own headers, checked at the API (no From, DKIM-Signature, Content-* …). */
  headers: Record<string, string>;
  attachments: { filename: string; contentType: string; content: Uint8Array }[];
}

/** A broadcast as sending reads it. */
export interface BroadcastToSend {
  id: string;
  name: string;
  status: BroadcastStatus;
  from: string | null;
  replyTo: string | null;
  emailContent: MessageTemplates;
  tracking: { opens: boolean; clicks: boolean };
  /** Tells a new version of the broadcast from the one whose templates a send thread parsed. */
  updatedAt: string;
}

export interface SendingBroadcast {
  broadcast: BroadcastToSend;
  /** Its workspace: the name and the settings the footer uses (postal address, locale). */
  workspace: { id: string; name: string; settings: FooterSettings };
  /** The topic, for the unsubscribe wording and the List-Id. */
  topic: { id: string; name: string } | null;
  dkim: { domainName: string; keySelector: string; privateKey: string } | null;
  /** The sending domain's verified tracking host (links and pixel go there instead of PUBLIC_URL's host), or null. */
  trackingHost?: string | null;
  /** A transactional email's hidden broadcast: its message is composed as the caller gave it (no footer, no list headers). */
  transactional?: TransactionalParts | null;
}

export interface Recipient {
  /** The contact's data the templates see; undefined when the contact was deleted. */
  contact: RenderScope['contact'] | undefined;
  /** Why the recipient is no longer mailed (unsubscribed, bounced, suppressed, deleted), or null. */
  excluded: string | null;
  /**
   * The delivery's stored address is not a valid single address (one stored before the input rules tightened, a
   * quoted local part kept without its quotes): it is never sent to.
   */
  invalidAddress: boolean;
}

export type AttemptOutcome =
  | { op: 'sent'; messageId: string; response: string }
  | { op: 'retry'; error: string; nextAttemptAt: string }
  /**
   * Not sent now, without using an attempt: its destination has no room in this batch, or answered "try later"
   * (a throttle, `error`: the reply), which slows the destination down and is no soft bounce (docs/sending.md).
   */
  | { op: 'defer'; error: string | null; nextAttemptAt: string }
  | { op: 'fail' | 'skip'; error: string }
  /** The broadcast was paused after the claim: the delivery waits with the others (PAUSED). */
  | { op: 'hold' }
  | { op: 'bounce'; error: string; bounceClass: BounceClass };
