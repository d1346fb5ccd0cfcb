import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['events'];

export const eventsDocs: OperationDocs = {
  'GET /v1/events': {
    tags,
    summary: 'List events',
    description:
      'Everything that happened in the workspace: emails sent, bounced, opened and clicked; contacts created, updated, subscribed, ' +
      'unsubscribed and deleted; form submissions; broadcast status moves. Filter by `type`, `contactId`, `broadcastId` and `since`. Kept EVENTS_RETENTION_DAYS (400) days.',
    response: {
      data: [
        {
          id: 'evt_01JDB4A0C2E4G6J8M0P2R4T6V9',
          type: 'email.clicked',
          occurredAt: '2026-11-21T12:05:10.331Z',
          contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
          broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
          deliveryId: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8V',
          data: { url: 'https://example.com/blog/november', machine: false },
        },
        {
          id: 'evt_01JDB4A0C2E4G6J8M0P2R4T6V8',
          type: 'email.opened',
          occurredAt: '2026-11-21T12:03:44.512Z',
          contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
          broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
          deliveryId: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8V',
          data: { machine: false },
        },
      ],
      nextCursor: 'ZXZ0XzAxSkRCNEEwQzJFNEc2SjhNMFAyUjRUNlY4',
    },
  },
  'POST /v1/events/track': {
    tags,
    summary: 'Track a custom event',
    description:
      'An `event.tracked` event (data: `name`, `properties`) for the contact named by `contactId` or `email` (404 when there is none). ' +
      'Automations with an `event` trigger of that name start a run for the contact (docs/automations.md). ' +
      'Each workspace may track TRACK_EVENTS_PER_MINUTE events (600) and TRACK_BYTES_PER_MINUTE bytes of event data (1 MiB) a minute: ' +
      'over either, 429 `rate_limited` with Retry-After, and nothing is written.',
    request: { email: 'ada@example.com', name: 'trial.started', properties: { plan: 'pro', seats: 5 } },
    response: { id: 'evt_01JDB4B1D3F5H7K9M1P3R5T7V9' },
  },
};
