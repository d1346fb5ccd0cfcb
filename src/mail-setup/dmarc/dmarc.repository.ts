import type { Executor } from '../../db/connection.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { newId } from '../../lib/ids.js';
import type { DmarcAggregate, DmarcRecord } from './dmarc.parse.js';

/** Rows inserted per statement (SQLite's bound-variable limit stays far away: 19 columns each). */
const BATCH = 200;

/**
 * Stores one report and its records for a domain of the workspace, in the caller's transaction. False when the
 * workspace already has this report (the same reporter's `report_id` for the domain): a report mailed twice counts
 * once.
 */
export async function insertReport(
  trx: Executor,
  workspaceId: string,
  domainId: string,
  report: DmarcAggregate,
  why: (r: DmarcRecord) => string | null,
  now: string,
): Promise<boolean> {
  const id = newId('dmr');
  const inserted = await trx
    .insertInto('dmarc_reports')
    .values({
      id,
      workspace_id: workspaceId,
      domain_id: domainId,
      org_name: report.orgName,
      report_id: report.reportId,
      email: report.email,
      begin_at: report.begin,
      end_at: report.end,
      day: report.day,
      policy_domain: report.policy.domain,
      policy: toJsonColumn(report.policy)!,
      messages: report.records.reduce((n, r) => n + r.count, 0),
      received_at: now,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'domain_id', 'org_name', 'report_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return false;
  for (let i = 0; i < report.records.length; i += BATCH) {
    await trx
      .insertInto('dmarc_rows')
      .values(
        report.records.slice(i, i + BATCH).map((r, j) => ({
          id: `${id}.${i + j}`,
          workspace_id: workspaceId,
          domain_id: domainId,
          report_id: id,
          day: report.day,
          org_name: report.orgName,
          source_ip: r.sourceIp,
          messages: r.count,
          disposition: r.disposition,
          dmarc: r.dkim === 'pass' || r.spf === 'pass' ? 'pass' : 'fail',
          dkim: r.dkim,
          spf: r.spf,
          header_from: r.headerFrom,
          envelope_from: r.envelopeFrom,
          dkim_results: toJsonColumn(r.dkimResults)!,
          spf_results: toJsonColumn(r.spfResults)!,
          reasons: toJsonColumn(r.reasons)!,
          why: why(r),
        })),
      )
      .execute();
  }
  return true;
}

/** Reports the workspace stored for the domain since `since` (the daily limit against floods). */
export async function reportsReceivedSince(
  db: Executor,
  workspaceId: string,
  domainId: string,
  since: string,
): Promise<number> {
  const r = await db
    .selectFrom('dmarc_reports')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('received_at', '>=', since)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export interface DayRange {
  from: string;
  to: string;
}

const num = (v: unknown) => Number(v ?? 0);

/** Totals over the range: messages, how many passed, aligned SPF and DKIM, quarantined and rejected; reports, reporters. */
export async function totals(db: Executor, workspaceId: string, domainId: string, range: DayRange) {
  const r = await db
    .selectFrom('dmarc_rows')
    .select((eb) => [
      eb.fn.sum<string>('messages').as('messages'),
      eb.fn.sum<string>(eb.case().when('dmarc', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('pass'),
      eb.fn.sum<string>(eb.case().when('spf', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('spf'),
      eb.fn.sum<string>(eb.case().when('dkim', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('dkim'),
      eb.fn
        .sum<string>(eb.case().when('disposition', '=', 'quarantine').then(eb.ref('messages')).else(0).end())
        .as('quarantined'),
      eb.fn
        .sum<string>(eb.case().when('disposition', '=', 'reject').then(eb.ref('messages')).else(0).end())
        .as('rejected'),
      eb.fn.count<string>('source_ip').distinct().as('sources'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .executeTakeFirst();
  const reports = await db
    .selectFrom('dmarc_reports')
    .select(['org_name'])
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .groupBy('org_name')
    .orderBy('org_name')
    .execute();
  return {
    messages: num(r?.messages),
    pass: num(r?.pass),
    spfAligned: num(r?.spf),
    dkimAligned: num(r?.dkim),
    quarantined: num(r?.quarantined),
    rejected: num(r?.rejected),
    sources: num(r?.sources),
    reports: reports.reduce((n, x) => n + num(x.n), 0),
    reporters: reports.map((x) => x.org_name),
  };
}

/** Messages and failures per day of the range (days without reports are absent). */
export async function perDay(db: Executor, workspaceId: string, domainId: string, range: DayRange) {
  const rows = await db
    .selectFrom('dmarc_rows')
    .select('day')
    .select((eb) => [
      eb.fn.sum<string>('messages').as('messages'),
      eb.fn.sum<string>(eb.case().when('dmarc', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('pass'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .groupBy('day')
    .orderBy('day')
    .execute();
  return rows.map((r) => ({ day: r.day, messages: num(r.messages), pass: num(r.pass) }));
}

/** The source IPs of the range, most messages first (at most `limit`), with their counts. */
export async function sources(db: Executor, workspaceId: string, domainId: string, range: DayRange, limit: number) {
  const rows = await db
    .selectFrom('dmarc_rows')
    .select('source_ip')
    .select((eb) => [
      eb.fn.sum<string>('messages').as('messages'),
      eb.fn.sum<string>(eb.case().when('dmarc', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('pass'),
      eb.fn.sum<string>(eb.case().when('spf', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('spf'),
      eb.fn.sum<string>(eb.case().when('dkim', '=', 'pass').then(eb.ref('messages')).else(0).end()).as('dkim'),
      eb.fn
        .sum<string>(eb.case().when('disposition', '=', 'quarantine').then(eb.ref('messages')).else(0).end())
        .as('quarantined'),
      eb.fn
        .sum<string>(eb.case().when('disposition', '=', 'reject').then(eb.ref('messages')).else(0).end())
        .as('rejected'),
      eb.fn.min<string>('day').as('first_day'),
      eb.fn.max<string>('day').as('last_day'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .groupBy('source_ip')
    .orderBy('messages', 'desc')
    .orderBy('source_ip')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    ip: r.source_ip,
    messages: num(r.messages),
    pass: num(r.pass),
    spfAligned: num(r.spf),
    dkimAligned: num(r.dkim),
    quarantined: num(r.quarantined),
    rejected: num(r.rejected),
    firstDay: r.first_day,
    lastDay: r.last_day,
  }));
}

/** For the given source IPs: their reporters, From domains and distinct failure reasons (with the messages of each). */
export async function sourceDetails(
  db: Executor,
  workspaceId: string,
  domainId: string,
  range: DayRange,
  ips: string[],
) {
  if (!ips.length) return [];
  return db
    .selectFrom('dmarc_rows')
    .select(['source_ip', 'org_name', 'header_from', 'why'])
    .select((eb) => eb.fn.sum<string>('messages').as('messages'))
    .where('workspace_id', '=', workspaceId)
    .where('domain_id', '=', domainId)
    .where('day', '>=', range.from)
    .where('day', '<=', range.to)
    .where('source_ip', 'in', ips)
    .groupBy(['source_ip', 'org_name', 'header_from', 'why'])
    .execute()
    .then((rows) => rows.map((r) => ({ ...r, messages: num(r.messages) })));
}

/** The records of the range, most messages first, at most `limit` (and whether there were more). */
export async function records(db: Executor, workspaceId: string, domainId: string, range: DayRange, limit: number) {
  const rows = await db
    .selectFrom('dmarc_rows')
    .innerJoin('dmarc_reports', 'dmarc_reports.id', 'dmarc_rows.report_id')
    .select([
      'dmarc_rows.day',
      'dmarc_rows.org_name',
      'dmarc_reports.report_id',
      'dmarc_rows.source_ip',
      'dmarc_rows.messages',
      'dmarc_rows.disposition',
      'dmarc_rows.dmarc',
      'dmarc_rows.dkim',
      'dmarc_rows.spf',
      'dmarc_rows.header_from',
      'dmarc_rows.envelope_from',
      'dmarc_rows.dkim_results',
      'dmarc_rows.spf_results',
      'dmarc_rows.reasons',
      'dmarc_rows.why',
    ])
    .where('dmarc_rows.workspace_id', '=', workspaceId)
    .where('dmarc_rows.domain_id', '=', domainId)
    .where('dmarc_rows.day', '>=', range.from)
    .where('dmarc_rows.day', '<=', range.to)
    .orderBy('dmarc_rows.day', 'desc')
    .orderBy('dmarc_rows.messages', 'desc')
    .orderBy('dmarc_rows.id')
    .limit(limit + 1)
    .execute();
  return {
    truncated: rows.length > limit,
    rows: rows.slice(0, limit).map((r) => ({
      day: r.day,
      reporter: r.org_name,
      reportId: r.report_id,
      sourceIp: r.source_ip,
      messages: num(r.messages),
      disposition: r.disposition,
      dmarc: r.dmarc,
      dkim: r.dkim,
      spf: r.spf,
      headerFrom: r.header_from,
      envelopeFrom: r.envelope_from,
      dkimResults: fromJsonColumn<DmarcRecord['dkimResults']>(r.dkim_results) ?? [],
      spfResults: fromJsonColumn<DmarcRecord['spfResults']>(r.spf_results) ?? [],
      reasons: fromJsonColumn<DmarcRecord['reasons']>(r.reasons) ?? [],
      why: r.why,
    })),
  };
}
