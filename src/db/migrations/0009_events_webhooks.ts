import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * Engagement and the event stream (docs/events.md): one `events` table written in the transaction of the change
 * it reports; the webhook endpoints, one delivery per (endpoint, event) and its attempts (docs/webhooks.md);
 * per-broadcast tracking switches.
 */
export function eventsAndWebhooks(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('occurred_at', ts, (c) => c.notNull())
        // No foreign keys: an event outlives the contact, broadcast and delivery it names (retention prunes it).
        .addColumn('contact_id', 'text')
        .addColumn('broadcast_id', 'text')
        .addColumn('delivery_id', 'text')
        .addColumn('data', json, (c) => c.notNull())
        // Opens and clicks: by a machine (Apple MPP, scanners), kept but left out of unique counts.
        .addColumn('machine', 'integer', (c) => c.notNull().defaultTo(0))
        // Clicks: the link's URL (GET /v1/broadcasts/{id}/links groups by it).
        .addColumn('url', 'text')
        // 0 until the webhook dispatcher has fanned the event out to the endpoints subscribed to it.
        .addColumn('dispatched', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createIndex('events_workspace_type')
        .on('events')
        .columns(['workspace_id', 'type', 'id'])
        .execute();
      await db.schema
        .createIndex('events_contact')
        .on('events')
        .columns(['workspace_id', 'contact_id', 'id'])
        .execute();
      // A broadcast's stats, links and timeline (tracking.repository.ts) read ranges of (workspace, broadcast, type).
      // The last column is the id, not the delivery: an open or click is then appended at the end of its range
      // instead of landing at a random place in it. With the delivery there, every event of a tracking batch
      // dirtied a page of its own in this index, the largest cost of recording a hit (bench/README.md, bench:track).
      await db.schema
        .createIndex('events_broadcast')
        .on('events')
        .columns(['workspace_id', 'broadcast_id', 'type', 'id'])
        .execute();
      await db.schema.createIndex('events_occurred').on('events').column('occurred_at').execute();
      await db.schema
        .createIndex('events_undispatched')
        .on('events')
        .column('id')
        .where(sql.ref('dispatched'), '=', 0)
        .execute();

      await db.schema
        .alterTable('broadcasts')
        .addColumn('track_opens', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('broadcasts')
        .addColumn('track_clicks', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();

      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('event_types', json, (c) => c.notNull()) // JSON array of event types
        .addColumn('description', 'text')
        .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('disabled_reason', 'text')
        .addColumn('secret', 'text', (c) => c.notNull()) // sealed with the server secret (never logged)
        .addColumn('previous_secret', 'text') // after a rotation: still signs alongside the new one until…
        .addColumn('previous_secret_until', ts)
        .addColumn('failing_since', ts) // the first failure after the last success; 5 days of it disables the endpoint
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_endpoints_workspace')
        .on('webhook_endpoints')
        .columns(['workspace_id', 'id'])
        .execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey()) // the webhook-id header: the same on every attempt
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('event_id', 'text') // null for webhook.test
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull()) // the exact body, the same on every attempt
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('PENDING', 'SENDING', 'SUCCEEDED', 'FAILED')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts)
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', ts)
        .addColumn('last_status_code', 'integer')
        .addColumn('last_duration_ms', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('delivered_at', ts)
        .execute();
      // One delivery per endpoint and event, whatever the dispatchers do.
      await db.schema
        .createIndex('webhook_deliveries_one_per_event')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'event_id'])
        .unique()
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_due')
        .on('webhook_deliveries')
        .columns(['status', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_endpoint')
        .on('webhook_deliveries')
        .columns(['workspace_id', 'endpoint_id', 'id'])
        .execute();
      await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempted_at', ts, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema
        .createIndex('webhook_attempts_delivery')
        .on('webhook_attempts')
        .columns(['delivery_id', 'id'])
        .execute();
    },
  };
}
