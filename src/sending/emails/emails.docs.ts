import type { OperationDocs } from '../../http/operation-docs.js';

const ID = 'em_01JDB45X0B2D4F6H8K0M2P4R6T';
const email = {
  id: ID,
  from: 'Acme <receipts@example.com>',
  to: ['ada@example.com'],
  cc: [],
  bcc: ['archive@example.com'],
  replyTo: 'support@example.com',
  subject: 'Your receipt #1042',
  status: 'SENT',
  recipients: [
    { email: 'ada@example.com', type: 'to', status: 'SENT', lastError: null },
    { email: 'archive@example.com', type: 'bcc', status: 'SENT', lastError: null },
  ],
  tags: ['receipt'],
  templateId: 'tmpl_01JDB3S8V0X2Z4B6D8F0H2K4M6',
  templateVersion: 3,
  tracking: { opens: false, clicks: false },
  attachments: [{ filename: 'receipt-1042.pdf', contentType: 'application/pdf', size: 18234 }],
  headers: { 'X-Order-Id': '1042' },
  createdAt: '2026-11-21T10:00:00.000Z',
};

const tags = ['emails'];

export const emailsDocs: OperationDocs = {
  'POST /v1/emails': {
    tags,
    summary: 'Send a transactional email',
    description:
      "Sends one message an application sends (a receipt, a password reset) through the workspace's verified domains, with DKIM, the bounce address, events and webhooks as for broadcasts (contract §20, docs/emails.md). `to` takes 1 to 50 addresses, `cc` and `bcc` up to 50 each (each recipient gets its own SMTP transaction; `to` and `cc` are listed in the headers, `bcc` never). `from` must be on a VERIFIED domain (422 sender_domain_not_verified). Give `html` and/or `text` (sent as given), or `templateId` (a template's id or alias, rendered with Liquid over `data`; `subject` overrides the template's). `headers` may not set From, Sender, To, Cc, Bcc, Reply-To, Subject, Date, Message-ID, Return-Path, DKIM-Signature, Content-*, MIME-Version or Received, nor carry line breaks (422 at `/headers/<name>`). `attachments` are base64 (checked strictly), 10 MiB decoded in all. `tracking` is off unless asked. Topics and contact status do not apply, but an address suppressed for a hard bounce or a complaint is not mailed (its recipient is SUPPRESSED). Answers 202 with the id; the message is queued in the transactional lane, ahead of any broadcast. Rate limited per API key (`EMAILS_RATE_LIMIT` a minute, 429 with Retry-After). `Idempotency-Key` replays the first answer. Needs `send:emails`.",
    request: {
      from: 'Acme <receipts@example.com>',
      to: ['ada@example.com'],
      bcc: ['archive@example.com'],
      replyTo: 'support@example.com',
      templateId: 'receipt',
      data: { orderId: '1042', total: '€42.00' },
      headers: { 'X-Order-Id': '1042' },
      tags: ['receipt'],
      attachments: [{ filename: 'receipt-1042.pdf', content: 'JVBERi0xLjQKJcfsj6IK', contentType: 'application/pdf' }],
    },
    response: { id: ID },
  },
  'GET /v1/emails': {
    tags,
    summary: 'List transactional emails',
    description:
      "The workspace's transactional emails, newest first, with cursor pagination (`limit`, `cursor`), filtered by `recipient` (emails with a recipient in to, cc or bcc whose address contains the text, case-insensitively), `status` (the email's summary status), `templateId` and `tag`. Needs `send:emails`.",
    response: { data: [email], nextCursor: null },
  },
  'GET /v1/emails/{emailId}': {
    tags,
    summary: 'Get a transactional email',
    description:
      "One email with each recipient's status (QUEUED, SENT, BOUNCED, FAILED or SUPPRESSED, and the last error) and its status, a summary of theirs: QUEUED while any recipient is, else SENT if any was sent, else BOUNCED if any bounced, else FAILED if any failed, else SUPPRESSED. With the content as sent (`html`, `text`). Another workspace's id is 404. Needs `send:emails`.",
    response: {
      ...email,
      html: '<p>Thank you for your order #1042 (€42.00).</p>',
      text: 'Thank you for your order #1042 (€42.00).',
    },
  },
  'GET /v1/emails/{emailId}/events': {
    tags,
    summary: "An email's events",
    description:
      "What happened to the email's messages, newest first (at most 500): `email.sent`, `email.bounced`, `email.complained`, and with tracking on `email.opened` and `email.clicked`. Each carries `data.emailId` and its recipient as `data.email`; `broadcastId` and `contactId` are null (transactional messages have neither). The same events as GET /v1/events and the webhooks. Another workspace's id is 404. Needs `send:emails`.",
    response: {
      data: [
        {
          id: 'evt_01JDB46A2C4E6G8J0L2N4Q6S8U',
          type: 'email.sent',
          occurredAt: '2026-11-21T10:00:02.000Z',
          contactId: null,
          broadcastId: null,
          deliveryId: 'dlv_01JDB45X9Z1B3D5F7H9K1M3P5R',
          data: { email: 'ada@example.com', messageId: '<01JDB45X9Z1B3D5F7H9K1M3P5R@example.com>', emailId: ID },
        },
      ],
    },
  },
};
