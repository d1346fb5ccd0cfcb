import type { OperationDocs } from '../../http/operation-docs.js';

const BC = 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0';
const emailContent = {
  subject: 'Hi {{ contact.firstName | default: "there" }}, what is new in November',
  html: '<h1>November</h1><p>Read <a href="https://example.com/blog/november">the post</a>.</p>',
  text: 'November: https://example.com/blog/november',
  previewText: 'Three things we shipped',
  editorContent: null,
};
const zeroStats = {
  recipients: 0,
  queued: 0,
  sent: 0,
  failed: 0,
  bounced: 0,
  softBounced: 0,
  complained: 0,
  unsubscribed: 0,
  opened: 0,
  clicked: 0,
  uniqueOpens: 0,
  uniqueClicks: 0,
  machineOpens: 0,
};
const draft = {
  id: BC,
  name: 'November newsletter',
  status: 'DRAFT',
  from: 'Acme News <news@example.com>',
  emailContent,
  replyTo: 'hello@example.com',
  topicId: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9',
  segmentId: null,
  sendAt: null,
  sendAtLocal: false,
  localSendTime: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  sentAt: null,
  pausedReason: null,
  tracking: { opens: true, clicks: true },
  abTest: null,
  archive: false,
};
const sending = {
  ...draft,
  status: 'SENDING',
  updatedAt: '2026-11-21T12:00:00.000Z',
  stats: { ...zeroStats, recipients: 1840, queued: 1840 },
};
const sent = {
  ...draft,
  status: 'SENT',
  updatedAt: '2026-11-21T12:09:41.377Z',
  sentAt: '2026-11-21T12:09:41.377Z',
  stats: {
    recipients: 1840,
    queued: 0,
    sent: 1821,
    failed: 3,
    bounced: 16,
    softBounced: 4,
    complained: 1,
    unsubscribed: 7,
    opened: 1133,
    clicked: 402,
    uniqueOpens: 912,
    uniqueClicks: 288,
    machineOpens: 231,
  },
};
const withStats = (status: string, extra: Record<string, unknown> = {}) => ({ ...sending, status, ...extra });
const CREATE_FIELDS =
  '`from` must be on a VERIFIED domain of the workspace (422 sender_domain_not_verified); `topicId` and `segmentId` must name a topic and segment of the workspace (422 invalid_reference). `subject`, `html`, `text` and `previewText` are Liquid templates with `contact`, `broadcast`, `unsubscribe_url` and `workspace` (`name`, `postal_address`) in scope; one that does not parse is 422 validation_failed. When `emailContent.editorContent` is a block document (`{ "type": "formcast/blocks", … }`, contract §16) the service renders `html` and `text` from it on this write, ignoring any html or text sent with it; a document that breaks the grammar is 422 validation_failed at the JSON Pointer of the bad block (`/emailContent/editorContent/blocks/3/url`).';

const tags = ['broadcasts'];

