/**
 * The event types of the event stream (docs/events.md, contract §12). Every event is written in the transaction
 * of the change it reports, by the feature that makes the change (events.repository.ts `recordEvents`).
 */
export const EVENT_TYPES = [
  'email.sent',
  'email.bounced',
  'email.soft_bounced',
  'email.complained',
  'email.failed',
  'email.opened',
  'email.clicked',
  'contact.created',
  'contact.updated',
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.deleted',
  'form.submitted',
  'form.submission_held',
  'broadcast.sending',
  'broadcast.paused',
  'broadcast.sent',
  'broadcast.canceled',
  'broadcast.ab_winner_chosen',
  'event.tracked',
  'automation.run_stopped',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The types automations react to (src/integrations/automations: triggers, segment entry, a run's exit). They are written with
 * `routed = 0` and the automation intake takes them; every other type is written as already routed, so the
 * intake never reads opens, clicks and sends (nor, events.repository.ts, those of workspaces without an ACTIVE automation).
 */
export const ROUTED_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'contact.created',
  'contact.updated',
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.deleted',
  'email.bounced',
  'email.complained',
  'form.submitted',
  'event.tracked',
]);

/** An event about to be written. `data` is the type's own payload (docs/events.md lists it per type). */
export interface NewEvent {
  type: EventType;
  contactId?: string | null;
  broadcastId?: string | null;
  deliveryId?: string | null;
  data?: Record<string, unknown>;
  /** Opens and clicks only: by a machine (Apple MPP, a scanner), left out of unique counts. */
  machine?: boolean;
  /** Clicks only: the link's URL. */
  url?: string | null;
  /** When it happened; the transaction's `now` when omitted. */
  occurredAt?: string;
}

/** An event as the API returns it (GET /v1/events) and as a webhook's `data` carries it. */
export interface EventRecord {
  id: string;
  type: EventType;
  occurredAt: string;
  contactId: string | null;
  broadcastId: string | null;
  deliveryId: string | null;
  data: Record<string, unknown>;
}
