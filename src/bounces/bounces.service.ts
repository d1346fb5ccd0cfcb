import { applyToAddress, applyToContact } from '../contacts/contacts.lifecycle.js';
import type { Db, Executor } from '../db/connection.js';
import { recordLateReport, recordOutcome, softBounceStreak } from '../deliveries/deliveries.repository.js';
import type { BounceClass } from './bounces.classify.js';
import { senderHealth, type WindowHealth } from './bounces.health.js';

/**
 * What a bounce or a complaint does, in one place (docs/bounces.md), whether it comes from the relay's reply
 * at send time, from a DSN or ARF report received by the inbound listener, or from a provider's webhook. The
 * callers run it inside their transaction: the delivery, the contact and the suppression list change together.
 */
export interface BounceRules {
  /** Consecutive broadcasts soft-bounced that make a contact BOUNCED (SOFT_BOUNCE_LIMIT). */
  softBounceLimit: number;
}

export const DEFAULT_BOUNCE_RULES: BounceRules = { softBounceLimit: 3 };

/** The delivery a report is about. */
export interface BouncedDelivery {
  workspaceId: string;
  deliveryId: string;
  broadcastId: string;
  contactId: string | null;
  email: string;
}

/**
 * A bounce of class `cls`. `sync`: the relay refused the message at send time (the delivery is SENDING and
 * gets its outcome); `late`: a report about a message the relay had accepted (the delivery is SENT). A hard
 * bounce makes the contact BOUNCED and suppresses the address; a soft one counts towards the soft-bounce
 * limit; a block or another failure leaves the contact alone. Returns false when the delivery was not in a
 * status the report applies to (a duplicate report, a delivery already bounced).
 */
export async function recordBounce(trx: Executor, d: BouncedDelivery, cls: BounceClass, detail: string, when: 'sync' | 'late', rules: BounceRules, now: string): Promise<boolean> {
  const recorded = when === 'sync'
    ? await recordOutcome(trx, d.workspaceId, d.deliveryId, { op: cls === 'hard' ? 'bounce' : 'fail', error: detail, bounceClass: cls }, now)
    : await recordLateReport(trx, d.workspaceId, d.deliveryId, { kind: cls, detail }, now);
  if (!recorded) return false;
  const cause = { deliveryId: d.deliveryId, broadcastId: d.broadcastId, detail };
  if (cls === 'hard') await onContact(trx, d, 'hardBounce', cause, now);
  else if (cls === 'soft' && d.contactId && (await softBounceStreak(trx, d.workspaceId, d.contactId, rules.softBounceLimit))) {
    await onContact(trx, d, 'softBounceLimit', { ...cause, detail: `${rules.softBounceLimit} consecutive broadcasts soft-bounced; last: ${detail}` }, now);
  }
  return true;
}

/** A complaint (an ARF report, a provider's event): the contact COMPLAINED, the address suppressed. */
export async function recordComplaint(trx: Executor, d: BouncedDelivery, detail: string, now: string): Promise<boolean> {
  if (!(await recordLateReport(trx, d.workspaceId, d.deliveryId, { kind: 'complaint', detail }, now))) return false;
  await onContact(trx, d, 'complaint', { deliveryId: d.deliveryId, broadcastId: d.broadcastId, detail }, now);
  return true;
}

async function onContact(trx: Executor, d: BouncedDelivery, op: 'hardBounce' | 'softBounceLimit' | 'complaint', cause: { deliveryId: string; broadcastId: string; detail: string }, now: string): Promise<void> {
  // The contact may have been deleted since: the address is suppressed all the same.
  const applied = d.contactId ? await applyToContact(trx, d.workspaceId, d.contactId, op, cause, now) : undefined;
  if (!applied) await applyToAddress(trx, d.workspaceId, d.email, op, cause, now);
}

/** The bounces feature's API side: sender health (and, with the inbound listener, what it could not read). */
export class BouncesService {
  constructor(private readonly db: Db) {}

  async health(workspaceId: string): Promise<{ windows: WindowHealth[] }> {
    return { windows: await senderHealth(this.db.kysely, workspaceId) };
  }
}
