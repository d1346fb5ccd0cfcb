import type { OperationDocs } from '../../http/operation-docs.js';

const topic = {
  id: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9',
  name: 'Product news',
  defaultSubscription: 'OPT_IN',
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};

const tags = ['topics'];

export const topicsDocs: OperationDocs = {
  'POST /v1/topics': {
    tags,
    summary: 'Create a topic',
    description:
      'A topic is a subject people subscribe to or not (product news, events, …); a broadcast with a `topicId` goes only to the contacts subscribed to it. `defaultSubscription` is fixed at creation: `OPT_IN` subscribes every contact unless they opt out, `OPT_OUT` subscribes nobody until they opt in. Needs `write:contacts`.',
    request: { name: 'Product news', defaultSubscription: 'OPT_IN' },
    response: topic,
  },
  'GET /v1/topics': {
    tags,
    summary: 'List topics',
    description:
      "The workspace's topics, newest first, with cursor pagination (`limit` 1–100, default 20; `cursor` from the previous page's `nextCursor`). Needs `read:contacts`.",
    response: { data: [topic], nextCursor: null },
  },
  'GET /v1/topics/{topicId}': {
    tags,
    summary: 'Get a topic',
    description:
      'One topic of the workspace; 404 for an unknown id or one of another workspace. Needs `read:contacts`.',
    response: topic,
  },
  'PUT /v1/topics/{topicId}': {
    tags,
    summary: 'Rename a topic',
    description:
      'Changes the name; `defaultSubscription` cannot change after creation (422 when it differs). Needs `write:contacts`.',
    request: { name: 'Releases and product news' },
    response: { ...topic, name: 'Releases and product news', updatedAt: '2026-11-22T14:30:00.000Z' },
  },
  'DELETE /v1/topics/{topicId}': {
    tags,
    summary: 'Delete a topic',
    description:
      "Deletes the topic and every contact's choice about it. 409 resource_in_use while a broadcast uses it. Answers 204. Needs `write:contacts`.",
  },
};
