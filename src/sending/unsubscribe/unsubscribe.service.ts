import { getBroadcast } from '../broadcasts/broadcasts.repository.js';
import {
  applyToContact,
  getContact,
  getTopic,
  setTopicChoices,
  suppressionsOf,
  topicsOfContacts,
} from '../../audience/index.js';
import type { Db, Executor } from '../../db/connection.js';
import { markUnsubscribed } from '../deliveries/deliveries.outcomes.js';
import * as deliveries from '../deliveries/deliveries.repository.js';
import { DomainError, notFound } from '../../errors/errors.js';
import { parseMailbox } from '../../lib/email.js';
import { nowIso } from '../../lib/time.js';
import { getWorkspace, type Locale } from '../../access/index.js';
import { openConfirmationSince, requestResubscription } from '../../forms/index.js';

/**
 * Where the address stands, as the page says it (docs/bounces.md, "The unsubscribe page"), from its status and its suppression together:
 * - `subscribed`: SUBSCRIBED and not suppressed: gets the emails of the topics it is subscribed to;
 * - `pending`: PENDING (a double opt-in not confirmed yet): gets nothing until it confirms;
 * - `unsubscribed`: UNSUBSCRIBED, or suppressed because it unsubscribed: gets nothing; may subscribe again by
 *   confirming a double opt-in email;
 * - `blocked`: BOUNCED or COMPLAINED, or suppressed for a bounce, a complaint or by hand (MANUAL): gets nothing, and
 *   the page cannot change that (only the sender can: DELETE /v1/suppressions, contract §11).
 */
export type Standing = 'subscribed' | 'pending' | 'unsubscribed' | 'blocked';

export interface UnsubscribeContext {
  deliveryId: string;
  broadcastId: string;
  workspaceId: string;
  workspaceName: string;
  /** `settings.brandColor`: the page's accent. */
  brandColor: string | null;
  /** The display name of the message's From (the broadcast's, else the workspace's default sender); null: none. */
  fromName: string | null;
  locale: Locale;
  contactId: string;
  email: string;
  status: string;
  /** The address's suppression reason, if it is on the suppression list. */
  suppression: 'BOUNCED' | 'COMPLAINED' | 'UNSUBSCRIBED' | 'MANUAL' | null;
  standing: Standing;
  /** Why a `blocked` address gets nothing. */
  blockedBy: 'BOUNCED' | 'COMPLAINED' | 'MANUAL' | null;
  /** When the newest confirmation email the contact has not followed yet was made (null: none open). */
  confirmationSince: string | null;
  /** The broadcast's topic: one-click leaves just that topic. Null: it leaves everything. */
  topic: { id: string; name: string } | null;
  /** Every topic of the workspace with the contact's effective subscription, as stored. */
  topics: { id: string; name: string; subscribed: boolean }[];
}

/**
 * How an unsubscribe was asked for, as its `contact.unsubscribed` events say (`data.via`) and the console shows:
 * - `one-click`: RFC 8058's POST of the List-Unsubscribe URL (a mail client's button), or the page's button for the
 *   message's topic: leaves what the message was about (its topic; everything when it had none);
 * - `page`: the unsubscribe page's "everything" button or its topic choices;
 * - `mail`: a message to the List-Unsubscribe mailto address: from everything, the address suppressed (a mail gives no
 *   way to ask which, and docs/bounces.md promises everything).
 */
export type UnsubscribeVia = 'one-click' | 'page' | 'mail';

/** Why someone left, as the page offers it (stored as the `contact.unsubscribed` event's `data.reason`). */
export const UNSUBSCRIBE_REASONS = ['too_many', 'not_relevant', 'never_signed_up', 'other'] as const;
export type UnsubscribeReason = (typeof UNSUBSCRIBE_REASONS)[number];
/** The longest free-text comment kept with a reason (`data.comment`). */
export const COMMENT_MAX = 500;

/** What a re-subscription request did. */
export type ResubscribeOutcome = 'queued' | 'recent' | 'already' | 'blocked';

/** A page action that the address's standing does not allow: nothing changed, and the page says why. */
export class NotNow extends DomainError {
  constructor(readonly ctx: UnsubscribeContext) {
    super('invalid_state', 'this action does not fit where the address stands');
  }
}

