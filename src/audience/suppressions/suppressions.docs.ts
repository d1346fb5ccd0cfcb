import type { OperationDocs } from '../../http/operation-docs.js';

const manual = {
  email: 'no-more@example.com',
  reason: 'MANUAL',
  deliveryId: null,
  broadcastId: null,
  detail: 'asked by phone',
  createdAt: '2026-11-21T10:00:00.000Z',
  source: null,
};
const bounced = {
  email: 'gone@example.net',
  reason: 'BOUNCED',
  deliveryId: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8V',
  broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
  detail: '550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown',
  createdAt: '2026-11-20T17:45:12.301Z',
  source: {
    type: 'broadcast',
    broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
    automationId: null,
    stepId: null,
    name: 'November newsletter',
  },
};

const tags = ['suppressions'];

export const suppressionsDocs: OperationDocs = {
  'GET /v1/suppressions': {
    tags,
    summary: 'List suppressed addresses',
    description:
      "Addresses that never get a broadcast or automation email, whatever their contact record says, newest first: hard bounces, complaints, unsubscribes and manual entries. Filter with `reason`, `q` (a case-insensitive part of the address, such as `@example.com`), `since` and `before` (when the entry was added). `source` says what sent the message an entry came from: a broadcast, or an automation's send step. Cursor pagination. Needs `read:contacts`.",
    response: { data: [manual, bounced], nextCursor: null },
  },
  'POST /v1/suppressions': {
    tags,
    summary: 'Suppress an address',
    description:
      '201 with the new entry; 200 with the existing one when the address is already suppressed (its first reason stands).',
    request: { email: 'no-more@example.com', reason: 'MANUAL', detail: 'asked by phone' },
    response: manual,
  },
  'POST /v1/suppressions/bulk': {
    tags,
    summary: 'Suppress many addresses',
    description:
      'Up to 1000 addresses (MANUAL) in one transaction, such as a pasted list. Each valid address is added, or left as it is when it is already suppressed (its first reason stands); what is not an email address is reported in `invalid` and skipped. An address given twice counts once. Needs `write:contacts`.',
    request: { emails: ['no-more@example.com', 'Gone@Example.net', 'not an address'], detail: 'list from the shop' },
    response: {
      added: ['no-more@example.com'],
      alreadySuppressed: ['gone@example.net'],
      invalid: [{ index: 2, email: 'not an address', message: 'is not a valid email address' }],
    },
  },
  'GET /v1/suppressions/{email}': {
    tags,
    summary: 'Get the entry of an address',
    description:
      'Why and since when an address is suppressed; 404 when it is not. The address is matched case-insensitively. Needs `read:contacts`.',
    response: bounced,
  },
  'DELETE /v1/suppressions/{email}': {
    tags,
    summary: 'Lift the suppression of an address',
    description:
      'The address may be mailed again once its contact is SUBSCRIBED; its status is not changed (set it with PUT /v1/contacts/{id}).',
  },
};
