import type { Db } from '../../src/db/connection.js';
import { newId } from '../../src/lib/ids.js';

const now = () => new Date().toISOString();

/**
 * A SENT broadcast (with `from` and a topic, if given) and its delivery to the contact, inserted directly: the path of
 * that recipient's unsubscribe link (`/unsubscribe/{token}`), as the message carried it.
 */
export async function unsubscribeLink(
  db: Db,
  workspaceId: string,
  contactId: string,
  email: string,
  opts: { topicId?: string | null; from?: string | null } = {},
): Promise<string> {
  const broadcastId = newId('bc');
  await db.kysely
    .insertInto('broadcasts')
    .values({
      id: broadcastId,
      workspace_id: workspaceId,
      name: 'Monthly',
      status: 'SENT',
      from_address: opts.from ?? null,
      reply_to: null,
      subject: 'Hello',
      html: '<p>Hi</p>',
      text: null,
      preview_text: null,
      editor_content: null,
      topic_id: opts.topicId ?? null,
      segment_id: null,
      send_at: null,
      created_at: now(),
      updated_at: now(),
      sent_at: now(),
      materialized_at: now(),
      materialize_cursor: null,
      materialize_owner: null,
      materialize_lease_until: null,
      paused_reason: null,
      breaker_since: null,
      automation_id: null,
      automation_step_id: null,
    })
    .execute();
  const deliveryId = newId('dlv');
  const token = deliveryId
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(32, 'x')
    .slice(-32);
  await db.kysely
    .insertInto('deliveries')
    .values({
      id: deliveryId,
      workspace_id: workspaceId,
      broadcast_id: broadcastId,
      contact_id: contactId,
      email,
      status: 'SENT',
      attempts: 1,
      next_attempt_at: now(),
      lease_owner: null,
      lease_expires_at: null,
      handed_off_at: now(),
      last_error: null,
      smtp_response: '250 ok',
      message_id: null,
      unsubscribe_token: token,
      unsubscribed_at: null,
      created_at: now(),
      updated_at: now(),
      sent_at: now(),
      bounce_class: null,
      bounced_at: null,
      soft_bounced_at: null,
      complained_at: null,
      automation_run_id: null,
    })
    .execute();
  return `/unsubscribe/${token}`;
}
