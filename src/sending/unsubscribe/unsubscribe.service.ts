import { getBroadcast } from '../broadcasts/broadcasts.repository.js';
import { applyToContact, getContact, setTopicChoices, topicsOfContacts, getTopic } from '../../audience/index.js';
import type { Db, Executor } from '../../db/connection.js';
import { markUnsubscribed } from '../deliveries/deliveries.outcomes.js';
import * as deliveries from '../deliveries/deliveries.repository.js';
import { notFound } from '../../errors/errors.js';
import { nowIso } from '../../lib/time.js';
import { getWorkspace, type Locale } from '../../access/index.js';

export interface UnsubscribeContext {
  deliveryId: string;
  broadcastId: string;
  workspaceId: string;
  workspaceName: string;
  locale: Locale;
  contactId: string;
  email: string;
  status: string;
  /** The broadcast's topic: one-click leaves just that topic. Null: it leaves everything. */
  topic: { id: string; name: string } | null;
  /** Every topic of the workspace with the contact's effective subscription, for the choice page. */
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

/**
 * Unsubscribing by the token each message carries (docs/api.md §9, RFC 8058), by its link or by the
 * List-Unsubscribe mailto address (the inbound listener). The token is the only credential: whoever holds
 * the message may unsubscribe its recipient, nothing more. Status moves go through the contact lifecycle.
 */
export class UnsubscribeService {
  constructor(private readonly db: Db) {}

  /** The context of an unsubscribe link's token. */
  async context(token: string): Promise<UnsubscribeContext> {
    const d = await deliveries.findByUnsubscribeToken(this.db.kysely, token);
    if (!d) throw notFound('unsubscribe link');
    return this.contextOf(d.workspaceId, d.id);
  }

  private async contextOf(workspaceId: string, deliveryId: string): Promise<UnsubscribeContext> {
    const k = this.db.kysely;
    const d = await deliveries.findDelivery(k, workspaceId, deliveryId);
    if (!d || !d.contactId) throw notFound('unsubscribe link');
    const [contact, broadcast, workspace] = await Promise.all([
      getContact(k, workspaceId, d.contactId),
      getBroadcast(k, workspaceId, d.broadcastId, { automationMessages: true }),
      getWorkspace(k, workspaceId),
    ]);
    if (!contact || !workspace) throw notFound('unsubscribe link');
    const topic = broadcast?.topicId ? await getTopic(k, workspaceId, broadcast.topicId) : undefined;
    return {
      deliveryId: d.id,
      broadcastId: d.broadcastId,
      workspaceId,
      workspaceName: workspace.name,
      locale: workspace.settings.locale,
      contactId: contact.id,
      email: contact.email,
      status: contact.status,
      topic: topic ? { id: topic.id, name: topic.name } : null,
      topics: (await topicsOfContacts(k, workspaceId, [contact.id])).get(contact.id) ?? [],
    };
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

  /** From everything: the contact UNSUBSCRIBED, the address suppressed (the lifecycle's `unsubscribe`). */
  async unsubscribeAll(token: string): Promise<UnsubscribeContext> {
    return this.everything(await this.context(token), 'page');
  }

  private async everything(ctx: UnsubscribeContext, via: UnsubscribeVia): Promise<UnsubscribeContext> {
    await this.db.kysely.transaction().execute(async (trx) => {
      await this.unsubscribeEverything(trx, ctx, via);
      await markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.contextOf(ctx.workspaceId, ctx.deliveryId);
  }

  /** The choice page: exactly the topics listed in `keep` stay subscribed. */
  async chooseTopics(token: string, keep: string[]): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    await this.db.kysely.transaction().execute(async (trx) => {
      for (const t of ctx.topics) await this.setChoice(trx, ctx, t.id, keep.includes(t.id), 'page');
      if (ctx.topics.some((t) => !keep.includes(t.id)))
        await markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.contextOf(ctx.workspaceId, ctx.deliveryId);
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

  private async unsubscribeEverything(trx: Executor, ctx: UnsubscribeContext, via: UnsubscribeVia): Promise<void> {
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
      { deliveryId: ctx.deliveryId, broadcastId: ctx.broadcastId, detail: `unsubscribed from everything ${how}`, via },
      nowIso(),
    );
  }
}
