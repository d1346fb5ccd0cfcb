import type { Db, Executor } from '../db/connection.js';
import * as deliveries from '../deliveries/deliveries.repository.js';
import { notFound } from '../errors/errors.js';
import { nowIso } from '../lib/time.js';
import { applyToContact } from '../contacts/contacts.lifecycle.js';
import { setTopicChoices, topicsOfContacts } from '../contacts/contacts.subscriptions.js';

export interface UnsubscribeContext {
  deliveryId: string;
  broadcastId: string;
  workspaceId: string;
  contactId: string;
  email: string;
  status: string;
  /** The broadcast's topic: one-click leaves just that topic. Null: it leaves everything. */
  topic: { id: string; name: string } | null;
  /** Every topic of the workspace with the contact's effective subscription, for the choice page. */
  topics: { id: string; name: string; subscribed: boolean }[];
}

/**
 * Unsubscribing by the token each message carries (contract section 9, RFC 8058). The token is the only
 * credential: whoever holds the message may unsubscribe its recipient, nothing more.
 */
export class UnsubscribeService {
  constructor(private readonly db: Db) {}

  async context(token: string): Promise<UnsubscribeContext> {
    const k = this.db.kysely;
    const d = await deliveries.findByUnsubscribeToken(k, token);
    if (!d || !d.contactId) throw notFound('unsubscribe link');
    const contact = await k.selectFrom('contacts').select(['id', 'email', 'status']).where('workspace_id', '=', d.workspaceId).where('id', '=', d.contactId).executeTakeFirst();
    if (!contact) throw notFound('unsubscribe link');
    const b = await k.selectFrom('broadcasts').leftJoin('topics', 'topics.id', 'broadcasts.topic_id')
      .select(['topics.id as topic_id', 'topics.name as topic_name'])
      .where('broadcasts.workspace_id', '=', d.workspaceId).where('broadcasts.id', '=', d.broadcastId).executeTakeFirst();
    return {
      deliveryId: d.id, broadcastId: d.broadcastId, workspaceId: d.workspaceId, contactId: contact.id, email: contact.email, status: contact.status,
      topic: b?.topic_id ? { id: b.topic_id, name: b.topic_name ?? '' } : null,
      topics: (await topicsOfContacts(k, d.workspaceId, [contact.id])).get(contact.id) ?? [],
    };
  }

  /** One-click: from the broadcast's topic when it has one, otherwise from everything. Idempotent. */
  async oneClick(token: string): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    await this.db.kysely.transaction().execute(async (trx) => {
      if (ctx.topic) await this.setChoice(trx, ctx, ctx.topic.id, false);
      else await this.setStatus(trx, ctx);
      await deliveries.markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.context(token);
  }

  /** From everything: the contact becomes UNSUBSCRIBED and receives no broadcast again. */
  async unsubscribeAll(token: string): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    await this.db.kysely.transaction().execute(async (trx) => {
      await this.setStatus(trx, ctx);
      await deliveries.markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.context(token);
  }

  /** The choice page: exactly the topics listed in `keep` stay subscribed. */
  async chooseTopics(token: string, keep: string[]): Promise<UnsubscribeContext> {
    const ctx = await this.context(token);
    await this.db.kysely.transaction().execute(async (trx) => {
      for (const t of ctx.topics) await this.setChoice(trx, ctx, t.id, keep.includes(t.id));
      if (ctx.topics.some((t) => !keep.includes(t.id))) await deliveries.markUnsubscribed(trx, ctx.workspaceId, ctx.deliveryId, nowIso());
    });
    return this.context(token);
  }

  private async setChoice(trx: Executor, ctx: UnsubscribeContext, topicId: string, subscribed: boolean): Promise<void> {
    await setTopicChoices(trx, ctx.workspaceId, ctx.contactId, [{ id: topicId, subscribed }], nowIso());
  }

  /** From everything: the contact lifecycle's `unsubscribe` (UNSUBSCRIBED, and the address suppressed). */
  private async setStatus(trx: Executor, ctx: UnsubscribeContext): Promise<void> {
    await applyToContact(trx, ctx.workspaceId, ctx.contactId, 'unsubscribe', { deliveryId: ctx.deliveryId, broadcastId: ctx.broadcastId, detail: 'unsubscribed from everything by its link' }, nowIso());
  }
}
