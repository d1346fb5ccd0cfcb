import SQLite from 'better-sqlite3';
import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './connection.js';
import { foundation } from './migrations/0001_foundation.js';
import { audienceAndBroadcasts } from './migrations/0002_audience_broadcasts.js';
import { deliveries } from './migrations/0003_deliveries.js';
import { submissions } from './migrations/0004_submissions.js';
import { importHeartbeat } from './migrations/0005_import_heartbeat.js';
import { signupSafety } from './migrations/0006_signup_safety.js';
import { suppressionAndBounces } from './migrations/0007_suppression_bounces.js';
import { mailSettings } from './migrations/0008_mail_settings.js';
import { eventsAndWebhooks } from './migrations/0009_events_webhooks.js';
import { users } from './migrations/0010_users.js';
import { segmentIndexes } from './migrations/0011_segment_indexes.js';
import { authVersion } from './migrations/0012_auth_version.js';
import { eventsBroadcastPartial } from './migrations/0013_events_broadcast_partial.js';
import { automations } from './migrations/0014_automations.js';
import { signupProtection } from './migrations/0015_signup_protection.js';
import { submissionConsent } from './migrations/0016_submission_consent.js';
import { submissionIntake } from './migrations/0017_submission_intake.js';
import { automationGuards } from './migrations/0018_automation_guards.js';
import { abuseLimits } from './migrations/0019_abuse_limits.js';
import { secretsAtRest } from './migrations/0020_secrets_at_rest.js';
import { templateDocuments } from './migrations/0021_template_documents.js';
import { images } from './migrations/0022_images.js';
import { dmarcReports } from './migrations/0023_dmarc_reports.js';
import { trackingHost } from './migrations/0025_tracking_host.js';
import { twoFactor } from './migrations/0026_two_factor.js';
import { auditLog } from './migrations/0027_audit_log.js';
import { resubscribeConfirmations } from './migrations/0028_resubscribe_confirmations.js';
import { abTests } from './migrations/0029_ab_tests.js';
import { contactTags } from './migrations/0030_contact_tags.js';
import { engagementIndex } from './migrations/0031_engagement_index.js';
import { publicArchive } from './migrations/0032_public_archive.js';
import { timeZones } from './migrations/0033_time_zones.js';
import { transactionalEmails } from './migrations/0034_transactional_emails.js';
import { engagementSummary } from './migrations/0035_engagement_summary.js';
import { eventsEmail } from './migrations/0036_events_email.js';
import { contactSearch } from './migrations/0037_contact_search.js';
import { senderHealthHours } from './migrations/0039_sender_health_hours.js';
import { abSelection } from './migrations/0040_ab_selection.js';
import { statsIndexes } from './migrations/0038_stats_indexes.js';

