import type { Executor } from '../../db/connection.js';
import { newId } from '../../lib/ids.js';
import { pooledRandomBytes } from '../../lib/random.js';
import * as repo from './submissions.repository.js';
import { CONFIRMATION_RESEND_WINDOW_MS, CONFIRMATION_TTL_MS } from './submissions.service.js';

/**
 * Subscribing again from the unsubscribe page (docs/bounces.md, "The unsubscribe page"). An address that unsubscribed
 * is suppressed, and only DELETE /v1/suppressions or its owner confirming a double opt-in sign-up lifts that (contract
 * §11): the page's signed link proves someone holds a message, not that they own the address (messages are
 * forwarded). So asking to subscribe again queues a double opt-in confirmation email, the one a sign-up form sends
 * (ConfirmationSender, in the workspace's words and locale), with no form; following its link is the lifecycle's
 * `confirm` (SUBSCRIBED, the suppression lifted). At most one per address per CONFIRMATION_RESEND_WINDOW_MS, as for
 * sign-ups. Whether the address may ask at all (not BOUNCED, COMPLAINED or suppressed by hand) is the caller's rule.
 */
export async function requestResubscription(
  trx: Executor,
  workspaceId: string,
  contactId: string,
  now: string,
): Promise<{ queued: boolean }> {
  const since = new Date(Date.parse(now) - CONFIRMATION_RESEND_WINDOW_MS).toISOString();
  if (await repo.hasRecentConfirmation(trx, workspaceId, contactId, since)) return { queued: false };
  await repo.insertConfirmation(trx, workspaceId, {
    id: newId('cnf'),
    contactId,
    formId: null,
    token: pooledRandomBytes(24).toString('base64url'),
    expiresAt: new Date(Date.parse(now) + CONFIRMATION_TTL_MS).toISOString(),
    now,
    data: null,
  });
  return { queued: true };
}

/** When a confirmation the contact has not followed yet was made (null: none open). */
export async function openConfirmationSince(
  db: Executor,
  workspaceId: string,
  contactId: string,
  now: string,
): Promise<string | null> {
  return repo.openConfirmationSince(db, workspaceId, contactId, now);
}
