import type { OperationDocs } from '../../http/operation-docs.js';

const DKIM =
  'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAuzw6JibHmZFNnvKMApos+9iJXdfYjFzFjjizu3lGitnqSADeU5jmVjnq3lfGDbVduhjswT7M3oG7+ExQh+WZC1mNaui2VuOhVSO06oMOFrXTt9+EUDm4xr4KGb5G7TT9tBZ/QSDNW5pOVuDqPsJv2X4M+pxxmop6+7A0CeSAA7IaNCK9ZFGtWKcQpb1058N5OJao19YLhurVRIwPVgvTRPdx1LIB7IOifRqdI2tMUMxH8K7GgzTnaEkSNt73rI5HBXDsQI9apmF510b7WKaUzmcilnhXbf5tFxkaR7isc+ER1L0L7UY78ipSqWXON19KzHhEgdS9Bu8nSGihSLDyewIDAQAB';
const records = [
  { type: 'TXT', name: '_formcast.example.com', value: 'formcast-verification=241088fd22aa47f01162bcb207326e5a' },
  { type: 'TXT', name: 'fc20261121._domainkey.example.com', value: DKIM },
  { type: 'MX', name: 'bounces.example.com', value: 'mail.example.com', priority: 10 },
  { type: 'TXT', name: 'bounces.example.com', value: 'v=spf1 a:mail.example.com ~all' },
];
const pending = {
  id: 'dom_01JDB3V6Z8B0D2F4H6K8M0P2R4',
  name: 'example.com',
  status: 'PENDING',
  records,
  createdAt: '2026-11-21T10:00:00.000Z',
  verifiedAt: null,
  trackingHost: null,
  verification: null,
};
const verified = {
  ...pending,
  status: 'VERIFIED',
  verifiedAt: '2026-11-21T10:20:31.402Z',
  verification: {
    checkedAt: '2026-11-21T10:20:31.402Z',
    records: [
      { ...records[0]!, status: 'VERIFIED', found: [records[0]!.value] },
      { ...records[1]!, status: 'VERIFIED', found: [DKIM] },
    ],
    spf: { found: true, record: 'v=spf1 include:_spf.example.com ~all' },
    dmarc: { found: true, record: 'v=DMARC1; p=quarantine; rua=mailto:dmarc@example.com' },
    bounce: {
      mx: { found: true, hosts: ['mail.example.com'] },
      spf: { found: true, record: 'v=spf1 a:mail.example.com ~all' },
    },
    envelope: {
      relay: 'smtp',
      domain: 'bounces.example.com',
      spf: { found: true, record: 'v=spf1 a:mail.example.com ~all' },
      records: [
        { ...records[2]!, status: 'VERIFIED', found: ['mail.example.com'] },
        { ...records[3]!, status: 'VERIFIED', found: ['v=spf1 a:mail.example.com ~all'] },
      ],
    },
    alignment: { spf: 'relaxed', spfAligns: true },
    tracking: null,
    advice: [],
  },
};
const withTracking = {
  ...verified,
  trackingHost: 'links.example.com',
  records: [...records, { type: 'CNAME', name: 'links.example.com', value: 'mail.example.com' }],
};

const tags = ['domains'];

export const domainsDocs: OperationDocs = {
  'POST /v1/domains': {
    tags,
    summary: 'Add a sending domain',
    description:
      'Adds a domain (PENDING) and answers with the DNS records to publish: a TXT ownership token, the DKIM key (`<selector>._domainkey.<domain>`, RSA-2048, generated for the domain: only its public half is ever shown), and the MX and SPF records of the bounce domain `bounces.<domain>`. Publish them, then call `…/verify`. 409 domain_exists when the workspace has it already. Needs `write:domains`.',
    request: { name: 'example.com' },
    response: pending,
  },
  'GET /v1/domains': {
    tags,
    summary: 'List sending domains',
    description:
      "The workspace's domains, newest first, filtered by `status` if given, with cursor pagination. Needs `read:domains`.",
    response: { data: [verified], nextCursor: null },
  },
  'GET /v1/domains/{domainId}': {
    tags,
    summary: 'Get a sending domain',
    description:
      'The domain with the records to publish and the result of its last DNS check, record by record, with advice on SPF and DMARC. Needs `read:domains`.',
    response: verified,
  },
  'PUT /v1/domains/{domainId}': {
    tags,
    summary: "Set a sending domain's tracking host",
    description:
      "Sets (or, with null, clears) the domain's tracking host: a host under the domain, such as `links.example.com`, published as a CNAME to the service's public host (PUBLIC_URL's) and served over https by your proxy (docs/deliverability.md). Its messages' tracked links and open pixel use it once `…/verify` finds the CNAME (`verification.tracking`), so they align with the From domain and are not shared with other senders of the installation; until then, and whenever the CNAME is gone, they use PUBLIC_URL. 422 for a host that is not under the domain. Needs `write:domains`.",
    request: { trackingHost: 'links.example.com' },
    response: withTracking,
  },
  'DELETE /v1/domains/{domainId}': {
    tags,
    summary: 'Delete a sending domain',
    description:
      'Deletes the domain and its DKIM key: messages can no longer be sent from its addresses. Answers 204. Needs `write:domains`.',
  },
  'POST /v1/domains/{domainId}/verify': {
    tags,
    summary: 'Verify a sending domain (DNS check)',
    description:
      "Looks the records up in DNS now: VERIFIED when the ownership token and the DKIM key are published as given, FAILED otherwise, with a result per record (`VERIFIED`, `MISSING`, `MISMATCH`, `TIMEOUT` or `ERROR`) in `verification`. What receivers check besides is reported as advice and does not decide the status: SPF at the envelope sender's domain (`verification.envelope`: `bounces.<domain>`, or the relay's Return-Path domain for RELAY_PROFILE ses, postmark, sendgrid or mailgun), DMARC (present, with `rua`, and `aspf=s`, under which SPF never aligns: `verification.alignment`), the bounce domain's MX, and the tracking host's CNAME (`verification.tracking`). Needs `write:domains`.",
    response: verified,
  },
};
