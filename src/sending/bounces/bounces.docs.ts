import type { OperationDocs } from '../../http/operation-docs.js';

export const bouncesDocs: OperationDocs = {
  'GET /v1/inbound': {
    tags: ['bounces'],
    summary: 'Inbound mail that could not be read',
    description:
      "What the inbound listener (INBOUND_SMTP_PORT) accepted but could not read, prove or apply, newest first, kept 30 days (the console's Reports to review): a bounce in a wording it does not know, a report whose original message names another message than the bounce address it arrived at, a report at `postmaster@`, `abuse@` or `fbl@` the bounce domain whose original proves no message of the workspace (no VERP token that verifies, no DKIM signature of its domain), a DMARC failure report, mail at `dmarc@` that holds no aggregate report for the domain, a person's message to `postmaster@` (kept for review, applied to nothing; the reason says which). Each entry has the first 256 KiB of the raw message (base64) for a look by hand. Cursor pagination. Needs `read:contacts`.",
    response: {
      data: [
        {
          id: 'inb_01JDB47C4E6G8J0M2P4R6T8V0X',
          rcptTo: 'bounces+dlv_01JDB45A2C4E6G8J0M2P4R6T8V.k3J9@bounces.example.com',
          mailFrom: 'MAILER-DAEMON@mx.example.net',
          subject: 'Undelivered Mail Returned to Sender',
          reason: 'a bounce whose status, reply code and wording could not be read: kept for review',
          size: 4210,
          receivedAt: '2026-11-21T12:04:18.090Z',
          raw: 'UmV0dXJuLVBhdGg6IDw+DQpSZWNlaXZlZDogZnJvbSBteC5leGFtcGxlLm5ldA0K',
        },
      ],
      nextCursor: null,
    },
  },
  'POST /hooks/ses': {
    tags: ['public'],
    summary: 'Amazon SES notifications (SNS)',
    description:
      "Point an SNS topic of SES's bounce and complaint notifications here (HTTPS subscription) and name the topic in SES_TOPIC_ARNS: messages for any other topic (or any topic, with SES_TOPIC_ARNS unset) are refused with 403 and never confirmed. The SNS signature of every message is verified against Amazon's certificate; the subscription confirmation is followed by itself. A Bounce (Permanent: hard bounce; Transient: soft) or Complaint is matched to its delivery by the Message-ID and applied as a bounce report received by mail would be. No API key.",
    request: {
      Type: 'Notification',
      MessageId: '6b3c1e40-2f7a-5d3b-9c1e-0a4b2c3d4e5f',
      TopicArn: 'arn:aws:sns:eu-west-1:123456789012:ses-bounces',
      Message:
        '{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"gone@example.net","diagnosticCode":"smtp; 550 5.1.1 user unknown"}]},"mail":{"messageId":"0102018c…","headers":[{"name":"Message-ID","value":"<dlv_01JDB45A2C4E6G8J0M2P4R6T8W@example.com>"}]}}',
      Timestamp: '2026-11-21T12:00:03.118Z',
      SignatureVersion: '1',
      Signature: 'EXAMPLEpH+…',
      SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem',
    },
    requestType: 'application/json',
    response: { ok: true, applied: 1 },
    responses: {
      400: {
        description: 'Not an SNS message, or a SubscribeURL that is not an SNS address.',
        contentType: 'application/json',
        example: { ok: false, error: 'not an SNS message' },
      },
      403: {
        description:
          'The topic is not in SES_TOPIC_ARNS, the SNS signature does not verify, or its signing certificate could not be fetched.',
        contentType: 'application/json',
        example: { ok: false, error: 'the SNS topic is not accepted here (SES_TOPIC_ARNS)' },
      },
      502: {
        description:
          'A subscription confirmation of a configured topic whose SubscribeURL could not be fetched (SNS sends it again).',
        contentType: 'application/json',
        example: { ok: false, confirmed: false, error: 'the SubscribeURL could not be fetched' },
      },
    },
  },
  'POST /hooks/postmark': {
    tags: ['public'],
    summary: 'Postmark bounce and complaint webhooks',
    description:
      "Point Postmark's Bounce and Spam Complaint webhooks here, with the basic-auth user and password of POSTMARK_WEBHOOK_USER and POSTMARK_WEBHOOK_PASSWORD. A HardBounce is a hard bounce, a SoftBounce a soft one, a SpamComplaint a complaint; each is matched to its delivery by the Message-ID. No API key.",
    request: {
      RecordType: 'Bounce',
      Type: 'HardBounce',
      TypeCode: 1,
      MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
      Email: 'gone@example.net',
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
      Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
      BouncedAt: '2026-11-21T12:00:04Z',
      Headers: [{ Name: 'Message-ID', Value: '<dlv_01JDB45A2C4E6G8J0M2P4R6T8W@example.com>' }],
    },
    requestType: 'application/json',
    response: { ok: true, applied: 1 },
    responses: {
      401: {
        description: 'The basic-auth user or password is wrong (`WWW-Authenticate: Basic`).',
        contentType: 'application/json',
        example: { ok: false, error: 'unauthorized' },
      },
      404: {
        description: 'The hook is not configured (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD unset).',
        contentType: 'application/json',
        example: {
          ok: false,
          error: 'the Postmark hook is not configured (POSTMARK_WEBHOOK_USER, POSTMARK_WEBHOOK_PASSWORD)',
        },
      },
    },
  },
};