function standingOf(
  status: string,
  suppression: UnsubscribeContext['suppression'],
): Pick<UnsubscribeContext, 'standing' | 'blockedBy'> {
  if (suppression === 'BOUNCED' || suppression === 'COMPLAINED' || suppression === 'MANUAL')
    return { standing: 'blocked', blockedBy: suppression };
  if (status === 'BOUNCED' || status === 'COMPLAINED') return { standing: 'blocked', blockedBy: status };
  if (suppression === 'UNSUBSCRIBED' || status === 'UNSUBSCRIBED') return { standing: 'unsubscribed', blockedBy: null };
  if (status === 'PENDING') return { standing: 'pending', blockedBy: null };
  return { standing: 'subscribed', blockedBy: null };
}

/**
 * Unsubscribing by the token each message carries (docs/bounces.md, "The unsubscribe page", RFC 8058), by its link or by the
 * List-Unsubscribe mailto address (the inbound listener), and the preference centre the link opens. The token is the
 * only credential: whoever holds the message may unsubscribe its recipient, choose its topics, or ask for a
 * confirmation email to subscribe again, nothing more. Status moves go through the contact lifecycle, topic choices
 * through the subscriptions, the re-subscription's confirmation through the forms' double opt-in.
 */
export class UnsubscribeService {
  constructor(private readonly db: Db) {}

  /** The context of an unsubscribe link's token: where the address stands now, as stored. */
  async context(token: string): Promise<UnsubscribeContext> {
    const d = await deliveries.findByUnsubscribeToken(this.db.kysely, token);
    if (!d) throw notFound('unsubscribe link');
    return this.contextOf(d.workspaceId, d.id);
  }

  private async contextOf(workspaceId: string, deliveryId: string, k: Executor = this.db.kysely) {
    const d = await deliveries.findDelivery(k, workspaceId, deliveryId);
    if (!d || !d.contactId) throw notFound('unsubscribe link');
    const [contact, broadcast, workspace] = await Promise.all([
      getContact(k, workspaceId, d.contactId),
      getBroadcast(k, workspaceId, d.broadcastId, { automationMessages: true }),
      getWorkspace(k, workspaceId),
    ]);
    if (!contact || !workspace) throw notFound('unsubscribe link');
    const [topic, suppressions, topics, confirmationSince] = await Promise.all([
      broadcast?.topicId ? getTopic(k, workspaceId, broadcast.topicId) : undefined,
      suppressionsOf(k, workspaceId, [contact.email]),
      topicsOfContacts(k, workspaceId, [contact.id]),
      openConfirmationSince(k, workspaceId, contact.id, nowIso()),
    ]);
    const suppression = suppressions.get(contact.email) ?? null;
    const from = broadcast?.from ?? workspace.settings.defaultFrom ?? null;
    return {
      deliveryId: d.id,
      broadcastId: d.broadcastId,
      workspaceId,
      workspaceName: workspace.name,
      brandColor: workspace.settings.brandColor ?? null,
      fromName: (from && parseMailbox(from)?.name) || null,
      locale: workspace.settings.locale,
      contactId: contact.id,
      email: contact.email,
      status: contact.status,
      suppression,
      ...standingOf(contact.status, suppression),
      confirmationSince,
      topic: topic ? { id: topic.id, name: topic.name } : null,
      topics: topics.get(contact.id) ?? [],
    } satisfies UnsubscribeContext;
  }

