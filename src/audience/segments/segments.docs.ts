import type { OperationDocs } from '../../http/operation-docs.js';

const filter = {
  all: [
    { field: 'properties.plan', op: 'eq', value: 'pro' },
    { topic: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9', subscribed: true },
  ],
};
const segment = {
  id: 'seg_01JDB3R4T6V8X0Z2B4D6F8H0K2',
  name: 'Pro customers who want news',
  filter,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};
const ada = {
  id: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  status: 'SUBSCRIBED',
};
const GRAMMAR =
  'A filter is `{ "all": [...] }`, `{ "any": [...] }` or a condition: `{ "field", "op", "value" }` over `email`, `firstName`, `lastName`, `status`, `createdAt` or `properties.<key>` (ops `eq neq contains startsWith endsWith exists notExists gt gte lt lte in`), or `{ "topic": "<topicId>", "subscribed": true|false }`; at most 8 levels deep.';

const tags = ['segments'];

export const segmentsDocs: OperationDocs = {
  'POST /v1/segments': {
    tags,
    summary: 'Create a segment',
    description: `A saved filter over contacts, for a broadcast's \`segmentId\`, an export or an automation trigger. ${GRAMMAR} A filter that breaks the grammar or names an unknown topic is 422. Needs \`write:contacts\`.`,
    request: { name: segment.name, filter },
    response: segment,
  },
  'GET /v1/segments': {
    tags,
    summary: 'List segments',
    description:
      "The workspace's segments, newest first, with cursor pagination (`limit`, `cursor`). Needs `read:contacts`.",
    response: { data: [segment], nextCursor: null },
  },
  'POST /v1/segments/preview': {
    tags,
    summary: 'Preview a filter',
    description: `Counts the contacts a filter matches (and how many of them are SUBSCRIBED) and returns a sample, without saving anything: what a segment editor shows while typing. ${GRAMMAR} Needs \`read:contacts\`.`,
    request: { filter: { field: 'properties.plan', op: 'eq', value: 'pro' } },
    response: { count: 1, subscribed: 1, sample: [ada] },
  },
  'GET /v1/segments/{segmentId}': {
    tags,
    summary: 'Get a segment',
    description: 'One segment with its filter. Needs `read:contacts`.',
    response: segment,
  },
  'PUT /v1/segments/{segmentId}': {
    tags,
    summary: 'Update a segment',
    description:
      'Partial: `name` and/or `filter`; a filter given replaces the stored one whole. Broadcasts that use the segment and have not been sent yet go to the new audience. Needs `write:contacts`.',
    request: {
      filter: {
        any: [
          { field: 'properties.plan', op: 'in', value: ['pro', 'team'] },
          { field: 'email', op: 'endsWith', value: '@acme.example' },
        ],
      },
    },
    response: {
      ...segment,
      filter: {
        any: [
          { field: 'properties.plan', op: 'in', value: ['pro', 'team'] },
          { field: 'email', op: 'endsWith', value: '@acme.example' },
        ],
      },
      updatedAt: '2026-11-22T14:30:00.000Z',
    },
  },
  'DELETE /v1/segments/{segmentId}': {
    tags,
    summary: 'Delete a segment',
    description: 'Answers 204. 409 resource_in_use while a broadcast uses it. Needs `write:contacts`.',
  },
  'GET /v1/segments/{segmentId}/contacts': {
    tags,
    summary: 'List the contacts of a segment',
    description:
      'The contacts the segment matches now, whatever their status, newest first, with cursor pagination. Needs `read:contacts`.',
    response: {
      data: [
        {
          ...ada,
          properties: { plan: 'pro' },
          suppressed: false,
          topics: [{ id: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9', name: 'Product news', subscribed: true }],
          createdAt: '2026-11-21T10:00:00.000Z',
          updatedAt: '2026-11-21T10:00:00.000Z',
        },
      ],
      nextCursor: null,
    },
  },
  'GET /v1/segments/{segmentId}/count': {
    tags,
    summary: 'Count the contacts of a segment',
    description:
      'How many contacts the segment matches now, and how many of them are SUBSCRIBED (the ones a broadcast would reach, before topic and suppressions). Needs `read:contacts`.',
    response: { count: 1840, subscribed: 1712 },
  },
};
