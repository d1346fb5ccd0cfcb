import type { OperationDocs } from '../../http/operation-docs.js';

const endpoint = {
  id: 'wh_01JDB3X4D6F8H0K2M4P6R8T0V2',
  url: 'https://crm.example.com/hooks/formcast',
  eventTypes: ['contact.created', 'contact.unsubscribed', 'email.bounced'],
  description: 'CRM sync',
  enabled: true,
  disabledReason: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};
const created = { ...endpoint, secret: 'whsec_Rp1LbDafMyCwE2MHCjKBuCpQhcR+gSmf' };
const succeeded = {
  id: 'whd_01JDB3Y8F0H2K4M6P8R0T2V4X6',
  eventId: 'evt_01JDB3N2W4Y6A8C0E2G4J6M8Q1',
  eventType: 'contact.created',
  status: 'SUCCEEDED',
  attempts: 2,
  nextAttemptAt: null,
  lastStatusCode: 204,
  lastDurationMs: 87,
  lastError: null,
  createdAt: '2026-11-21T10:00:00.120Z',
  deliveredAt: '2026-11-21T10:00:05.311Z',
  attemptLog: [
    { attemptedAt: '2026-11-21T10:00:00.190Z', statusCode: 503, durationMs: 112, error: 'HTTP 503' },
    { attemptedAt: '2026-11-21T10:00:05.224Z', statusCode: 204, durationMs: 87, error: null },
  ],
};
const pending = {
  ...succeeded,
  id: 'whd_01JDB48D5F7H9K1N3Q5S7U9W1Y',
  eventId: null,
  eventType: 'webhook.test',
  status: 'PENDING',
  attempts: 0,
  nextAttemptAt: '2026-11-21T10:30:00.000Z',
  lastStatusCode: null,
  lastDurationMs: null,
  createdAt: '2026-11-21T10:30:00.000Z',
  deliveredAt: null,
  attemptLog: [],
};

const tags = ['webhooks'];

export const webhooksDocs: OperationDocs = {
  'POST /v1/webhooks': {
    tags,
    summary: 'Register a webhook endpoint',
    description:
      "The answer carries the endpoint's signing secret: the only time it is shown (keep it now; rotate the secret if it is lost). Needs `write:webhooks`.",
    request: {
      url: 'https://crm.example.com/hooks/formcast',
      eventTypes: ['contact.created', 'contact.unsubscribed', 'email.bounced'],
      description: 'CRM sync',
    },
    response: created,
  },
  'GET /v1/webhooks': {
    tags,
    summary: 'List webhook endpoints',
    description:
      "The workspace's endpoints, newest first, cursor pagination; without their secrets (shown only at creation and rotation). Needs `read:webhooks`.",
    response: { data: [endpoint], nextCursor: null },
  },
  'GET /v1/webhooks/{webhookId}': {
    tags,
    summary: 'Get a webhook endpoint',
    description:
      'One endpoint (without its signing secret: shown only at creation and rotation), the event types it gets, and whether it is enabled (`disabledReason` says why not: an endpoint that failed for 5 days in a row is disabled by itself). Needs `read:webhooks`.',
    response: endpoint,
  },
  'PUT /v1/webhooks/{webhookId}': {
    tags,
    summary: 'Update a webhook endpoint',
    description:
      'url, eventTypes, description (null clears it), enabled. Disabling fails the deliveries waiting for it; enabling clears disabledReason and the failure count.',
    request: { eventTypes: ['contact.created', 'contact.updated', 'contact.unsubscribed'], enabled: true },
    response: {
      ...endpoint,
      eventTypes: ['contact.created', 'contact.updated', 'contact.unsubscribed'],
      updatedAt: '2026-11-22T14:30:00.000Z',
    },
  },
  'DELETE /v1/webhooks/{webhookId}': {
    tags,
    summary: 'Delete a webhook endpoint',
    description:
      'Deletes the endpoint and its delivery log; nothing more is sent to it. Answers 204. Needs `write:webhooks`.',
  },
  'POST /v1/webhooks/{webhookId}/rotate-secret': {
    tags,
    summary: 'Rotate the signing secret',
    description:
      'A new secret, shown in this answer only; the previous one keeps signing for 24 hours (two `v1,` entries in webhook-signature). Also how a lost secret is replaced. Needs `write:webhooks`.',
    response: { ...endpoint, secret: 'whsec_bf6R9RQdoDVBhqSOXlK6gjytbiOf+tql', updatedAt: '2026-11-22T14:30:00.000Z' },
  },
  'POST /v1/webhooks/{webhookId}/test': {
    tags,
    summary: 'Send a test event',
    description:
      '202 with the delivery, PENDING: the worker sends it within moments; follow it in the delivery log. 409 invalid_state when the endpoint is disabled.',
    response: pending,
  },
  'GET /v1/webhooks/{webhookId}/deliveries': {
    tags,
    summary: 'The delivery log of an endpoint',
    description: 'Each delivery with its attempts (status code, duration, error) and its next try.',
    response: { data: [succeeded], nextCursor: null },
  },
  'GET /v1/webhooks/{webhookId}/deliveries/{deliveryId}': {
    tags,
    summary: 'Get a webhook delivery',
    description:
      'One delivery: its `webhook-id` (the delivery id, the same on every attempt), status, every attempt with the HTTP status, duration and error, and when the next one is due. Needs `read:webhooks`.',
    response: succeeded,
  },
  'POST /v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry': {
    tags,
    summary: 'Retry a webhook delivery',
    description:
      'A SUCCEEDED or FAILED delivery becomes PENDING, due now, with the same webhook-id and body and a new round of attempts. 409 invalid_state while it is PENDING or SENDING, or when the endpoint is disabled.',
    response: {
      ...succeeded,
      status: 'PENDING',
      attempts: 0,
      nextAttemptAt: '2026-11-22T14:30:00.000Z',
      deliveredAt: null,
    },
  },
};
