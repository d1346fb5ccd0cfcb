import fs from 'node:fs';
import os from 'node:os';
import { isIP } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { parsePacing, PacingConfigError, type PacingConfig } from './sending/deliveries/pacing.config.js';
import { parseRelayUrls, RelayConfigError, type RelayUrl } from './mail/relay-urls.js';
import {
  detectRelayProfile,
  isRelayProfileName,
  RELAY_PROFILES,
  sesRegionOf,
  type RelayProfileName,
} from './mail/relay-profiles.js';
import { PACKAGE_ROOT } from './lib/paths.js';
import { ConfigError } from './errors/config-error.js';
import { checkDatabaseUrl } from './db/url.js';
import type { SubmissionIntake } from './forms/submissions/submissions.intake.js';
export type { SubmissionIntake };
import { DEFAULT_BURST_RULES, type BurstRules } from './forms/protection/protection.bursts.js';
import { DEFAULT_POW_TUNING, type PowTuning } from './forms/protection/protection.pow.js';
import { DEFAULT_TRACK_QUOTA, type TrackQuota } from './outbox/events/events.quota.js';
import { DEFAULT_API_RATE_LIMIT } from './http/rate-limit.js';
import { DEFAULT_TRACKING_GUARDS, type TrackingGuards } from './sending/tracking/tracking.guards.js';
import { SUBMISSION_MAX_BYTES, type SubmissionSettings } from './mail/submission/submission.server.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** SMTP_URL, or the first of SMTP_URLS; null: the outbox. */
  smtpUrl: string | null;
  /** Every relay with its weight (SMTP_URLS; SMTP_URL is one relay); empty: the outbox. */
  smtpRelays: RelayUrl[];
  /** Pacing per receiving domain (SEND_PACING, docs/sending.md). */
  sendPacing: PacingConfig;
  publicUrl: string;
  /** False when PUBLIC_URL was not set and publicUrl is the listening address. */
  publicUrlExplicit: boolean;
  logLevel: string;
  dnsServers: string[];
  dnsTimeoutMs: number;
  /** Where messages go without SMTP_URL. */
  outboxDir: string;
  /** The outbox keeps messages this many days (OUTBOX_RETENTION_DAYS) and at most this many files (OUTBOX_MAX_FILES). */
  outboxRetention: { days: number; maxFiles: number };
  /** Connections of the SMTP pool. */
  smtpMaxConnections: number;
  /** Messages per second at most; 0 means no limit. */
  smtpRateLimit: number;
  /** Public form submissions per minute from one IP address to one form. */
  submissionsPerMinute: number;
  /**
   * The installation's key (db/secrets.ts): signs tokens in public addresses and seals the secrets kept in the database
   * (DKIM private keys, webhook secrets). SECRET_KEY; unset: the key file below.
   */
  secretKey: string | null;
  /** SECRET_KEY_FILE: where the generated key is kept without SECRET_KEY (default secret.key beside the SQLite file, else data/); null: an in-memory database, whose key lives as long as it. */
  secretKeyFile: string | null;
  /** Whether SECRET_KEY_FILE was set (db/secrets.ts: a database-held secret is adopted on PostgreSQL only into a named file). */
  secretKeyFileSet: boolean;
  /** Proxies whose X-Forwarded-For is believed (Fastify's trustProxy): false, true, or addresses/CIDRs. */
  trustProxy: boolean | string[];
  /** The EHLO name the SMTP client introduces itself with (SMTP_HELO_NAME). */
  smtpHeloName: string | null;
  /** Credentials in SMTP_URL over a connection without TLS are refused unless this is set (SMTP_ALLOW_PLAINTEXT_AUTH). */
  smtpAllowPlaintextAuth: boolean;
  /** The bounce domain's MX target (BOUNCE_MX_HOST): where the inbound listener receives bounces. */
  bounceMxHost: string;
  /** What the bounce domain's SPF record allows to send (SENDING_SPF), e.g. `include:amazonses.com`. */
  sendingSpf: string;
  /**
   * What the relay does to a message (RELAY_PROFILE: smtp, ses, postmark, sendgrid, mailgun; default: recognised from
   * the relay's host name, else smtp): what is signed, which headers are added, which DNS is advised (relay-profiles.ts).
   */
  relayProfile: RelayProfileName;
  /** SES's region, for its MAIL FROM records (SES_REGION; default: from the relay's host name). */
  sesRegion: string | null;
  /** The public addresses mail leaves from (SENDING_IPS), whose reverse DNS doctor checks; empty: the relays' own. */
  sendingIps: string[];
  /** The inbound SMTP listener (INBOUND_SMTP_PORT, INBOUND_SMTP_HOST); null port: not started by serve. */
  inboundSmtp: { port: number | null; host: string };
  /**
   * SMTP submission of transactional email (SUBMISSION_PORT, SUBMISSION_HOST, SUBMISSION_TLS_CERT, SUBMISSION_TLS_KEY,
   * SUBMISSION_ALLOW_INSECURE_AUTH, SUBMISSION_MAX_BYTES; docs/smtp-submission.md); null: SUBMISSION_PORT unset.
   */
  submission: SubmissionSettings | null;
  /**
   * Provider webhooks (docs/bounces.md): the host an SNS signing certificate may come from; the SNS topics whose
   * messages /hooks/ses accepts (SES_TOPIC_ARNS; none: every SNS message is refused); Postmark's basic auth.
   */
  hooks: { snsCertHost: RegExp; snsTopicArns: string[]; postmarkUser: string | null; postmarkPassword: string | null };
  /** After sending (docs/bounces.md): the soft-bounce limit and the circuit breaker's rates. */
  bounces: {
    softBounceLimit: number;
    /** The soft-bounce streak must span at least this many days (SOFT_BOUNCE_DAYS; 0: any time). */
    softBounceDays: number;
    pauseBounceRate: number;
    pauseComplaintRate: number;
  };
  /** Webhooks (docs/webhooks.md): http:// URLs (WEBHOOKS_ALLOW_HTTP), hosts on non-public addresses (WEBHOOKS_ALLOW_PRIVATE). */
  webhooks: { allowHttp: boolean; allowPrivate: boolean };
  /**
   * Automations' loop guards (docs/automations.md, "Loops and limits"): how long a contact whose run ended waits before it
   * enters the same automation again (AUTOMATION_REENTRY_COOLDOWN_SECONDS, 0: at once), and how many messages the
   * automations may queue for one contact in 24 hours (AUTOMATION_MAX_EMAILS_PER_CONTACT_PER_DAY).
   */
  automations: { reentryCooldownMs: number; maxMessagesPerContactPerDay: number };
  /** Delivery worker tuning (see deliveries/CONTEXT.md); the defaults suit production. */
  worker: {
    batchSize: number;
    leaseMs: number;
    maxAttempts: number;
    backoffBaseMs: number;
    pollMs: number;
    /**
     * How often a loop that has found nothing to do for 30 s looks (WORKER_IDLE_POLL_MS; 0: at its own pace always).
     * Any work found, or given by this process, brings it back to its pace (jobs/runner.ts IdlePolling).
     */
    idlePollMs: number;
    /** How long a loop finds nothing to do before it polls at idlePollMs (WORKER_IDLE_AFTER_MS, 30 s). */
    idleAfterMs: number;
    /** Threads that render, compose and sign messages (SEND_THREADS; 0: the worker's own thread). */
    sendThreads: number;
    /** How much lower the send threads run than the worker's own thread (SEND_THREADS_NICE, 0-19; 0: the same). */
    sendThreadsNice: number;
    /** Delivery batches a process works on at once (WORKER_BATCHES), each claimed and recorded on its own. */
    batches: number;
    /** `formcast serve` runs the worker and the periodic jobs in-process (SERVE_WORKER, default true). */
    inServe: boolean;
    /**
     * The transactional lane's retries (docs/emails.md): attempts (EMAILS_MAX_ATTEMPTS), the first wait
     * (EMAILS_BACKOFF_BASE_MS, doubled each time) and the longest (EMAILS_BACKOFF_MAX_MS).
     */
    emailsMaxAttempts: number;
    emailsBackoffBaseMs: number;
    emailsBackoffMaxMs: number;
  };
  /** V8's heap kept lean (LEAN_HEAP; `formcast worker`: default true, otherwise false): applied by the CLI at start, lib/lean-heap.ts (docs/sending.md, "Memory"). */
  leanHeap: boolean;
  /** Days events are kept (EVENTS_RETENTION_DAYS); older ones are pruned by the worker, in batches. */
  eventsRetentionDays: number;
  /** Days audit log entries are kept (AUDIT_RETENTION_DAYS, docs/audit-log.md); older ones are pruned by the worker. */
  auditRetentionDays: number;
  /**
   * Sign-up bursts held for review (docs/bot-protection.md): within SIGNUP_BURST_WINDOW_SECONDS, how many public
   * submissions of a workspace may share a network (SIGNUP_BURST_IP_RANGE), an address pattern (SIGNUP_BURST_PATTERN), a
   * mailbox (SIGNUP_BURST_MAILBOX) or a domain (SIGNUP_BURST_DOMAIN) before the next is held; 0 turns a rule off.
   */
  signupBursts: BurstRules;
  /** The proof-of-work challenge's difficulty (POW_COST iterations per attempt; POW_MIN_ATTEMPTS..POW_MAX_ATTEMPTS attempts). */
  proofOfWork: PowTuning;
  /** Days a submission keeps the address and user agent it came from (SUBMISSION_RETENTION_DAYS); then the worker clears them. */
  submissionRetentionDays: number;
  /**
   * When a public submission is answered once it is stored as it came and made into its contact moments later by the
   * intake job (SUBMISSION_INTAKE): `auto` (during a spike), `always`, `off` (docs/forms.md, "A spike of submissions").
   */
  submissionIntake: SubmissionIntake;
  /**
   * SQLite: where the write-ahead log is copied back into the database file (SQLITE_CHECKPOINTS) in the long-running
   * commands: `background`, a thread of their own (db/checkpointer.ts), or `inline`, SQLite's automatic checkpoint in
   * the committing connection (docs/cli.md, "SQLite's checkpoints").
   */
  sqliteCheckpoints: 'background' | 'inline';
  /** Replays and floods of tracking links (docs/tracking.md, "Replays and floods"); 0 turns a guard off. */
  tracking: TrackingGuards;
  /** /v1 requests per minute per API key or console session (RATE_LIMIT_PER_KEY, docs/api.md); 0: no limit. */
  apiRateLimit: number;
  /** POST /v1/emails per minute per API key or session (EMAILS_RATE_LIMIT, docs/emails.md); 0: no limit. */
  emailsRateLimit?: number;
  /** POST /v1/events/track per workspace and minute (docs/automations.md, "Custom events"); 0 turns a budget off. */
  trackQuota: TrackQuota;
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function rateFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const text = raw.trim();
  const n = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1)
    throw new ConfigError(`${name} must be a rate between 0 and 1 (0.05) or a percentage (5%), got "${raw}"`);
  return n;
}

function boolFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function intakeFrom(env: NodeJS.ProcessEnv): SubmissionIntake {
  const raw = env.SUBMISSION_INTAKE;
  if (raw === undefined || raw === '') return 'auto';
  if (raw === 'auto' || raw === 'always' || raw === 'off') return raw;
  throw new ConfigError(`SUBMISSION_INTAKE must be auto, always or off, got "${raw}"`);
}

function checkpointsFrom(env: NodeJS.ProcessEnv): 'background' | 'inline' {
  const raw = env.SQLITE_CHECKPOINTS;
  if (raw === undefined || raw === '') return 'background';
  if (raw === 'background' || raw === 'inline') return raw;
  throw new ConfigError(`SQLITE_CHECKPOINTS must be background or inline, got "${raw}"`);
}

/** A PEM setting: the PEM text itself (it starts with `-----BEGIN`), or the path of a file holding it, read at start. */
function pemFrom(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return null;
  if (raw.startsWith('-----BEGIN')) return raw.replace(/\\n/g, '\n');
  try {
    return fs.readFileSync(raw, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name} is neither PEM text nor a readable file: ${(err as Error).message}`);
  }
}

/** SMTP submission's settings (docs/smtp-submission.md); null without SUBMISSION_PORT. */
function submissionFrom(env: NodeJS.ProcessEnv, host: string): SubmissionSettings | null {
  if (env.SUBMISSION_PORT === undefined || env.SUBMISSION_PORT === '') return null;
  const port = intFrom(env, 'SUBMISSION_PORT', 587, 0, 65535);
  const cert = pemFrom(env, 'SUBMISSION_TLS_CERT');
  const key = pemFrom(env, 'SUBMISSION_TLS_KEY');
  const allowInsecureAuth = boolFrom(env, 'SUBMISSION_ALLOW_INSECURE_AUTH', false);
  if ((cert === null) !== (key === null))
    throw new ConfigError('set both SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY (the certificate and its private key)');
  if (cert !== null && key !== null) {
    try {
      tls.createSecureContext({ cert, key });
    } catch (err) {
      throw new ConfigError(
        `SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY are not a usable certificate and key: ${(err as Error).message}`,
      );
    }
  } else if (!allowInsecureAuth) {
    throw new ConfigError(
      'SUBMISSION_PORT needs SUBMISSION_TLS_CERT and SUBMISSION_TLS_KEY (STARTTLS): the password is an API key. Set SUBMISSION_ALLOW_INSECURE_AUTH=true only where the connection cannot be read by others (loopback, a private network)',
    );
  }
  return {
    port,
    host: env.SUBMISSION_HOST || host,
    tls: cert !== null && key !== null ? { cert, key } : null,
    allowInsecureAuth,
    maxBytes: intFrom(env, 'SUBMISSION_MAX_BYTES', SUBMISSION_MAX_BYTES, 1024, 100 * 1024 * 1024),
  };
}

export { ConfigError };

/** The SQLite file used when DATABASE_URL is not set: data/formcast.db in the project's folder (not the working directory). */
export function defaultDatabasePath(): string {
  return path.join(PACKAGE_ROOT, 'data', 'formcast.db');
}

/**
 * Where the key is kept without SECRET_KEY (SECRET_KEY_FILE's default): `secret.key` in the SQLite file's folder, so that
 * the database and its key are found together by every process that opens that file; for PostgreSQL `data/secret.key`
 * in the project's folder (a database copy never includes it). An in-memory database has no file (null).
 */
export function defaultSecretKeyFile(databaseUrl: string): string | null {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return path.join(PACKAGE_ROOT, 'data', 'secret.key');
  if (databaseUrl === ':memory:' || /^file:.*[?&]mode=memory/.test(databaseUrl)) return null;
  return path.join(path.dirname(path.resolve(databaseUrl)), 'secret.key');
}

export { checkDatabaseUrl };

/** A setting's own parser's error, as a ConfigError. */
function wrap<T>(kind: new (...args: never[]) => Error, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof kind) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * TRUST_PROXY: unset or `false`; `true` (any peer is a proxy: only when nothing but your proxy can reach the
 * service); or the proxies' addresses and CIDRs (and the keywords loopback, linklocal, uniquelocal). A hop
 * count is refused: Fastify cannot check the peer with one, and would believe any client's X-Forwarded-For.
 */
function parseTrustProxy(raw: string | undefined): boolean | string[] {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw))
    throw new ConfigError(
      `TRUST_PROXY must name the proxies (addresses, CIDRs, or loopback), not a hop count: got "${raw}" (e.g. TRUST_PROXY=loopback for nginx or Caddy on the same host)`,
    );
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (
    !list.every((a) => /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(a) || ['loopback', 'linklocal', 'uniquelocal'].includes(a))
  ) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, or addresses/CIDRs (e.g. loopback or 10.0.0.0/8), got "${raw}"`,
    );
  }
  return list;
}