  /** One-click: from the broadcast's topic when it has one, otherwise from everything. Idempotent. */
  async oneClick(token: string): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    await this.db.kysely.transaction().execute(async (trx) => {
      if (ctx.topic) await this.setChoice(trx, ctx, ctx.topic.id, false, 'one-click');
      else await this.unsubscribeEverything(trx, ctx, 'one-click');
      await markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.contextOf(ctx.workspaceId, ctx.deliveryId);
  }

  /**
   * A message to the List-Unsubscribe mailto address, whose token names the delivery: from everything, the address
   * suppressed, as the page's "everything" button (docs/bounces.md). Idempotent.
   */
  async unsubscribeByMail(workspaceId: string, deliveryId: string): Promise<UnsubscribeContext> {
    return this.everything(await this.contextOf(workspaceId, deliveryId), 'mail');
  }

  /**
   * From everything: the contact UNSUBSCRIBED, the address suppressed (the lifecycle's `unsubscribe`), with the reason
   * the person gave, if any, on the `contact.unsubscribed` event (`data.reason`, `data.comment`).
   */
  async unsubscribeAll(
    token: string,
    why: { reason?: UnsubscribeReason; comment?: string } = {},
  ): Promise<UnsubscribeContext> {
    return this.everything(await this.context(token), 'page', why);
  }

  private async everything(
    ctx: UnsubscribeContext,
    via: UnsubscribeVia,
    why: { reason?: UnsubscribeReason; comment?: string } = {},
  ): Promise<UnsubscribeContext> {
    await this.db.kysely.transaction().execute(async (trx) => {
      await this.unsubscribeEverything(trx, ctx, via, why);
      await markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.contextOf(ctx.workspaceId, ctx.deliveryId);
  }

  /**
   * The topic choices: exactly the topics listed in `keep` stay subscribed. Only while the address is subscribed (the
   * choices decide what it gets); otherwise NotNow, nothing changed: subscribing again is `resubscribe`.
   */
  async chooseTopics(token: string, keep: string[]): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    if (ctx.standing !== 'subscribed') throw new NotNow(ctx);
    await this.db.kysely.transaction().execute(async (trx) => {
      await this.saveChoices(trx, ctx, keep);
      if (ctx.topics.some((t) => t.subscribed && !keep.includes(t.id)))
        await markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.contextOf(ctx.workspaceId, ctx.deliveryId);
  }

  /**
   * Subscribing again (an `unsubscribed` or `pending` address): the topics in `keep` (when given) are stored as its
   * choices, and a double opt-in confirmation email is queued (forms' requestResubscription: at most one an hour);
   * following its link makes the contact SUBSCRIBED and lifts the suppression (contract §11). A `blocked` address
   * cannot (NotNow, nothing changed); a `subscribed` one has nothing to do.
   */
  async resubscribe(
    token: string,
    keep: string[] | null,
  ): Promise<{ ctx: UnsubscribeContext; outcome: ResubscribeOutcome }> {
    const ctx = await this.context(token);
    if (ctx.standing === 'blocked') throw new NotNow(ctx);
    if (ctx.standing === 'subscribed') return { ctx, outcome: 'already' };
    const { queued } = await this.db.kysely.transaction().execute(async (trx) => {
      if (keep) await this.saveChoices(trx, ctx, keep);
      return requestResubscription(trx, ctx.workspaceId, ctx.contactId, nowIso());
    });
    return { ctx: await this.contextOf(ctx.workspaceId, ctx.deliveryId), outcome: queued ? 'queued' : 'recent' };
  }

  private async saveChoices(trx: Executor, ctx: UnsubscribeContext, keep: string[]): Promise<void> {
    if (!ctx.topics.length) return;
    await setTopicChoices(
      trx,
      ctx.workspaceId,
      ctx.contactId,
      ctx.topics.map((t) => ({ id: t.id, subscribed: keep.includes(t.id) })),
      nowIso(),
      'unsubscribe',
      { via: 'page' },
    );
  }

  private async setChoice(
    trx: Executor,
    ctx: UnsubscribeContext,
    topicId: string,
    subscribed: boolean,
    via: UnsubscribeVia,
  ): Promise<void> {
    await setTopicChoices(trx, ctx.workspaceId, ctx.contactId, [{ id: topicId, subscribed }], nowIso(), 'unsubscribe', {
      via,
    });
  }

  private async unsubscribeEverything(
    trx: Executor,
    ctx: UnsubscribeContext,
    via: UnsubscribeVia,
    why: { reason?: UnsubscribeReason; comment?: string } = {},
  ): Promise<void> {
    const how = {
      'one-click': 'by one-click (RFC 8058) on a message without a topic',
      page: 'on the unsubscribe page',
      mail: 'by mail to the List-Unsubscribe address',
    }[via];
    await applyToContact(
      trx,
      ctx.workspaceId,
      ctx.contactId,
      'unsubscribe',
      {
        deliveryId: ctx.deliveryId,
        broadcastId: ctx.broadcastId,
        detail: `unsubscribed from everything ${how}`,
        via,
        ...(why.reason ? { reason: why.reason } : {}),
        ...(why.comment ? { comment: why.comment } : {}),
      },
      nowIso(),
    );
  }
}
