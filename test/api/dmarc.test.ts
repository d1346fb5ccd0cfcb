import zlib from 'node:zlib';
import { zipSync, strToU8 } from 'fflate';
import { describe, expect, it, vi } from 'vitest';
import { recordDmarcReports } from '../../src/mail-setup/index.js';
import {
  DmarcFormatError,
  failureReason,
  parseAggregateXml,
  xmlFilesOf,
} from '../../src/mail-setup/dmarc/dmarc.parse.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';

/**
 * DMARC aggregate reports (issue 32, docs/domains.md "DMARC reports"): read from XML, gzip and zip, stored per domain and
 * day for every workspace where the domain is verified, counted once per reporter's report id, and shown by
 * GET /v1/domains/{id}/dmarc (a summary over a range of days, the sources with why they fail, the rows); another
 * workspace's domain is a 404.
 */
const day = (d: string) => Date.parse(`${d}T00:00:00Z`) / 1000;

function xml(opts: {
  domain: string;
  org?: string;
  id: string;
  begin: string;
  records: {
    ip: string;
    count: number;
    dkim: string;
    spf: string;
    disposition?: string;
    dkimDomain?: string;
    spfDomain?: string;
  }[];
}): string {
  const begin = day(opts.begin);
  return `<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <report_metadata><org_name>${opts.org ?? 'google.com'}</org_name><email>noreply-dmarc-support@google.com</email>
    <report_id>${opts.id}</report_id><date_range><begin>${begin}</begin><end>${begin + 86399}</end></date_range></report_metadata>
  <policy_published><domain>${opts.domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>
  ${opts.records
    .map(
      (
        r,
      ) => `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count><policy_evaluated><disposition>${r.disposition ?? 'none'}</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated></row>
    <identifiers><header_from>${opts.domain}</header_from></identifiers>
    <auth_results><dkim><domain>${r.dkimDomain ?? opts.domain}</domain><selector>s1</selector><result>${r.dkim}</result></dkim><spf><domain>${r.spfDomain ?? opts.domain}</domain><scope>mfrom</scope><result>${r.spf}</result></spf></auth_results></record>`,
    )
    .join('\n')}
</feedback>`;
}

const attachment = (content: Buffer | Uint8Array, filename: string) => ({
  filename,
  contentType: 'application/octet-stream',
  content: Buffer.from(content),
});

describe('DMARC aggregate reports: reading them', () => {
  const report = xml({
    domain: 'acme.test',
    id: 'r1',
    begin: '2026-11-20',
    records: [{ ip: '203.0.113.7', count: 5, dkim: 'pass', spf: 'pass' }],
  });

  it('reads XML, gzip and zip alike, and nothing else', () => {
    const gz = zlib.gzipSync(report);
    const zip = zipSync({ 'google.com!acme.test!1!2.xml': strToU8(report), 'readme.txt': strToU8('hi') });
    for (const files of [xmlFilesOf(Buffer.from(report)), xmlFilesOf(gz), xmlFilesOf(Buffer.from(zip))]) {
      expect(files).toHaveLength(1);
      expect(parseAggregateXml(files[0]!)).toMatchObject({
        orgName: 'google.com',
        reportId: 'r1',
        day: '2026-11-20',
        policy: { domain: 'acme.test', p: 'none', pct: 100 },
        records: [{ sourceIp: '203.0.113.7', count: 5, dkim: 'pass', spf: 'pass', disposition: 'none' }],
      });
    }
    expect(xmlFilesOf(Buffer.from('%PDF-1.7'))).toEqual([]);
  });

  it('refuses what expands past 20 MB while reading it, a broken archive, and XML that is not a report', () => {
    const bomb = zlib.gzipSync(Buffer.alloc(25 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    expect(() => xmlFilesOf(bomb)).toThrow(/expands past 20 MB/);
    const zipBomb = zipSync({ 'a.xml': new Uint8Array(25 * 1024 * 1024) });
    expect(() => xmlFilesOf(Buffer.from(zipBomb))).toThrow(/expands past 20 MB/);
    expect(() => xmlFilesOf(Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]))).toThrow(DmarcFormatError);
    expect(() => parseAggregateXml('<html><body>hi</body></html>')).toThrow(/not a DMARC aggregate report/);
    expect(() => parseAggregateXml('<feedback><report_metadata>')).toThrow(DmarcFormatError);
  });

  it('keeps only records with a real IP and count, and says in words why a record failed', () => {
    const parsed = parseAggregateXml(
      xml({
        domain: 'acme.test',
        id: 'r2',
        begin: '2026-11-20',
        records: [
          { ip: 'not-an-ip', count: 1, dkim: 'pass', spf: 'pass' },
          {
            ip: '2001:db8::7',
            count: 2,
            dkim: 'fail',
            spf: 'fail',
            dkimDomain: 'mailer.example',
            spfDomain: 'mailer.example',
          },
        ],
      }).replace('<result>fail</result></dkim>', '<result>pass</result></dkim>'),
    );
    expect(parsed.records.map((r) => r.sourceIp)).toEqual(['2001:db8::7']);
    expect(failureReason(parsed.records[0]!)).toBe(
      'DKIM signed by mailer.example, not by acme.test; SPF fail for mailer.example',
    );
  });
});

