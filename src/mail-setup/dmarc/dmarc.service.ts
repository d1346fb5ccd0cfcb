import type { Db } from '../../db/connection.js';
import { notFound, validationFailed } from '../../errors/errors.js';
import { nowIso } from '../../lib/time.js';
import { findDomainByName, getDomain } from '../domains/domains.repository.js';
import { DmarcFormatError, failureReason, parseAggregateXml, xmlFilesOf, type DmarcAggregate } from './dmarc.parse.js';
import * as repo from './dmarc.repository.js';
import type { DmarcReport } from './dmarc.schemas.js';

/** An attachment of a message that arrived at `dmarc@bounces.<domain>`. */
export interface DmarcAttachment {
  filename: string | null;
  contentType: string;
  content: Buffer;
}

/** What became of the reports in one message. */
export interface DmarcIntake {
  /** Reports stored (once per workspace that has the domain). */
  stored: number;
  /** Reports the workspace had already (the same reporter's report id). */
  duplicates: number;
  /** Reports not stored because the workspace's daily limit for the domain was reached. */
  dropped: number;
  /** Why an attachment or a report was not stored, in words. */
  problems: string[];
}

/**
 * The most reports a workspace stores for one domain in 24 hours. A domain hears from a few dozen receivers a day;
 * anyone can mail the address, so a flood beyond this is dropped (and said in `problems`).
 */
export const DMARC_MAX_REPORTS_PER_DAY = 500;

/** Whether a report is about `domain`: its policy was found there or above it, or a record's From is it. */
function concerns(report: DmarcAggregate, domain: string): boolean {
  const p = report.policy.domain;
  return p === domain || domain.endsWith(`.${p}`) || report.records.some((r) => r.headerFrom === domain);
}

/**
 * DMARC aggregate reports mailed to `dmarc@bounces.<domain>` (docs/domains.md, "DMARC reports"): every XML, gzip or zip
 * attachment is read, and each report about the domain is stored for every workspace given (those where the domain
 * is a verified sending domain), once per reporter's report id. Never throws for what the message contains: what it
 * cannot use is said in `problems`, and the inbound listener keeps the message for review when nothing was stored.
 */
export async function recordDmarcReports(
  db: Db,
  input: {
    domain: string;
    workspaceIds: readonly string[];
    attachments: readonly DmarcAttachment[];
    maxReportsPerDay?: number;
  },
): Promise<DmarcIntake> {
  const max = input.maxReportsPerDay ?? DMARC_MAX_REPORTS_PER_DAY;
  const since = new Date(Date.now() - 86_400_000).toISOString();
  const out: DmarcIntake = { stored: 0, duplicates: 0, dropped: 0, problems: [] };
  const reports: DmarcAggregate[] = [];
  for (const a of input.attachments) {
    const name = a.filename ?? a.contentType;
    try {
      const files = xmlFilesOf(a.content);
      if (!files.length && /xml|zip|gzip/i.test(`${a.contentType} ${a.filename ?? ''}`))
        out.problems.push(`${name}: neither XML, gzip nor zip`);
      for (const xml of files) reports.push(parseAggregateXml(xml));
    } catch (err) {
      if (!(err instanceof DmarcFormatError)) throw err;
      out.problems.push(`${name}: ${err.message}`);
    }
  }
  if (!reports.length && !out.problems.length) out.problems.push('no DMARC aggregate report attached');
  const now = nowIso();
  for (const report of reports) {
    if (!concerns(report, input.domain)) {
      out.problems.push(
        `the report ${report.reportId} of ${report.orgName} is about ${report.policy.domain}, not ${input.domain}`,
      );
      continue;
    }
    for (const workspaceId of input.workspaceIds) {
      const domain = await findDomainByName(db.kysely, workspaceId, input.domain);
      if (!domain) continue;
      if ((await repo.reportsReceivedSince(db.kysely, workspaceId, domain.id, since)) >= max) {
        out.problems.push(
          `the report ${report.reportId} of ${report.orgName}: ${max} reports stored in 24 hours already`,
        );
        out.dropped++;
        continue;
      }
      const stored = await db.kysely
        .transaction()
        .execute((trx) => repo.insertReport(trx, workspaceId, domain.id, report, failureReason, now));
      if (stored) out.stored++;
      else out.duplicates++;
    }
  }
  return out;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_DAYS = 366;
const SOURCES = 200;
const ROWS = 500;

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const isDay = (s: string) => DAY.test(s) && dayOf(Date.parse(`${s}T00:00:00Z`)) === s;

/** What receivers reported of a domain (GET /v1/domains/{id}/dmarc). */
export class DmarcService {
  constructor(private readonly db: Db) {}

  async report(workspaceId: string, domainId: string, query: { from?: string; to?: string }): Promise<DmarcReport> {
    const domain = await getDomain(this.db.kysely, workspaceId, domainId);
    if (!domain) throw notFound('domain');
    const errors: { path: string; message: string }[] = [];
    for (const k of ['from', 'to'] as const)
      if (query[k] !== undefined && !isDay(query[k]))
        errors.push({ path: `/query/${k}`, message: 'must be a day: YYYY-MM-DD' });
    if (errors.length) throw validationFailed(errors);
    const to = query.to ?? dayOf(Date.now());
    const from = query.from ?? dayOf(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000);
    const span = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
    if (span < 1) throw validationFailed([{ path: '/query/from', message: 'must not be after to' }]);
    if (span > MAX_DAYS)
      throw validationFailed([{ path: '/query/from', message: `the range may cover at most ${MAX_DAYS} days` }]);

    const k = this.db.kysely;
    const range = { from, to };
    const totals = await repo.totals(k, workspaceId, domain.id, range);
    const top = await repo.sources(k, workspaceId, domain.id, range, SOURCES);
    const details = await repo.sourceDetails(
      k,
      workspaceId,
      domain.id,
      range,
      top.map((s) => s.ip),
    );
    const { rows, truncated } = await repo.records(k, workspaceId, domain.id, range, ROWS);
    const fail = totals.messages - totals.pass;
    return {
      domain: { id: domain.id, name: domain.name },
      from,
      to,
      summary: {
        ...totals,
        fail,
        passRate: totals.messages ? Math.round((totals.pass / totals.messages) * 1e6) / 1e6 : null,
      },
      days: (await repo.perDay(k, workspaceId, domain.id, range)).map((d) => ({ ...d, fail: d.messages - d.pass })),
      sources: top.map((s) => {
        const mine = details.filter((d) => d.source_ip === s.ip);
        const why = new Map<string, number>();
        for (const d of mine) if (d.why) why.set(d.why, (why.get(d.why) ?? 0) + d.messages);
        return {
          ...s,
          fail: s.messages - s.pass,
          reporters: [...new Set(mine.map((d) => d.org_name))].sort().slice(0, 10),
          headerFrom: [...new Set(mine.map((d) => d.header_from))].sort().slice(0, 10),
          why: [...why]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 5)
            .map(([reason, messages]) => ({ reason, messages })),
        };
      }),
      rows,
      rowsTruncated: truncated,
    };
  }
}