export const broadcastsDocs: OperationDocs = {
  'POST /v1/broadcasts': {
    tags,
    summary: 'Create a broadcast',
    description: `Create Broadcast: a DRAFT (201, with \`Location\`). Only \`name\` is required; the rest can come later with PUT. ${CREATE_FIELDS} \`tracking\` defaults to the workspace's settings. Without \`from\` (omitted, not \`null\`), the draft takes the workspace's default sender (\`settings.defaultFrom\`, PUT /v1/workspace) while its domain is verified. Needs \`write:broadcasts\`.`,
    request: {
      name: 'November newsletter',
      from: 'Acme News <news@example.com>',
      replyTo: 'hello@example.com',
      topicId: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9',
      emailContent: {
        subject: emailContent.subject,
        html: emailContent.html,
        text: emailContent.text,
        previewText: emailContent.previewText,
      },
    },
    response: draft,
  },
  'GET /v1/broadcasts': {
    tags,
    summary: 'List broadcasts',
    description:
      "The workspace's broadcasts, newest first, filtered by `status` if given, with cursor pagination. Needs `read:broadcasts`.",
    response: { data: [sent], nextCursor: null },
  },
  'GET /v1/broadcasts/{broadcastId}': {
    tags,
    summary: 'Get a broadcast',
    description:
      'One broadcast with its content and, once it is sending, its `stats`: recipients, queued, sent, failed, bounced, complained and unsubscribed; opens and clicks (unique ones by people; machine opens apart). Needs `read:broadcasts`.',
    response: sent,
  },
  'PUT /v1/broadcasts/{broadcastId}': {
    tags,
    summary: 'Update or schedule a broadcast',
    description: `DRAFT or SCHEDULED only (409 broadcast_not_editable otherwise). Partial: a field omitted is unchanged, present replaces, \`null\` clears. A future \`sendAt\` schedules it (SCHEDULED; it must be complete: 422 broadcast_incomplete), \`sendAt: null\` returns it to DRAFT, a past one is 422. With \`sendAtLocal: true\` it sends at \`sendAt\`'s wall-clock time (read in the workspace's settings.timezone) in each recipient's own zone, and stays SENDING until the last zone's turn; a zone whose time has passed gets it at once, and a time past in every zone of the audience is 422 (docs/sending.md, "Local-time sending"). ${CREATE_FIELDS} Needs \`write:broadcasts\`.`,
    request: { sendAt: '2026-11-25T08:00:00.000Z', sendAtLocal: true },
    response: {
      ...draft,
      status: 'SCHEDULED',
      sendAt: '2026-11-25T08:00:00.000Z',
      sendAtLocal: true,
      localSendTime: '2026-11-25T08:00:00',
      updatedAt: '2026-11-22T14:30:00.000Z',
    },
  },
  'DELETE /v1/broadcasts/{broadcastId}': {
    tags,
    summary: 'Delete a DRAFT broadcast',
    description:
      'Answers 204. Anything but a DRAFT is 409 invalid_state: cancel a scheduled one first; sent ones stay for their stats. Needs `write:broadcasts`.',
  },
  'POST /v1/broadcasts/{broadcastId}/send': {
    tags,
    summary: 'Send a broadcast now',
    description:
      "DRAFT or SCHEDULED → SENDING (202): the audience is fixed now (the segment's SUBSCRIBED contacts, or all, with the topic's subscribers only when there is a topic, never a suppressed address) and each recipient gets one personalised message with its own unsubscribe link. It must be complete: `from` on a verified domain, a subject, html or text (422 broadcast_incomplete lists what is missing). No body. Needs `write:broadcasts`.",
    response: sending,
  },
  'GET /v1/broadcasts/{broadcastId}/deliveries': {
    tags,
    summary: 'List the deliveries of a broadcast',
    description:
      'One row per recipient, newest first, with cursor pagination and a `status` filter: QUEUED, SENDING, SENT, FAILED, BOUNCED, CANCELED…, the attempts, the last SMTP reply or error. Needs `read:broadcasts`.',
    response: {
      data: [
        {
          id: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8V',
          contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
          email: 'ada@example.com',
          status: 'SENT',
          attempts: 1,
          lastError: null,
          smtpResponse: '250 2.0.0 OK 1732190981 q7si1234567qkd.12 - gsmtp',
          messageId: '<dlv_01JDB45A2C4E6G8J0M2P4R6T8V@example.com>',
          createdAt: '2026-11-21T12:00:00.000Z',
          updatedAt: '2026-11-21T12:00:02.114Z',
          sentAt: '2026-11-21T12:00:02.114Z',
          unsubscribedAt: null,
        },
        {
          id: 'dlv_01JDB45A2C4E6G8J0M2P4R6T8W',
          contactId: 'ct_01JDB3N1V3X5Z7B9D1F3H5K7M9',
          email: 'gone@example.net',
          status: 'BOUNCED',
          attempts: 1,
          lastError: '550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown',
          smtpResponse: null,
          messageId: null,
          createdAt: '2026-11-21T12:00:00.000Z',
          updatedAt: '2026-11-21T12:00:02.530Z',
          sentAt: null,
          unsubscribedAt: null,
        },
      ],
      nextCursor: null,
    },
  },
  'GET /v1/broadcasts/{broadcastId}/links': {
    tags,
    summary: 'Clicks per link',
    description:
      "Clicks by people only: scanners' and other machines' clicks are left out (docs/tracking.md). One row per link as the template writes it: a link personalised with Liquid (`?email={{ contact.email | url_encode }}`) is one row however many recipients' own URLs it became.",
    response: {
      data: [
        { url: 'https://example.com/blog/november', clicks: 371, uniqueClicks: 262 },
        {
          url: 'https://example.com/vip?email={{ contact.email | url_encode }}',
          clicks: 58,
          uniqueClicks: 51,
        },
        { url: 'https://example.com/pricing', clicks: 31, uniqueClicks: 26 },
      ],
    },
  },
  'GET /v1/broadcasts/{broadcastId}/timeline': {
    tags,
    summary: 'Activity over time',
    description:
      'Opens and clicks by people only; bounces are hard bounces. Buckets with nothing in them are left out.',
    response: {
      bucket: 'hour',
      timeZone: 'UTC',
      data: [
        { at: '2026-11-21T12:00:00.000Z', sent: 1821, opens: 604, clicks: 233, bounces: 16 },
        { at: '2026-11-21T13:00:00.000Z', sent: 0, opens: 311, clicks: 120, bounces: 0 },
      ],
    },
  },
  'PUT /v1/broadcasts/{broadcastId}/archive': {
    tags,
    summary: 'Show a broadcast in the public archive, or take it out',
    description:
      "Sets `archive` alone, in any status: a SENT broadcast (which PUT /v1/broadcasts/{id} no longer edits) can be put in the workspace's public archive (`/archive/{slug}` and its feed) or taken out of it at once (docs/archive.md). Needs `write:broadcasts`.",
    request: { archive: true },
    response: { ...withStats('SENT'), archive: true },
  },
  'POST /v1/broadcasts/{broadcastId}/cancel': {
    tags,
    summary: 'Cancel a broadcast',
    description:
      'SCHEDULED → DRAFT (it can be edited and scheduled again); SENDING or PAUSED → CANCELED: messages not yet handed to the mail server are not sent. 409 invalid_state from any other status. No body. Needs `write:broadcasts`.',
    response: withStats('CANCELED'),
  },
  'POST /v1/broadcasts/{broadcastId}/pause': {
    tags,
    summary: 'Pause a sending broadcast',
    description:
      'Nothing new goes out; returns once the messages being handed to the transport are done. The circuit breaker pauses a broadcast by itself too (pausedReason says why).',
    response: withStats('PAUSED', { pausedReason: 'paused by hand' }),
  },
  'POST /v1/broadcasts/{broadcastId}/ab/winner': {
    tags,
    summary: "Pick an A/B broadcast's winner now",
    description:
      'Before the wait ends (docs/ab-tests.md): `{ "variant": "b" }` becomes the winner, sent to the rest of the audience next, and `broadcast.ab_winner_chosen` is written. SENDING or PAUSED only (409 invalid_state otherwise); 409 ab_winner_chosen once a winner is chosen (by hand or by the timer; `winner` names it); 409 ab_test_missing on a broadcast without a test; 422 validation_failed for a variant the test does not have. Needs `write:broadcasts`.',
    request: { variant: 'b' },
    response: withStats('SENDING', {
      abTest: {
        variants: [
          { id: 'a', subject: 'What is new in November', previewText: null, from: null, emailContent: null },
          { id: 'b', subject: 'Three things we shipped', previewText: null, from: null, emailContent: null },
        ],
        testPercent: 20,
        winnerBy: 'OPENS',
        waitMinutes: 240,
      },
    }),
  },
  'POST /v1/broadcasts/{broadcastId}/resume': {
    tags,
    summary: 'Resume a paused broadcast',
    description:
      'PAUSED → SENDING: it goes on where it stopped, each remaining recipient still getting exactly one message. 409 invalid_state from any other status. No body. Needs `write:broadcasts`.',
    response: withStats('SENDING'),
  },
  'POST /v1/broadcasts/{broadcastId}/resend': {
    tags,
    summary: 'Resend a sent broadcast to non-openers or non-clickers',
    description:
      "On a SENT broadcast: 201 (with `Location`), a new DRAFT with the same content (`subject` replaced when given), sender, reply-to, topic and tracking, whose audience is the original's recipients (a message was sent to them) who had no human open (`NON_OPENERS`) or click (`NON_CLICKERS`) of it now, at the resend: `resendOf.asOf`. Opens and clicks by machines (Apple Mail Privacy Protection, scanners) do not count as opens. When it is sent, the usual rules still apply: only SUBSCRIBED contacts, not suppressed, subscribed to its topic. Edit it, schedule it and send it like any draft. 409 `invalid_state` unless the original is SENT; 422 `validation_failed` for another `to`, or when the original did not track opens (clicks). Needs `write:broadcasts`.",
    request: { to: 'NON_OPENERS', subject: 'In case you missed it: what is new in November' },
    response: {
      ...draft,
      id: 'bc_01JDB9F3Q5S7U9W1Y3A5C7E9G1',
      name: 'November newsletter (resend to non-openers)',
      emailContent: { ...emailContent, subject: 'In case you missed it: what is new in November' },
      createdAt: '2026-11-24T09:00:00.000Z',
      updatedAt: '2026-11-24T09:00:00.000Z',
      resendOf: { broadcastId: BC, to: 'NON_OPENERS', asOf: '2026-11-24T09:00:00.000Z' },
    },
  },
  'POST /v1/broadcasts/{broadcastId}/preflight': {
    tags,
    summary: 'Check a broadcast before sending',
    description:
      "Every check `{ id, status: pass|warn|fail, detail }`: content and sender (these can fail, and a failure blocks schedule and send with 422 broadcast_incomplete), the sender domain's DNS, PUBLIC_URL over https, contact fields the templates print that part of the audience lacks, Gmail's 102 KB clipping, images without alt text, plain-http links, the audience and the time to send it at the rate measured last. A broadcast whose `editorContent` is a block document also gets the renderer's warnings, one `document_<code>` check per kind naming the blocks' JSON Pointers (`document_image_alt_missing`, `document_button_link_missing`, `document_block_empty`, `document_footer_missing`), or `document` passing when there are none.",
    response: {
      ok: true,
      checks: [
        { id: 'from', status: 'pass', detail: 'sent from Acme News <news@example.com>' },
        { id: 'subject', status: 'pass', detail: 'has a subject' },
        {
          id: 'sender_domain',
          status: 'pass',
          detail: "the sender's domain is a verified sending domain of the workspace",
        },
        {
          id: 'dns_dmarc',
          status: 'warn',
          detail: 'example.com has no DMARC record (Gmail and Yahoo require one of bulk senders)',
        },
        { id: 'audience', status: 'pass', detail: '1840 recipients' },
      ],
    },
  },
  'POST /v1/broadcasts/{broadcastId}/test': {
    tags,
    summary: 'Send a test of a broadcast',
    description:
      'The real rendering (for `contactId`, or sample data), the subject marked [Test], sent at once; it counts in no stats. Needs a complete broadcast (422 broadcast_incomplete).',
    request: { emails: ['qa@example.com', 'ada@example.com'], contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0' },
    response: {
      sent: [
        {
          email: 'qa@example.com',
          messageId: '<tst_01JDB46B3D5F7H9K1N3Q5S7U9W@example.com>',
          response: '250 2.0.0 Ok: queued as 4Xk2Lm0Qz9',
        },
        {
          email: 'ada@example.com',
          messageId: '<tst_01JDB46B3D5F7H9K1N3Q5S7U9X@example.com>',
          response: '250 2.0.0 Ok: queued as 4Xk2Lm0R1b',
        },
      ],
      failed: [],
    },
  },
  'POST /v1/broadcasts/{broadcastId}/preview': {
    tags,
    summary: 'Render a broadcast',
    description:
      "The subject, HTML, text and preview text as a recipient would get them: rendered for `contactId`, or for sample data without one, with the unsubscribe footer and the workspace's postal address. Nothing is sent. A template that does not render is 422 validation_failed. Needs `read:broadcasts`.",
    request: { contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0' },
    response: {
      subject: 'Hi Ada, what is new in November',
      html: '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Hi Ada, what is new in November</title>\n</head>\n<body><h1>November</h1><p>Read <a href="https://example.com/blog/november">the post</a>.</p>\n<div><p>You receive this email because you subscribed to Acme. <a href="https://mail.example.com/unsubscribe/preview">Unsubscribe</a></p></div></body>\n</html>\n',
      text: 'November: https://example.com/blog/november\n\n-- \nYou receive this email because you subscribed to Acme.\nUnsubscribe: https://mail.example.com/unsubscribe/preview\n',
      previewText: 'Three things we shipped',
      contact: { id: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0', email: 'ada@example.com' },
    },
  },
  'GET /v1/broadcasts/{broadcastId}/audience': {
    tags,
    summary: 'Who a broadcast would go to',
    description:
      'The recipients a send now would have: the count, and a page of them (newest first, cursor pagination). Suppressed addresses, contacts not SUBSCRIBED and, with a topic, those not subscribed to it are left out. Needs `read:broadcasts`.',
    response: {
      count: 1840,
      data: [{ id: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0', email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }],
      nextCursor: 'Y3RfMDFKREIzTjJXNFk2QThDMEUyRzRKNk04UTA',
    },
  },
};