/** Migrations are code, listed here in order; the same list runs on SQLite and PostgreSQL. */
function migrations(db: Db): Record<string, Migration> {
  return {
    '0001_foundation': foundation(db.dialect),
    '0002_audience_broadcasts': audienceAndBroadcasts(db.dialect),
    '0003_deliveries': deliveries(db.dialect),
    '0004_submissions': submissions(db.dialect),
    '0005_import_heartbeat': importHeartbeat(db.dialect),
    '0006_signup_safety': signupSafety(db.dialect),
    '0007_suppression_bounces': suppressionAndBounces(db.dialect),
    '0008_mail_settings': mailSettings(db.dialect),
    '0009_events_webhooks': eventsAndWebhooks(db.dialect),
    '0010_users': users(db.dialect),
    '0011_segment_indexes': segmentIndexes(db.dialect),
    '0012_auth_version': authVersion(db.dialect),
    '0013_events_broadcast_partial': eventsBroadcastPartial(),
    '0014_automations': automations(db.dialect),
    '0015_signup_protection': signupProtection(db.dialect),
    '0016_submission_consent': submissionConsent(db.dialect),
    '0017_submission_intake': submissionIntake(db.dialect),
    '0018_automation_guards': automationGuards(),
    '0019_abuse_limits': abuseLimits(db.dialect),
    '0020_secrets_at_rest': secretsAtRest(db.dialect),
    '0021_template_documents': templateDocuments(db.dialect),
    '0022_images': images(db.dialect),
    '0023_dmarc_reports': dmarcReports(db.dialect),
    '0025_tracking_host': trackingHost(db.dialect),
    '0026_two_factor': twoFactor(db.dialect),
    '0027_audit_log': auditLog(db.dialect),
    '0028_resubscribe_confirmations': resubscribeConfirmations(db.dialect),
    '0029_ab_tests': abTests(db.dialect),
    '0030_contact_tags': contactTags(db.dialect),
    '0031_engagement_index': engagementIndex(db.dialect),
    '0032_public_archive': publicArchive(db.dialect),
    '0033_time_zones': timeZones(db.dialect),
    '0034_transactional_emails': transactionalEmails(db.dialect),
    '0035_engagement_summary': engagementSummary(db.dialect),
    '0036_events_email': eventsEmail(),
    '0037_contact_search': contactSearch(db.dialect),
    '0038_stats_indexes': statsIndexes(),
    '0039_sender_health_hours': senderHealthHours(db.dialect),
    '0040_ab_selection': abSelection(db.dialect),
  };
}

/**
 * Applies the pending migrations. PostgreSQL: Kysely's advisory lock keeps two processes starting at once from both
 * migrating. SQLite: Kysely takes no lock there (one connection, it says) and runs the migrations outside a transaction
 * (0007 needs that for its pragma), so two processes starting at once on an upgraded file both ran them ("table …
 * already exists"); they take turns on an exclusive lock of a small file of their own beside the database, which the
 * operating system lets go if a process dies holding it.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const file = db.dialect === 'sqlite' ? db.file : undefined;
  if (!file) return migrate(db);
  // Connections of this process take turns here first: waiting for the file's lock blocks the thread (busy_timeout),
  // which would stop the holder of this process from ever finishing.
  const before = turns.get(file) ?? Promise.resolve();
  const mine = before.then(() => {
    const lock = new SQLite(`${file}-migrate-lock`);
    try {
      lock.pragma('busy_timeout = 120000');
      lock.exec('begin exclusive');
    } catch (err) {
      lock.close();
      throw err;
    }
    return migrate(db).finally(() => {
      if (lock.inTransaction) lock.exec('rollback');
      lock.close();
    });
  });
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  turns.set(file, settled);
  void settled.then(() => {
    if (turns.get(file) === settled) turns.delete(file);
  });
  return mine;
}

const turns = new Map<string, Promise<void>>();

async function migrate(db: Db): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(db) };
  // Kysely looks for its own tables in every schema it can see; pin it to ours, or a database holding
  // another Formcast schema (tests, a second instance) would make it skip creating them here.
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s
      : undefined;
  const migrator = new Migrator({ db: db.kysely, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  // SQLite: what the migrations wrote is copied into the database file at once, and the log starts over. A first start
  // (every migration) otherwise left the log past the size at which the checkpoint thread starts (db/checkpointer.ts),
  // so a server that had written nothing else yet ran that thread: ~10 MB more idle RSS (bench/README.md, bench:startup).
  if (applied.length && db.dialect === 'sqlite') await sql`pragma wal_checkpoint(truncate)`.execute(db.kysely);
  return applied;
}

/** The migrations not applied to the database yet, in order (`formcast doctor`); applies nothing. */
export async function pendingMigrations(db: Db): Promise<{ applied: string[]; pending: string[] }> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(db) };
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db.kysely)).rows[0]?.s
      : undefined;
  const migrator = new Migrator({ db: db.kysely, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const all = await migrator.getMigrations();
  return {
    applied: all.filter((m) => m.executedAt).map((m) => m.name),
    pending: all.filter((m) => !m.executedAt).map((m) => m.name),
  };
}
