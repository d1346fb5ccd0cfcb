import type { Kysely } from 'kysely';
import type { Dialect } from '../connection.js';
import { columnTypes } from './types.js';

/**
 * DMARC aggregate reports (issue 32, docs/domains.md "DMARC reports"): what receivers saw of mail sent as a sending
 * domain, received at `dmarc@bounces.<domain>`.
 * - `dmarc_reports`: one row per report (a receiver's report id, per workspace and domain, so a report sent twice is
 *   stored once), with its date range, the day it is counted on, and the policy the receiver found.
 * - `dmarc_rows`: the report's records, one per source IP and result: how many messages, the receiver's DMARC
 *   verdict (aligned DKIM and SPF), its disposition, the raw DKIM and SPF results, and why it failed, in words.
 * Both go with their domain (and workspace).
 */
export function dmarcReports(dialect: Dialect) {
  const { ts, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('dmarc_reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('domain_id', 'text', (c) => c.notNull().references('domains.id').onDelete('cascade'))
        .addColumn('org_name', 'text', (c) => c.notNull())
        .addColumn('report_id', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('begin_at', ts, (c) => c.notNull())
        .addColumn('end_at', ts, (c) => c.notNull())
        // The UTC day the report counts on (the middle of its range): YYYY-MM-DD.
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('policy_domain', 'text', (c) => c.notNull())
        .addColumn('policy', json, (c) => c.notNull())
        .addColumn('messages', 'bigint', (c) => c.notNull())
        .addColumn('received_at', ts, (c) => c.notNull())
        .addUniqueConstraint('dmarc_reports_once', ['workspace_id', 'domain_id', 'org_name', 'report_id'])
        .execute();
      await db.schema
        .createIndex('dmarc_reports_day')
        .on('dmarc_reports')
        .columns(['workspace_id', 'domain_id', 'day'])
        .execute();
      await db.schema
        .createTable('dmarc_rows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('domain_id', 'text', (c) => c.notNull().references('domains.id').onDelete('cascade'))
        .addColumn('report_id', 'text', (c) => c.notNull().references('dmarc_reports.id').onDelete('cascade'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('org_name', 'text', (c) => c.notNull())
        .addColumn('source_ip', 'text', (c) => c.notNull())
        .addColumn('messages', 'bigint', (c) => c.notNull())
        .addColumn('disposition', 'text', (c) => c.notNull())
        .addColumn('dmarc', 'text', (c) => c.notNull())
        .addColumn('dkim', 'text', (c) => c.notNull())
        .addColumn('spf', 'text', (c) => c.notNull())
        .addColumn('header_from', 'text', (c) => c.notNull())
        .addColumn('envelope_from', 'text')
        .addColumn('dkim_results', json, (c) => c.notNull())
        .addColumn('spf_results', json, (c) => c.notNull())
        .addColumn('reasons', json, (c) => c.notNull())
        .addColumn('why', 'text')
        .execute();
      await db.schema
        .createIndex('dmarc_rows_day')
        .on('dmarc_rows')
        .columns(['workspace_id', 'domain_id', 'day'])
        .execute();
      await db.schema.createIndex('dmarc_rows_report').on('dmarc_rows').column('report_id').execute();
    },
  };
}
