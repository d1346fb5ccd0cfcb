import type { OperationDocs } from '../../http/operation-docs.js';

const passing = {
  ip: '203.0.113.7',
  messages: 11840,
  pass: 11838,
  fail: 2,
  spfAligned: 11812,
  dkimAligned: 11838,
  quarantined: 0,
  rejected: 0,
  firstDay: '2026-11-01',
  lastDay: '2026-11-30',
  reporters: ['Yahoo', 'google.com'],
  headerFrom: ['example.com'],
  why: [{ reason: 'DKIM fail; SPF pass for example.com; receiver override: forwarded', messages: 2 }],
};
const relay = {
  ip: '198.51.100.23',
  messages: 412,
  pass: 0,
  fail: 412,
  spfAligned: 0,
  dkimAligned: 0,
  quarantined: 412,
  rejected: 0,
  firstDay: '2026-11-12',
  lastDay: '2026-11-30',
  reporters: ['Enterprise Outlook', 'google.com'],
  headerFrom: ['example.com'],
  why: [
    {
      reason:
        'DKIM signed by crm-mailer.net, not by example.com; SPF passes for crm-mailer.net, not aligned with example.com',
      messages: 412,
    },
  ],
};

export const dmarcDocs: OperationDocs = {
  'GET /v1/domains/{domainId}/dmarc': {
    tags: ['domains'],
    summary: 'DMARC reports: who sends as the domain, and what fails',
    description:
      'What receivers (Google, Yahoo, Microsoft, …) reported in their DMARC aggregate reports about mail with the domain in its From, over a range of days (`from`, `to`: YYYY-MM-DD in UTC, at most 366 days; default the last 30 days). Reports reach Formcast at `dmarc@bounces.<domain>`: publish `rua=mailto:dmarc@bounces.<domain>` in the domain\'s `_dmarc` record (docs/domains.md, "DMARC reports"). `summary` totals the range; `sources` lists the IP addresses that sent as the domain, most messages first, with how many passed DMARC (DKIM or SPF passing aligned with the From domain), how many the receivers quarantined or rejected, and `why` the rest failed, in words; `rows` are the reports\' records (at most 500, `rowsTruncated` says if there were more). An address that sends as your domain and fails is a relay you have not set up (or someone spoofing you). A report is counted on the UTC day in the middle of its range, and once however often it is mailed. 404 for a domain of another workspace. Needs `read:domains`.',
    response: {
      domain: { id: 'dom_01JDB3V6Z8B0D2F4H6K8M0P2R4', name: 'example.com' },
      from: '2026-11-01',
      to: '2026-11-30',
      summary: {
        messages: 12252,
        pass: 11838,
        fail: 414,
        passRate: 0.96621,
        spfAligned: 11812,
        dkimAligned: 11838,
        quarantined: 412,
        rejected: 0,
        sources: 2,
        reports: 58,
        reporters: ['Enterprise Outlook', 'Yahoo', 'google.com'],
      },
      days: [{ day: '2026-11-30', messages: 480, pass: 452, fail: 28 }],
      sources: [passing, relay],
      rows: [
        {
          day: '2026-11-30',
          reporter: 'google.com',
          reportId: '7213394736510346331',
          sourceIp: '198.51.100.23',
          messages: 28,
          disposition: 'quarantine',
          dmarc: 'fail',
          dkim: 'fail',
          spf: 'fail',
          headerFrom: 'example.com',
          envelopeFrom: 'crm-mailer.net',
          dkimResults: [{ domain: 'crm-mailer.net', selector: 's1', result: 'pass' }],
          spfResults: [{ domain: 'crm-mailer.net', scope: 'mfrom', result: 'pass' }],
          reasons: [],
          why: 'DKIM signed by crm-mailer.net, not by example.com; SPF passes for crm-mailer.net, not aligned with example.com',
        },
      ],
      rowsTruncated: false,
    },
  },
};
