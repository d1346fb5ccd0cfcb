import type { OperationDocs } from '../../http/operation-docs.js';

const topic = { id: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9', name: 'Product news', subscribed: true };
const contact = {
  id: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  properties: { plan: 'pro', company: 'Analytical Engines' },
  status: 'SUBSCRIBED',
  timezone: 'Europe/London',
  suppressed: false,
  topics: [topic],
  tags: ['VIP', 'Customer'],
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
};
const grace = {
  ...contact,
  id: 'ct_01JDB3N1V3X5Z7B9D1F3H5K7M9',
  email: 'grace@example.com',
  firstName: 'Grace',
  lastName: 'Hopper',
  properties: { plan: 'free' },
  tags: [],
  createdAt: '2026-11-20T16:41:09.220Z',
  updatedAt: '2026-11-20T16:41:09.220Z',
};
const importDone = {
  id: 'imp_01JDB3P7R9T1V3X5Z7B9D1F3H5',
  status: 'COMPLETED',
  format: 'CSV',
  total: 3,
  created: 2,
  updated: 0,
  skipped: 1,
  suppressed: 0,
  errors: [{ line: 4, reason: 'email: not an email address' }],
  errorsTruncated: 0,
  error: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  finishedAt: '2026-11-21T10:00:00.180Z',
};
const events = [
  {
    id: 'evt_01JDB4A0C2E4G6J8M0P2R4T6V8',
    type: 'email.opened',
    occurredAt: '2026-11-21T12:03:44.512Z',
    contactId: contact.id,
    broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
    deliveryId: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8V',
    data: { machine: false, userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64)' },
    source: {
      type: 'automation',
      broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
      automationId: 'aut_01JDB2Q4S6U8W0Y2A4C6E8G0J2',
      stepId: 'welcome',
      name: 'Welcome series',
    },
  },
  {
    id: 'evt_01JDB3N2W4Y6A8C0E2G4J6M8Q1',
    type: 'contact.created',
    occurredAt: '2026-11-21T10:00:00.000Z',
    contactId: contact.id,
    broadcastId: null,
    deliveryId: null,
    data: { email: 'ada@example.com', status: 'SUBSCRIBED', source: 'api' },
    source: null,
  },
];

const tags = ['contacts'];

export const contactsDocs: OperationDocs = {
  'POST /v1/contacts': {
    tags,
    summary: 'Create or update a contact',
    description:
      'Creates the contact (201, Location) or updates the existing contact with the same (normalised) email (200). ' +
      'Present fields replace the stored value whole; omitted fields are unchanged; an existing contact keeps its status unless `status` is given.',
    request: {
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      properties: { plan: 'pro', company: 'Analytical Engines' },
      topics: [{ id: topic.id, subscribed: true }],
      tags: ['VIP', 'Customer'],
    },
    response: contact,
  },
  'GET /v1/contacts': {
    tags,
    summary: 'List contacts',
    description:
      "The workspace's contacts, newest first, with cursor pagination (`limit` 1–100, `cursor`). Filters: `email` (exact, after normalisation), `status`, `topicId` (contacts subscribed to the topic, by their own choice or its default), `tag` (contacts with the tag, in any case) and `q` (search: a case-insensitive substring of the email, first name or last name; `%` and `_` match themselves). Filters combine (all must hold). Needs `read:contacts`.",
    response: { data: [contact, grace], nextCursor: 'Y3RfMDFKREIzTjFWM1g1WjdCOUQxRjNINUs3TTk' },
  },
  'GET /v1/contacts/count': {
    tags,
    summary: 'Count contacts',
    description:
      'How many contacts `GET /v1/contacts` lists with the same filters (`email`, `status`, `topicId`, `tag`, `q`), over all its pages: an exact count, ' +
      'read from indexes only (a search reads the contacts themselves) (docs/contacts.md, bench:contact-count). Needs `read:contacts`.',
    response: { count: 1234 },
  },
  'GET /v1/contacts/export': {
    tags,
    summary: 'Export contacts as CSV',
    description:
      'Streams `text/csv` (RFC 4180, UTF-8, CRLF) as an attachment: a header row, then one row per contact the segment matches ' +
      '(every contact without `segmentId`), whatever its status, oldest first. Columns: id, email, firstName, lastName, status, suppressed, ' +
      'properties (a JSON object), createdAt, updatedAt, tags (comma-separated; quoted tags when one holds a comma, which the import reads back). A field holding a comma, a double quote or a line break is quoted (quotes doubled). ' +
      'The contacts are read a page at a time while the response is written, so any size of segment can be exported. ' +
      'A segment that is not in the workspace is 404 before anything is sent.',
    response:
      'id,email,firstName,lastName,status,suppressed,properties,createdAt,updatedAt,tags\r\nct_01JDB3N2W4Y6A8C0E2G4J6M8Q0,ada@example.com,Ada,Lovelace,SUBSCRIBED,false,"{""plan"":""pro"",""company"":""Analytical Engines""}",2026-11-21T10:00:00.000Z,2026-11-21T10:00:00.000Z,"VIP,Customer"\r\n',
  },
  'GET /v1/tags': {
    tags,
    summary: 'List tags',
    description:
      "The workspace's tags with how many contacts have each, most used first (`limit` 1–1000, default 100). A tag spelled differently on different contacts is one tag. An addition to the contract (for the console's tag filter). Needs `read:contacts`.",
    response: {
      data: [
        { tag: 'Customer', contacts: 1280 },
        { tag: 'VIP', contacts: 42 },
      ],
    },
  },
  'GET /v1/contacts/{contactId}': {
    tags,
    summary: 'Get a contact',
    description:
      'One contact with its properties, status, topic subscriptions and whether the address is suppressed. Needs `read:contacts`.',
    response: contact,
  },
  'PUT /v1/contacts/{contactId}': {
    tags,
    summary: 'Update a contact',
    description:
      'Partial: present fields replace the stored value whole (`properties` and `tags` included: send every property or tag to keep), omitted ones are unchanged, `null` clears `firstName` or `lastName`. An email another contact has is 409 contact_exists (with its `contactId`). A suppressed address set to SUBSCRIBED stays suppressed (`suppressed: true`). Needs `write:contacts`.',
    request: {
      properties: { plan: 'team', company: 'Analytical Engines' },
      topics: [{ id: topic.id, subscribed: false }],
    },
    response: {
      ...contact,
      properties: { plan: 'team', company: 'Analytical Engines' },
      topics: [{ ...topic, subscribed: false }],
      updatedAt: '2026-11-22T14:30:00.000Z',
    },
  },
  'DELETE /v1/contacts/{contactId}': {
    tags,
    summary: 'Delete a contact',
    description:
      'Deletes the contact and its topic choices (a `contact.deleted` event is recorded); its automation runs stop. A suppression of the address outlives it. Answers 204. Needs `write:contacts`.',
  },
  'GET /v1/contacts/{contactId}/activity': {
    tags,
    summary: "A contact's activity",
    description:
      "The contact's events (docs/events.md): created, updated, subscribed, unsubscribed; emails sent, opened, clicked, bounced; form submissions. Each event also has `source`: what sent the message it is about, a broadcast or an automation's send step (an automation's email names a `broadcastId` the broadcasts API does not show), or null.",
    response: { data: events, nextCursor: null },
  },
  'POST /v1/contacts/imports': {
    tags,
    summary: 'Import contacts (CSV or NDJSON)',
    description:
      'Streams the body (up to 1 GiB) and creates or updates contacts by email, in batches of 1000 rows per transaction. ' +
      'CSV (delimiter `,`, `;` or tab, detected from the header): a header row naming the columns (email required; firstName, lastName, name, status, attributes, tags; ' +
      'matched without case or separators, with the names of Mailchimp, Kit and Listmonk exports such as "Email Address", "First Name", email_address, state; ' +
      'any other column is a property, "Phone Number" becoming phoneNumber). `?columns=` maps headers explicitly. ' +
      'A tags column (Mailchimp\'s TAGS) holds tags separated by commas or Mailchimp\'s quoted list ("VIP","Customer"); a row\'s tags are added to the contact\'s (an import never removes one, nor goes past 100). ' +
      'NDJSON: one JSON object per line, { email, firstName?, lastName?, status?, properties?, tags? }. Rejected rows are skipped and listed with their line. ' +
      'Answers 201 with the finished job (COMPLETED, or FAILED when the stream is malformed part-way or the server fails part-way; the rows committed before it are kept).',
    request:
      'email,firstName,lastName,plan\nada@example.com,Ada,Lovelace,pro\ngrace@example.com,Grace,Hopper,free\nnot-an-address,Nobody,,free\n',
    response: importDone,
  },
  'GET /v1/contacts/imports': {
    tags,
    summary: 'List imports',
    description:
      "The workspace's imports, newest first, with their counts and status, with cursor pagination. Needs `read:contacts`.",
    response: { data: [importDone], nextCursor: null },
  },
  'GET /v1/contacts/imports/{importId}': {
    tags,
    summary: 'Get an import',
    description:
      "An import's status (`RUNNING`, `COMPLETED` or `FAILED`) and counts: rows read, contacts created and updated, rows skipped (each listed with its line and reason), and rows whose address is suppressed. Poll it while it runs. Needs `read:contacts`.",
    response: importDone,
  },
  'GET /v1/stats/contacts': {
    tags,
    summary: 'New contacts per hour',
    description:
      "Counted by the database in one grouped query over the window's contacts; hours are UTC, so a client folds them into its own local days.",
    response: {
      since: '2026-11-20T11:00:00.000Z',
      until: '2026-11-21T10:59:59.999Z',
      total: 3,
      hours: [
        { hour: '2026-11-20T16:00:00.000Z', created: 1 },
        { hour: '2026-11-21T10:00:00.000Z', created: 2 },
      ],
    },
  },
};