describeApi('DMARC reports: GET /v1/domains/{id}/dmarc', (h) => {
  const store = (domain: string, workspaceIds: string[], files: ReturnType<typeof attachment>[]) =>
    recordDmarcReports(h.db, { domain, workspaceIds, attachments: files });

  async function domainOf(ws: TestWorkspace, name: string) {
    return verifiedDomain(h, ws, name);
  }

  it('stores each report once per workspace, and answers the summary, the sources with why they fail, and the rows over a range of days', async () => {
    const ws = await h.workspace();
    const name = `dm${ws.id.slice(-8).toLowerCase()}.test`;
    const domain = await domainOf(ws, name);
    const google = xml({
      domain: name,
      id: 'g-1',
      begin: '2026-11-20',
      records: [
        { ip: '203.0.113.7', count: 100, dkim: 'pass', spf: 'pass' },
        {
          ip: '198.51.100.23',
          count: 10,
          dkim: 'pass',
          spf: 'pass',
          dkimDomain: 'crm.example',
          spfDomain: 'crm.example',
          disposition: 'quarantine',
        },
      ],
    })
      // The receiver's aligned verdicts for the CRM: both fail (its DKIM and SPF are its own domain's).
      .replace(
        /(<source_ip>198\.51\.100\.23<\/source_ip><count>10<\/count><policy_evaluated><disposition>quarantine<\/disposition>)<dkim>pass<\/dkim><spf>pass<\/spf>/,
        '$1<dkim>fail</dkim><spf>fail</spf>',
      );
    const microsoft = xml({
      domain: name,
      org: 'Enterprise Outlook',
      id: 'm-1',
      begin: '2026-11-21',
      records: [
        { ip: '203.0.113.7', count: 40, dkim: 'pass', spf: 'pass' },
        { ip: '192.0.2.66', count: 3, dkim: 'fail', spf: 'fail', disposition: 'reject' },
      ],
    });
    const first = await store(
      name,
      [ws.id],
      [attachment(zipSync({ 'g.xml': strToU8(google) }), 'g.zip'), attachment(zlib.gzipSync(microsoft), 'm.xml.gz')],
    );
    expect(first).toEqual({ stored: 2, duplicates: 0, dropped: 0, problems: [] });
    // The same report again (a reporter's retry): counted once.
    expect(await store(name, [ws.id], [attachment(Buffer.from(google), 'g.xml')])).toEqual({
      stored: 0,
      duplicates: 1,
      dropped: 0,
      problems: [],
    });
    // A flood beyond the daily limit (500 a day per domain; 2 here) is dropped, not stored.
    const third = xml({
      domain: name,
      id: 'flood-1',
      begin: '2026-11-21',
      records: [{ ip: '192.0.2.1', count: 999, dkim: 'fail', spf: 'fail' }],
    });
    expect(
      await recordDmarcReports(h.db, {
        domain: name,
        workspaceIds: [ws.id],
        attachments: [attachment(Buffer.from(third), 'f.xml')],
        maxReportsPerDay: 2,
      }),
    ).toEqual({
      stored: 0,
      duplicates: 0,
      dropped: 1,
      problems: ['the report flood-1 of google.com: 2 reports stored in 24 hours already'],
    });

    const res = await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc?from=2026-11-01&to=2026-11-30`);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json();
    expect(r).toMatchObject({
      domain: { id: domain.id, name },
      from: '2026-11-01',
      to: '2026-11-30',
      summary: {
        messages: 153,
        pass: 140,
        fail: 13,
        passRate: 0.915033,
        spfAligned: 140,
        dkimAligned: 140,
        quarantined: 10,
        rejected: 3,
        sources: 3,
        reports: 2,
        reporters: ['Enterprise Outlook', 'google.com'],
      },
      days: [
        { day: '2026-11-20', messages: 110, pass: 100, fail: 10 },
        { day: '2026-11-21', messages: 43, pass: 40, fail: 3 },
      ],
      rowsTruncated: false,
    });
    expect(r.sources.map((s: { ip: string }) => s.ip)).toEqual(['203.0.113.7', '198.51.100.23', '192.0.2.66']);
    expect(r.sources[0]).toMatchObject({
      messages: 140,
      fail: 0,
      why: [],
      firstDay: '2026-11-20',
      lastDay: '2026-11-21',
    });
    expect(r.sources[1]).toMatchObject({
      messages: 10,
      fail: 10,
      quarantined: 10,
      reporters: ['google.com'],
      why: [
        {
          reason: `DKIM signed by crm.example, not by ${name}; SPF passes for crm.example, not aligned with ${name}`,
          messages: 10,
        },
      ],
    });
    expect(r.sources[2].why[0].reason).toBe(`DKIM signature of ${name}: fail; SPF fail for ${name}`);
    expect(r.rows).toHaveLength(4);
    expect(r.rows[0]).toMatchObject({ day: '2026-11-21', reporter: 'Enterprise Outlook', reportId: 'm-1' });

    // A range without reports: zeros, no sources. One day: only its report.
    const empty = (await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc?from=2026-10-01&to=2026-10-31`)).json();
    expect(empty).toMatchObject({ summary: { messages: 0, passRate: null, reports: 0 }, sources: [], rows: [] });
    const one = (await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc?from=2026-11-21&to=2026-11-21`)).json();
    expect(one.summary).toMatchObject({ messages: 43, reports: 1 });
  });

  it('without a range: the last 30 days by the clock; a bad or too long range is 422', async () => {
    const ws = await h.workspace();
    const name = `dr${ws.id.slice(-8).toLowerCase()}.test`;
    const domain = await domainOf(ws, name);
    await store(
      name,
      [ws.id],
      [
        attachment(
          Buffer.from(
            xml({
              domain: name,
              id: 'a',
              begin: '2026-11-02',
              records: [{ ip: '203.0.113.7', count: 1, dkim: 'pass', spf: 'pass' }],
            }),
          ),
          'a.xml',
        ),
        attachment(
          Buffer.from(
            xml({
              domain: name,
              id: 'b',
              begin: '2026-10-20',
              records: [{ ip: '203.0.113.7', count: 2, dkim: 'pass', spf: 'pass' }],
            }),
          ),
          'b.xml',
        ),
      ],
    );
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-11-30T12:00:00Z'), shouldAdvanceTime: true });
    try {
      const r = (await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc`)).json();
      expect(r).toMatchObject({ from: '2026-11-01', to: '2026-11-30', summary: { messages: 1 } });
    } finally {
      vi.useRealTimers();
    }
    for (const [q, path] of [
      ['from=2026-11-30&to=2026-11-01', '/query/from'],
      ['from=2026-02-30', '/query/from'],
      ['to=20261101', '/query/to'],
      ['from=2024-01-01&to=2026-01-01', '/query/from'],
    ] as const) {
      const res = await h.call(ws.key, 'GET', `/v1/domains/${domain.id}/dmarc?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(res.json().errors[0].path, q).toBe(path);
    }
  });

  it("another workspace's domain is 404, a key without read:domains 403; a report for a domain verified in two workspaces reaches both, one for another domain neither", async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    const name = `shared${a.id.slice(-8).toLowerCase()}.test`;
    const da = await domainOf(a, name);
    const db_ = await domainOf(b, name);
    const report = xml({
      domain: name,
      id: 'x',
      begin: '2026-11-20',
      records: [{ ip: '203.0.113.7', count: 7, dkim: 'pass', spf: 'pass' }],
    });
    expect(await store(name, [a.id, b.id], [attachment(Buffer.from(report), 'x.xml')])).toMatchObject({ stored: 2 });
    const other = xml({
      domain: 'elsewhere.test',
      id: 'y',
      begin: '2026-11-20',
      records: [{ ip: '203.0.113.7', count: 9, dkim: 'pass', spf: 'pass' }],
    });
    expect((await store(name, [a.id], [attachment(Buffer.from(other), 'y.xml')])).problems).toEqual([
      `the report y of google.com is about elsewhere.test, not ${name}`,
    ]);

    const q = '?from=2026-11-01&to=2026-11-30';
    expect((await h.call(a.key, 'GET', `/v1/domains/${da.id}/dmarc${q}`)).json().summary.messages).toBe(7);
    expect((await h.call(b.key, 'GET', `/v1/domains/${db_.id}/dmarc${q}`)).json().summary.messages).toBe(7);
    const cross = await h.call(b.key, 'GET', `/v1/domains/${da.id}/dmarc${q}`);
    expect(cross.statusCode).toBe(404);
    expect(cross.json().code).toBe('not_found');
    expect((await h.call(a.key, 'GET', `/v1/domains/dom_01JDB3V6Z8B0D2F4H6K8M0P2R4/dmarc${q}`)).statusCode).toBe(404);
    const narrow = await h.key(a, ['read:contacts']);
    expect((await h.call(narrow, 'GET', `/v1/domains/${da.id}/dmarc${q}`)).statusCode).toBe(403);
    const reader = await h.key(a, ['read:domains']);
    expect((await h.call(reader, 'GET', `/v1/domains/${da.id}/dmarc${q}`)).statusCode).toBe(200);
    // Deleting the domain deletes its reports.
    await h.call(a.key, 'DELETE', `/v1/domains/${da.id}`);
    const left = await h.db.kysely.selectFrom('dmarc_rows').select('id').where('workspace_id', '=', a.id).execute();
    expect(left).toEqual([]);
  });
});