/** A host name to greet SMTP servers with: PUBLIC_URL's host unless it is an address. */
function heloFrom(hostname: string | null): string | null {
  return hostname && !isIP(hostname.replace(/^\[|\]$/g, '')) ? hostname : null;
}

/** Reads the environment (README, Configuration; docs/api.md §10). Fails fast on values that cannot work. */
/** What the services need to know of the configuration. */
export type AppConfig = Pick<Config, 'logLevel' | 'publicUrl'> &
  Partial<
    Pick<
      Config,
      | 'dnsServers'
      | 'dnsTimeoutMs'
      | 'submissionsPerMinute'
      | 'bounceMxHost'
      | 'sendingSpf'
      | 'relayProfile'
      | 'sesRegion'
      | 'trustProxy'
      | 'hooks'
      | 'bounces'
      | 'webhooks'
      | 'automations'
      | 'signupBursts'
      | 'proofOfWork'
      | 'submissionIntake'
    >
  > &
  Partial<Pick<Config, 'tracking' | 'apiRateLimit' | 'emailsRateLimit' | 'trackQuota'>> & {
    /** Signs tokens in public addresses (db/secrets.ts). */
    secret: Buffer;
  };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be a port number, got "${env.PORT}"`);
  const host = env.HOST || '127.0.0.1';
  // Applied by the CLI before anything loads (lib/lean-heap.ts: true by default for `formcast worker` only, which sets it
  // in the environment); read here so that a wrong value is refused, and for the send threads' default.
  const leanHeap = boolFrom(env, 'LEAN_HEAP', false);
  // The defaults live in the project's folder (that of package.json), whatever the working directory: a command run
  // from elsewhere uses the database the server uses, instead of creating an empty one there.
  const databaseUrl = env.DATABASE_URL || defaultDatabasePath();
  checkDatabaseUrl(databaseUrl);
  if (env.SMTP_URL && env.SMTP_URLS) throw new ConfigError('set SMTP_URL (one relay) or SMTP_URLS (several), not both');
  if (env.SMTP_URL && !/^smtps?:\/\//.test(env.SMTP_URL))
    throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  const smtpRelays = env.SMTP_URLS
    ? wrap(RelayConfigError, () => parseRelayUrls(env.SMTP_URLS!))
    : env.SMTP_URL
      ? [{ url: env.SMTP_URL, weight: 1 }]
      : [];
  const smtpUrl = smtpRelays[0]?.url ?? null;
  const sendPacing = wrap(PacingConfigError, () => parsePacing(env.SEND_PACING));
  const publicUrl = (env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${env.PUBLIC_URL}"`);
  }
  const dnsServers = (env.DNS_SERVERS || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const secretKey = env.SECRET_KEY || null;
  if (secretKey && secretKey.length < 32)
    throw new ConfigError('SECRET_KEY must be at least 32 characters (e.g. openssl rand -base64 32)');
  const secretKeyFile = env.SECRET_KEY_FILE ? path.resolve(env.SECRET_KEY_FILE) : defaultSecretKeyFile(databaseUrl);
  let snsCertHost: RegExp;
  try {
    snsCertHost = new RegExp(env.SNS_CERT_HOST_PATTERN || '^sns\\.[a-z0-9-]+\\.amazonaws\\.com(\\.cn)?$');
  } catch {
    throw new ConfigError('SNS_CERT_HOST_PATTERN must be a regular expression');
  }
  const snsTopicArns = (env.SES_TOPIC_ARNS || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const arn of snsTopicArns) {
    if (!/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(arn)) {
      throw new ConfigError(
        `SES_TOPIC_ARNS must be SNS topic ARNs separated by commas (arn:aws:sns:<region>:<account>:<topic>), got "${arn}"`,
      );
    }
  }
  const relayHosts = smtpRelays.map((r) => new URL(r.url).hostname.replace(/^\[|\]$/g, ''));
  const profileName = (env.RELAY_PROFILE || '').trim().toLowerCase();
  if (profileName && !isRelayProfileName(profileName))
    throw new ConfigError(`RELAY_PROFILE must be one of ${RELAY_PROFILES.join(', ')}, got "${env.RELAY_PROFILE}"`);
  const sesRegion = (env.SES_REGION || '').trim().toLowerCase() || sesRegionOf(relayHosts);
  if (sesRegion && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(sesRegion))
    throw new ConfigError(`SES_REGION must be an AWS region such as eu-west-1, got "${env.SES_REGION}"`);
  const sendingIps = (env.SENDING_IPS || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of sendingIps)
    if (!isIP(ip)) throw new ConfigError(`SENDING_IPS must be IP addresses separated by commas, got "${ip}"`);
  return {
    relayProfile: profileName ? (profileName as RelayProfileName) : detectRelayProfile(relayHosts),
    sesRegion,
    sendingIps,
    secretKey,
    secretKeyFile,
    secretKeyFileSet: Boolean(env.SECRET_KEY_FILE),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    // Default: the host of an explicit PUBLIC_URL (nodemailer's own default is often an IP literal, which receivers score).
    smtpHeloName: env.SMTP_HELO_NAME || heloFrom(env.PUBLIC_URL ? new URL(publicUrl).hostname : null),
    smtpAllowPlaintextAuth: env.SMTP_ALLOW_PLAINTEXT_AUTH === 'true',
    bounceMxHost: env.BOUNCE_MX_HOST || new URL(publicUrl).hostname,
    sendingSpf: env.SENDING_SPF || `a:${env.BOUNCE_MX_HOST || new URL(publicUrl).hostname}`,
    inboundSmtp: {
      port: env.INBOUND_SMTP_PORT ? intFrom(env, 'INBOUND_SMTP_PORT', 25, 0, 65535) : null,
      host: env.INBOUND_SMTP_HOST || host,
    },
    submission: submissionFrom(env, host),
    hooks: {
      snsCertHost,
      snsTopicArns,
      postmarkUser: env.POSTMARK_WEBHOOK_USER || null,
      postmarkPassword: env.POSTMARK_WEBHOOK_PASSWORD || null,
    },
    port,
    host,
    databaseUrl,
    smtpUrl,
    smtpRelays,
    sendPacing,
    publicUrl,
    publicUrlExplicit: Boolean(env.PUBLIC_URL),
    logLevel: env.LOG_LEVEL || 'info',
    dnsServers,
    dnsTimeoutMs: intFrom(env, 'DNS_TIMEOUT_MS', 5000, 1, 60_000),
    outboxDir: env.OUTBOX_DIR || path.join(PACKAGE_ROOT, 'data', 'outbox'),
    outboxRetention: {
      days: intFrom(env, 'OUTBOX_RETENTION_DAYS', 7, 1, 36_500),
      maxFiles: intFrom(env, 'OUTBOX_MAX_FILES', 10_000, 1, 10_000_000),
    },
    smtpMaxConnections: intFrom(env, 'SMTP_MAX_CONNECTIONS', 5, 1, 100),
    smtpRateLimit: intFrom(env, 'SMTP_RATE_LIMIT', 0, 0, 100_000),
    submissionsPerMinute: intFrom(env, 'SUBMISSION_RATE_LIMIT', 10, 1, 100_000),
    bounces: {
      softBounceLimit: intFrom(env, 'SOFT_BOUNCE_LIMIT', 3, 1, 100),
      softBounceDays: intFrom(env, 'SOFT_BOUNCE_DAYS', 7, 0, 365),
      pauseBounceRate: rateFrom(env, 'PAUSE_BOUNCE_RATE', 0.05),
      pauseComplaintRate: rateFrom(env, 'PAUSE_COMPLAINT_RATE', 0.005),
    },
    webhooks: { allowHttp: env.WEBHOOKS_ALLOW_HTTP === 'true', allowPrivate: env.WEBHOOKS_ALLOW_PRIVATE === 'true' },
    automations: {
      reentryCooldownMs: intFrom(env, 'AUTOMATION_REENTRY_COOLDOWN_SECONDS', 600, 0, 366 * 86_400) * 1000,
      maxMessagesPerContactPerDay: intFrom(env, 'AUTOMATION_MAX_EMAILS_PER_CONTACT_PER_DAY', 10, 1, 1000),
    },
    worker: {
      batchSize: intFrom(env, 'WORKER_BATCH_SIZE', 100, 1, 10_000),
      leaseMs: intFrom(env, 'WORKER_LEASE_MS', 60_000, 500, 3_600_000),
      maxAttempts: intFrom(env, 'WORKER_MAX_ATTEMPTS', 5, 1, 100),
      backoffBaseMs: intFrom(env, 'WORKER_BACKOFF_BASE_MS', 30_000, 1, 3_600_000),
      pollMs: intFrom(env, 'WORKER_POLL_MS', 500, 10, 60_000),
      idlePollMs: intFrom(env, 'WORKER_IDLE_POLL_MS', 1000, 0, 60_000),
      idleAfterMs: intFrom(env, 'WORKER_IDLE_AFTER_MS', 30_000, 0, 3_600_000),
      sendThreads: intFrom(env, 'SEND_THREADS', defaultSendThreads(os.availableParallelism()), 0, 64),
      // Below the worker's own thread, which the send waits on (its database and SMTP) and which serves HTTP in serve:
      // the threads take the CPU it leaves idle instead of its turns (send-threads.ts; bench/README.md).
      // 0 since a send thread's RSA signatures run in libuv's pool at the normal priority anyway: lowered, the one thread
      // of a 2-core machine only composed more slowly (bench/README.md, bench:send).
      sendThreadsNice: intFrom(env, 'SEND_THREADS_NICE', 0, 0, 19),
      batches: intFrom(env, 'WORKER_BATCHES', 2, 1, 16),
      inServe: boolFrom(env, 'SERVE_WORKER', true),
      emailsMaxAttempts: intFrom(env, 'EMAILS_MAX_ATTEMPTS', 12, 1, 100),
      emailsBackoffBaseMs: intFrom(env, 'EMAILS_BACKOFF_BASE_MS', 10_000, 1, 3_600_000),
      emailsBackoffMaxMs: intFrom(env, 'EMAILS_BACKOFF_MAX_MS', 900_000, 1, 86_400_000),
    },
    leanHeap,
    eventsRetentionDays: intFrom(env, 'EVENTS_RETENTION_DAYS', 400, 1, 36_500),
    auditRetentionDays: intFrom(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    signupBursts: {
      windowSeconds: intFrom(env, 'SIGNUP_BURST_WINDOW_SECONDS', DEFAULT_BURST_RULES.windowSeconds, 1, 86_400),
      ipRange: intFrom(env, 'SIGNUP_BURST_IP_RANGE', DEFAULT_BURST_RULES.ipRange, 0, 1_000_000),
      pattern: intFrom(env, 'SIGNUP_BURST_PATTERN', DEFAULT_BURST_RULES.pattern, 0, 1_000_000),
      mailbox: intFrom(env, 'SIGNUP_BURST_MAILBOX', DEFAULT_BURST_RULES.mailbox, 0, 1_000_000),
      domain: intFrom(env, 'SIGNUP_BURST_DOMAIN', DEFAULT_BURST_RULES.domain, 0, 1_000_000),
    },
    proofOfWork: {
      cost: intFrom(env, 'POW_COST', DEFAULT_POW_TUNING.cost, 1, 1_000_000),
      minCounter: intFrom(env, 'POW_MIN_ATTEMPTS', DEFAULT_POW_TUNING.minCounter, 1, 10_000_000),
      maxCounter: intFrom(env, 'POW_MAX_ATTEMPTS', DEFAULT_POW_TUNING.maxCounter, 1, 10_000_000),
    },
    submissionRetentionDays: intFrom(env, 'SUBMISSION_RETENTION_DAYS', 180, 1, 36_500),
    submissionIntake: intakeFrom(env),
    sqliteCheckpoints: checkpointsFrom(env),
    tracking: {
      repeatWindowSeconds: intFrom(
        env,
        'TRACKING_REPEAT_WINDOW_SECONDS',
        DEFAULT_TRACKING_GUARDS.repeatWindowSeconds,
        0,
        86_400,
      ),
      maxHitsPerDelivery: intFrom(
        env,
        'TRACKING_MAX_HITS_PER_DELIVERY',
        DEFAULT_TRACKING_GUARDS.maxHitsPerDelivery,
        0,
        1_000_000_000,
      ),
      perIpPerMinute: intFrom(
        env,
        'TRACKING_RATE_LIMIT_PER_IP',
        DEFAULT_TRACKING_GUARDS.perIpPerMinute,
        0,
        1_000_000_000,
      ),
    },
    apiRateLimit: intFrom(env, 'RATE_LIMIT_PER_KEY', DEFAULT_API_RATE_LIMIT, 0, 1_000_000_000),
    emailsRateLimit: intFrom(env, 'EMAILS_RATE_LIMIT', 600, 0, 1_000_000_000),
    trackQuota: {
      eventsPerMinute: intFrom(env, 'TRACK_EVENTS_PER_MINUTE', DEFAULT_TRACK_QUOTA.eventsPerMinute, 0, 1_000_000_000),
      bytesPerMinute: intFrom(env, 'TRACK_BYTES_PER_MINUTE', DEFAULT_TRACK_QUOTA.bytesPerMinute, 0, 1_000_000_000_000),
    },
  };
}

const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\])$/;

