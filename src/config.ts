import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  smtpUrl: string | null;
  publicUrl: string;
  logLevel: string;
  dnsServers: string[];
  dnsTimeoutMs: number;
  /** Where messages go without SMTP_URL. */
  outboxDir: string;
  /** Connections of the SMTP pool. */
  smtpMaxConnections: number;
  /** Messages per second at most; 0 means no limit. */
  smtpRateLimit: number;
  /** Public form submissions per minute from one IP address to one form. */
  submissionsPerMinute: number;
  /** After sending (docs/bounces.md): the soft-bounce limit and the circuit breaker's rates. */
  bounces: {
    softBounceLimit: number;
    pauseBounceRate: number;
    pauseComplaintRate: number;
  };
  /** Delivery worker tuning (see deliveries/CONTEXT.md); the defaults suit production. */
  worker: {
    batchSize: number;
    leaseMs: number;
    maxAttempts: number;
    backoffBaseMs: number;
    pollMs: number;
  };
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function rateFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const text = raw.trim();
  const n = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new ConfigError(`${name} must be a rate between 0 and 1 (0.05) or a percentage (5%), got "${raw}"`);
  return n;
}

export class ConfigError extends Error {}

/** Reads the environment described in the contract (section 10). Fails fast on values that cannot work. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT must be a port number, got "${env.PORT}"`);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL || path.join('.', 'data', 'formcast.db');
  const smtpUrl = env.SMTP_URL || null;
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  const publicUrl = (env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${env.PUBLIC_URL}"`);
  }
  const dnsServers = (env.DNS_SERVERS || '').split(',').map((s) => s.trim()).filter(Boolean);
  return {
    port, host, databaseUrl, smtpUrl, publicUrl, logLevel: env.LOG_LEVEL || 'info', dnsServers,
    dnsTimeoutMs: intFrom(env, 'DNS_TIMEOUT_MS', 5000, 1, 60_000),
    outboxDir: env.OUTBOX_DIR || path.join('.', 'data', 'outbox'),
    smtpMaxConnections: intFrom(env, 'SMTP_MAX_CONNECTIONS', 5, 1, 100),
    smtpRateLimit: intFrom(env, 'SMTP_RATE_LIMIT', 0, 0, 100_000),
    submissionsPerMinute: intFrom(env, 'SUBMISSION_RATE_LIMIT', 10, 1, 100_000),
    bounces: {
      softBounceLimit: intFrom(env, 'SOFT_BOUNCE_LIMIT', 3, 1, 100),
      pauseBounceRate: rateFrom(env, 'PAUSE_BOUNCE_RATE', 0.05),
      pauseComplaintRate: rateFrom(env, 'PAUSE_COMPLAINT_RATE', 0.005),
    },
    worker: {
      batchSize: intFrom(env, 'WORKER_BATCH_SIZE', 100, 1, 10_000),
      leaseMs: intFrom(env, 'WORKER_LEASE_MS', 60_000, 500, 3_600_000),
      maxAttempts: intFrom(env, 'WORKER_MAX_ATTEMPTS', 5, 1, 100),
      backoffBaseMs: intFrom(env, 'WORKER_BACKOFF_BASE_MS', 30_000, 1, 3_600_000),
      pollMs: intFrom(env, 'WORKER_POLL_MS', 500, 10, 60_000),
    },
  };
}
