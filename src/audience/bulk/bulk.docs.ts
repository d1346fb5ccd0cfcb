import type { OperationDocs } from '../../http/operation-docs.js';

const tags = ['contacts'];
const job = {
  id: 'bulk_01JDB4F2H4K6M8P0R2T4V6X8Z0',
  action: 'tag',
  tag: 'VIP',
  topicId: null,
  status: 'RUNNING',
  matched: 1280,
  processed: 500,
  failed: 0,
  error: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.412Z',
  finishedAt: null,
};

export const bulkDocs: OperationDocs = {
  'POST /v1/contacts/bulk': {
    tags,
    summary: 'Act on many contacts',
    description:
      'Starts a bulk action on contacts named by `ids` (up to 10,000) or matched by a segment `filter` (give one of them): ' +
      "`tag` / `untag` (needs `tag`), `subscribe` / `unsubscribe` (to the topic `topicId`, or without it the contact's status, as PUT /v1/contacts/{id} sets it: a suppressed address stays suppressed), or `delete`. " +
      'Answers 202 `{ jobId, matched }` (`Location` names the job) and the worker acts on the contacts in batches; poll GET /v1/contacts/bulk/{jobId}. ' +
      'Each contact gets the events the single-contact API writes. A contact created after the request is not acted on. ' +
      'A bad body, an unknown topic, or an id that names no contact of the workspace is 422 and starts nothing. Needs `write:contacts`.',
    request: { action: 'tag', tag: 'VIP', filter: { field: 'properties.plan', op: 'eq', value: 'pro' } },
    response: { jobId: job.id, matched: job.matched },
  },
  'GET /v1/contacts/bulk/{jobId}': {
    tags,
    summary: 'Get a bulk action',
    description:
      "A bulk action's progress: `status` (`RUNNING`, `COMPLETED`, `FAILED`), `matched`, `processed` (failed included), `failed` (a contact the action could not be applied to: a 101st tag), `error` and the timestamps. Needs `read:contacts`.",
    response: job,
  },
};
