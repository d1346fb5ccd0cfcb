import type { ContactStatus } from '../../db/schema.js';
import type { NewEvent } from '../../outbox/index.js';

/**
 * The contact events (docs/events.md), made here and written by the contact feature in the transaction of the
 * change: `contact.created` for a new contact, `contact.updated` when a change keeps its status,
 * `contact.subscribed` when a contact becomes SUBSCRIBED (created so, confirmed, set) or a topic subscription
 * turns on (`data.topicId`), `contact.unsubscribed` when it becomes UNSUBSCRIBED or a topic subscription turns off,
 * `contact.deleted`. A bounce or a complaint writes its `email.*` event instead (src/sending/bounces).
 */
export type ContactSource =
  'api' | 'import' | 'form' | 'confirmation' | 'unsubscribe' | 'report' | 'suppression' | 'automation';

export function createdEvents(
  contactId: string,
  email: string,
  status: ContactStatus,
  source: ContactSource,
  extra: Record<string, unknown> = {},
): NewEvent[] {
  const events: NewEvent[] = [{ type: 'contact.created', contactId, data: { email, status, source, ...extra } }];
  if (status === 'SUBSCRIBED')
    events.push({ type: 'contact.subscribed', contactId, data: { email, source, ...extra } });
  return events;
}

/** The status events of a move from `before` to `after` (none when nothing moved). */
export function statusEvents(
  contactId: string,
  email: string,
  before: ContactStatus | null,
  after: ContactStatus,
  source: ContactSource,
  extra: Record<string, unknown> = {},
): NewEvent[] {
  if (before === after) return [];
  if (after === 'SUBSCRIBED')
    return [{ type: 'contact.subscribed', contactId, data: { email, from: before, source, ...extra } }];
  if (after === 'UNSUBSCRIBED')
    return [{ type: 'contact.unsubscribed', contactId, data: { email, from: before, source, ...extra } }];
  return [];
}

export function updatedEvent(
  contactId: string,
  email: string,
  fields: readonly string[],
  source: ContactSource,
  extra: Record<string, unknown> = {},
): NewEvent {
  return { type: 'contact.updated', contactId, data: { email, fields, source, ...extra } };
}

/** Topic subscriptions that changed (effective before → after). */
export function topicEvents(
  contactId: string,
  email: string,
  changes: readonly { topicId: string; subscribed: boolean }[],
  source: ContactSource,
  extra: Record<string, unknown> = {},
): NewEvent[] {
  return changes.map((c) => ({
    type: c.subscribed ? ('contact.subscribed' as const) : ('contact.unsubscribed' as const),
    contactId,
    data: { email, topicId: c.topicId, source, ...extra },
  }));
}
