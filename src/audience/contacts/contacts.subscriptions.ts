import { expressionBuilder, sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/connection.js';
import type { Database } from '../../db/schema.js';
import { recordEvents } from '../../outbox/index.js';
import { listAllTopics, type Topic } from '../topics/topics.repository.js';
import { topicEvents, type ContactSource } from './contacts.events.js';

/**
 * Topic subscriptions, the one home of the effective-subscription rule (contacts/CONTEXT.md): a contact's
 * explicit choice about a topic (a `contact_topics` row) or, without one, the topic's default — OPT_IN:
 * subscribed unless they opted out; OPT_OUT: not subscribed unless they opted in. The rule in JavaScript,
 * as a Kysely condition and as raw SQL for the segment filter compiler, all here.
 */
export type DefaultSubscription = Topic['defaultSubscription'];

/** The rule itself. */
export function effectiveSubscription(choice: boolean | undefined, byDefault: DefaultSubscription): boolean {
  return choice ?? byDefault === 'OPT_IN';
}

/**
 * The rule as a condition on `contacts` for one topic, e.g. `.where(subscribedTo(topic))`, or
 * `.where(subscribedTo(topic, false))` for the contacts who are not subscribed.
 */
export function subscribedTo(topic: Pick<Topic, 'id' | 'defaultSubscription'>, subscribed = true) {
  return (eb: ExpressionBuilder<Database, 'contacts'>): Expression<SqlBool> => {
    const byDefault = topic.defaultSubscription === 'OPT_IN';
    // The only choice that differs from the default: opted out of an OPT_IN topic, opted in to an OPT_OUT one.
    const overridden = eb.exists(
      eb
        .selectFrom('contact_topics')
        .select(sql<number>`1`.as('one'))
        .whereRef('contact_topics.contact_id', '=', 'contacts.id')
        .where('contact_topics.topic_id', '=', topic.id)
        .where('contact_topics.subscribed', '=', byDefault ? 0 : 1),
    );
    return subscribed === byDefault ? eb.not(overridden) : overridden;
  };
}

/**
 * The rule as raw SQL on `contacts` for the segment filter compiler, given the topic's default as read just before
 * (topics never change their default): subscribedTo's one EXISTS or NOT EXISTS on the contact's choice, which both
 * databases can run as a semi- or anti-join, and a probe, evaluated once per statement, that the topic still
 * exists (a topic deleted meanwhile matches no contact). Not a coalesce() of the choice and the default per
 * contact: PostgreSQL can neither join nor estimate that, and planned a broadcast's audience as a nested-loop
 * anti-join of the whole suppression list, seconds per 1,000 recipients (bench/README.md, bench:segments).
 */
export function subscribedToSql(
  workspaceId: string,
  topic: Pick<Topic, 'id' | 'defaultSubscription'>,
  subscribed: boolean,
): RawBuilder<SqlBool> {
  const choice = subscribedTo(topic, subscribed)(expressionBuilder<Database, 'contacts'>());
  return sql<SqlBool>`(exists (select 1 from topics as t where t.workspace_id = ${workspaceId} and t.id = ${topic.id}) and ${choice})`;
}

export interface ContactTopic {
  id: string;
  name: string;
  subscribed: boolean;
}

/** Every topic of the workspace (oldest first) with each contact's effective subscription: contact id → topics. */
export async function topicsOfContacts(
  db: Executor,
  workspaceId: string,
  contactIds: readonly string[],
): Promise<Map<string, ContactTopic[]>> {
  const out = new Map<string, ContactTopic[]>();
  if (!contactIds.length) return out;
  const topics = await listAllTopics(db, workspaceId);
  const choices = new Map<string, Map<string, boolean>>();
  if (topics.length) {
    const rows = await db
      .selectFrom('contact_topics')
      .select(['contact_id', 'topic_id', 'subscribed'])
      .where('workspace_id', '=', workspaceId)
      .where('contact_id', 'in', [...contactIds])
      .execute();
    for (const r of rows) {
      let m = choices.get(r.contact_id);
      if (!m) choices.set(r.contact_id, (m = new Map()));
      m.set(r.topic_id, Number(r.subscribed) === 1);
    }
  }
  for (const id of contactIds) {
    out.set(
      id,
      topics.map((t) => ({
        id: t.id,
        name: t.name,
        subscribed: effectiveSubscription(choices.get(id)?.get(t.id), t.defaultSubscription),
      })),
    );
  }
  return out;
}

/**
 * Records the contact's explicit choices (insert or replace, one row per topic), and the events of the
 * subscriptions that changed (docs/events.md): `contact.subscribed` / `contact.unsubscribed` with the topic.
 */
export async function setTopicChoices(
  db: Executor,
  workspaceId: string,
  contactId: string,
  choices: readonly { id: string; subscribed: boolean }[],
  at: string,
  source: ContactSource = 'api',
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (choices.length === 0) return;
  const before = new Map(
    ((await topicsOfContacts(db, workspaceId, [contactId])).get(contactId) ?? []).map((t) => [t.id, t.subscribed]),
  );
  const changed = choices
    .filter((c) => before.has(c.id) && before.get(c.id) !== c.subscribed)
    .map((c) => ({ topicId: c.id, subscribed: c.subscribed }));
  if (changed.length) {
    const email = (
      await db
        .selectFrom('contacts')
        .select('email')
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', contactId)
        .executeTakeFirst()
    )?.email;
    if (email) await recordEvents(db, workspaceId, topicEvents(contactId, email, changed, source, extra), at);
  }
  await db
    .insertInto('contact_topics')
    .values(
      choices.map((c) => ({
        workspace_id: workspaceId,
        contact_id: contactId,
        topic_id: c.id,
        subscribed: c.subscribed ? 1 : 0,
        updated_at: at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['contact_id', 'topic_id']).doUpdateSet((eb) => ({
        subscribed: eb.ref('excluded.subscribed'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}
