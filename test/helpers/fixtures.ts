import { newId, type IdPrefix } from '../../src/lib/ids.js';
import type { Harness, TestWorkspace } from './app.js';

/** Rows the tests need, inserted directly; ids come from the service's own generator (time-sortable). */
const id = (prefix: IdPrefix) => newId(prefix);
const now = () => new Date().toISOString();

export async function verifiedDomain(h: Harness, ws: TestWorkspace, name = 'acme.test') {
  return h.app.services.domains.add(ws.id, name, { verified: true });
}

export async function insertTopic(
  h: Harness,
  ws: TestWorkspace,
  defaultSubscription: 'OPT_IN' | 'OPT_OUT' = 'OPT_IN',
  name = 'News',
) {
  const topicId = id('topic');
  await h.db.kysely
    .insertInto('topics')
    .values({
      id: topicId,
      workspace_id: ws.id,
      name,
      default_subscription: defaultSubscription,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return topicId;
}

export async function insertSegment(h: Harness, ws: TestWorkspace, filter: unknown = { all: [] }, name = 'Everyone') {
  const segmentId = id('seg');
  await h.db.kysely
    .insertInto('segments')
    .values({
      id: segmentId,
      workspace_id: ws.id,
      name,
      filter: JSON.stringify(filter),
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return segmentId;
}

export async function insertContact(
  h: Harness,
  ws: TestWorkspace,
  c: {
    email: string;
    firstName?: string | null;
    lastName?: string | null;
    status?: 'SUBSCRIBED' | 'PENDING' | 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED';
    properties?: Record<string, unknown>;
  },
) {
  const contactId = id('ct');
  await h.db.kysely
    .insertInto('contacts')
    .values({
      id: contactId,
      workspace_id: ws.id,
      email: c.email.toLowerCase(),
      first_name: c.firstName ?? null,
      last_name: c.lastName ?? null,
      properties: JSON.stringify(c.properties ?? {}),
      status: c.status ?? 'SUBSCRIBED',
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  return contactId;
}

export async function setTopicChoice(
  h: Harness,
  ws: TestWorkspace,
  contactId: string,
  topicId: string,
  subscribed: boolean,
) {
  await h.db.kysely
    .insertInto('contact_topics')
    .values({
      workspace_id: ws.id,
      contact_id: contactId,
      topic_id: topicId,
      subscribed: subscribed ? 1 : 0,
      updated_at: now(),
    })
    .execute();
}