/**
 * What an operator should fix before real mail goes out, said loudly at start and in /readyz's body: an unset
 * PUBLIC_URL (links in emails would point at the listening address), a plain-http one on a public host
 * (RFC 8058 one-click unsubscribe needs https; mailbox providers ignore it otherwise), no SMTP_URL (nothing is sent).
 */
export function configWarnings(
  config: Pick<Config, 'publicUrl' | 'publicUrlExplicit' | 'smtpUrl'> &
    Partial<Pick<Config, 'bounceMxHost' | 'worker' | 'databaseUrl'>>,
): string[] {
  const warnings: string[] = [];
  const url = new URL(config.publicUrl);
  if (!config.publicUrlExplicit)
    warnings.push(
      `PUBLIC_URL is not set: links in emails and pages use ${config.publicUrl}, which recipients cannot reach; set it to the public https address of this service`,
    );
  else if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    warnings.push(
      `PUBLIC_URL is http:// on ${url.hostname}: one-click unsubscribe (RFC 8058) and mailbox providers expect https; put the service behind a TLS proxy and set PUBLIC_URL to its https address`,
    );
  if (config.worker && !config.worker.inServe) {
    warnings.push(
      `SERVE_WORKER=false: this process sends nothing and runs no periodic jobs; run \`formcast worker\`${config.databaseUrl && !/^postgres(ql)?:/.test(config.databaseUrl) ? ' on this machine, against the same SQLite file' : ''}`,
    );
  }
  if (!config.smtpUrl)
    warnings.push(
      'SMTP_URL is not set (nor SMTP_URLS): messages are written as .eml files to the outbox directory and NOT sent to anyone',
    );
  // An MX record names a host, never an address (RFC 5321 §5.1), so the bounce domain advice would be unusable.
  if (config.bounceMxHost !== undefined && isIP(config.bounceMxHost.replace(/^\[|\]$/g, '')))
    warnings.push(
      `BOUNCE_MX_HOST is ${config.bounceMxHost}, an address: an MX record must name a host; set BOUNCE_MX_HOST to the host name of the inbound listener (or PUBLIC_URL to a named host)`,
    );
  return warnings;
}

/**
 * SEND_THREADS by default (docs/sending.md, "Send threads"): one fewer than the machine's cores, at most 8; none on one
 * core. A thread composes messages while their RSA signatures are computed in libuv's thread pool (mail/dkim.ts), so on
 * two cores one thread keeps both busy: it sent as much as two threads signing themselves, for a thread's heap fewer
 * (~25 MB less at its peak; bench/README.md, bench:send).
 */
export function defaultSendThreads(cores: number): number {
  if (cores < 2) return 0;
  return Math.min(8, cores - 1);
}
