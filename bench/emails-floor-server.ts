/**
 * The floor for bench/emails.bench.ts: the database work Formcast's `POST /v1/emails` must do to accept an email, and
 * nothing else. A bare Fastify app (no schemas, no hooks, no logger) on Formcast's own SQLite file, opened with the
 * same pragmas, answering the same request with the same answer (202, `Location`, `{ "id": "em_…" }`):
 *
 * - authenticate the bearer key as bench/floor-server.ts does: parse it, SHA-256 the secret, read the key's row by id,
 *   compare in constant time, refuse a revoked key;
 * - read the sender's domain (workspace and name) and refuse one that is not VERIFIED;
 * - in one transaction, what EmailsService.sendEmail writes (src/sending/emails/emails.service.ts) for a request with
 *   no Idempotency-Key, no template and no attachments: read the recipients' suppressions, insert the `emails` row,
 *   the hidden broadcast row of the same id (broadcasts.writer.ts insertEmailMessage: `transactional = 1`, SENDING,
 *   materialized) and one delivery per distinct recipient in the transactional lane (deliveries.outcomes.ts
 *   insertEmailDeliveries: `lane = 1`, due now, its own unsubscribe token; SKIPPED for a hard bounce or a complaint).
 *
 * Prepared better-sqlite3 statements, no query builder. Addresses are taken apart by a regular expression, not checked;
 * no validation of anything else, no scope check, no lastUsedAt bookkeeping, no rate limits, no request ids, no error
 * bodies. It is not a Formcast that could ship; it shows what accepting an email costs on this machine, so that
 * Formcast's figure can be read against the work itself. The benchmark checks that its rows are Formcast's, column
 * for column (but for ids, times and the token).
 *
 * Commits (FLOOR_COMMIT): `group` (the default) writes the requests that arrive while a transaction runs together in
 * the next one, one commit for all, each answered after it (a savepoint each only when one of them fails and the
 * group is written again): what Formcast does since its accept path uses db/group-commit.ts (a commit costs more than
 * an email's statements). `each`: a transaction per request, the floor before that change.
 *
 * Environment: DATABASE_URL (Formcast's SQLite file, required), PORT (default 0), HOST (default 127.0.0.1),
 * FLOOR_COMMIT (`group` or `each`).
 * Prints `listening on http://HOST:PORT` on stdout once ready.
 */
import crypto from 'node:crypto';
import Fastify from 'fastify';
import { encodeTime } from 'ulid';
import { openDatabase, serveUntilSignal } from './bare-server.js';

const db = openDatabase('emails-floor-server');

const findKey = db.prepare<[string], { workspace_id: string; key_hash: string; revoked_at: string | null }>(
  'select "workspace_id", "key_hash", "revoked_at" from "api_keys" where "id" = ?',
);
const findDomain = db.prepare<[string, string], { status: string }>(
  'select "status" from "domains" where "workspace_id" = ? and "name" = ?',
);
/** One statement per number of recipients (`in (?, ?, …)`), made when first needed. */
const suppressionsFor = new Map<number, ReturnType<typeof db.prepare<string[], { email: string; reason: string }>>>();
function suppressions(workspaceId: string, emails: string[]) {
  let s = suppressionsFor.get(emails.length);
  if (!s) {
    s = db.prepare<string[], { email: string; reason: string }>(
      `select "email", "reason" from "suppressions" where "workspace_id" = ? and "email" in (${emails.map(() => '?').join(', ')})`,
    );
    suppressionsFor.set(emails.length, s);
  }
  return s.all(workspaceId, ...emails);
}
const insertEmail = db.prepare(
  `insert into "emails" ("id", "workspace_id", "from_address", "to_addresses", "cc_addresses", "bcc_addresses",
     "reply_to", "subject", "html", "text", "headers", "tags", "track_opens", "track_clicks", "template_id",
     "template_version", "api_key_id", "idempotency_key", "created_at")
   values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, null, null, ?, null, ?)`,
);
const insertBroadcast = db.prepare(
  `insert into "broadcasts" ("id", "workspace_id", "name", "status", "from_address", "reply_to", "subject", "html",
     "text", "preview_text", "editor_content", "topic_id", "segment_id", "send_at", "created_at", "updated_at",
     "sent_at", "materialized_at", "track_opens", "track_clicks", "archive", "transactional")
   values (?, ?, ?, 'SENDING', ?, ?, ?, ?, ?, null, null, null, null, null, ?, ?, null, ?, 0, 0, 0, 1)`,
);
const insertDelivery = db.prepare(
  `insert into "deliveries" ("id", "workspace_id", "broadcast_id", "contact_id", "email", "status", "attempts",
     "next_attempt_at", "last_error", "unsubscribe_token", "created_at", "updated_at", "lane")
   values (?, ?, ?, null, ?, ?, 0, ?, ?, ?, ?, ?, 1)`,
);

interface Accepted {
  id: string;
  workspaceId: string;
  apiKeyId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: string[];
  recipients: string[];
  now: string;
}

/**
 * Run as `write.immediate(…)`: BEGIN IMMEDIATE takes the write lock first. Formcast's one connection never meets
 * another writer in its process, but this process shares the file with Formcast's: a deferred transaction that read
 * (the suppressions) while Formcast committed cannot become a writer and fails at once with SQLITE_BUSY ("database is
 * locked", no busy wait), where an immediate one waits its turn (busy_timeout).
 */
const write = db.transaction((e: Accepted) => writeRows(e));

/** The statements of one request, in whatever transaction the caller runs. */
function writeRows(e: Accepted): void {
  const suppressed = new Map(suppressions(e.workspaceId, e.recipients).map((r) => [r.email, r.reason]));
  insertEmail.run(
    e.id,
    e.workspaceId,
    e.from,
    JSON.stringify(e.to),
    JSON.stringify(e.cc),
    JSON.stringify(e.bcc),
    e.replyTo,
    e.subject,
    e.html,
    e.text,
    JSON.stringify(e.headers),
    JSON.stringify(e.tags),
    e.apiKeyId,
    e.now,
  );
  insertBroadcast.run(
    e.id,
    e.workspaceId,
    `Transactional email ${e.id}`,
    e.from,
    e.replyTo,
    e.subject,
    e.html,
    e.text,
    e.now,
    e.now,
    e.now,
  );
  for (const email of e.recipients) {
    const reason = suppressed.get(email);
    const skip = reason === 'BOUNCED' || reason === 'COMPLAINED';
    insertDelivery.run(
      `dlv_${ulid()}`,
      e.workspaceId,
      e.id,
      email,
      skip ? 'SKIPPED' : 'QUEUED',
      e.now,
      skip ? `suppressed: the address is on the suppression list (${reason})` : null,
      crypto.randomBytes(24).toString('base64url'),
      e.now,
      e.now,
    );
  }
}

/**
 * FLOOR_COMMIT=group: the requests queued while the event loop turned are written in one transaction, then each is
 * answered. As db/group-commit.ts does: first without savepoints (`writeRows`, the statements alone); if a request's
 * write fails, everything is rolled back and the group written again with a savepoint each (better-sqlite3 makes
 * `write`, a transaction function called inside another, a savepoint), so that only that request fails. BEGIN
 * IMMEDIATE: see `write`.
 */
const GROUP = (process.env.FLOOR_COMMIT ?? 'group') === 'group';
const queued: { e: Accepted; done: (err: unknown) => void }[] = [];
const writeGroupFast = db.transaction((group: typeof queued) => {
  for (const { e } of group) writeRows(e);
});
const writeGroupSafe = db.transaction((group: typeof queued) => {
  const outcomes: unknown[] = [];
  for (const { e } of group) {
    try {
      write(e);
      outcomes.push(null);
    } catch (err) {
      outcomes.push(err ?? new Error('write failed'));
    }
  }
  return outcomes;
});
function writeQueued(): void {
  const group = queued.splice(0, 64);
  let outcomes: unknown[];
  try {
    writeGroupFast.immediate(group);
    outcomes = group.map(() => null);
  } catch {
    try {
      outcomes = writeGroupSafe.immediate(group);
    } catch (err) {
      outcomes = group.map(() => err);
    }
  }
  group.forEach((q, i) => q.done(outcomes[i]));
  if (queued.length) setImmediate(writeQueued);
}
function accept(e: Accepted): Promise<void> {
  if (!GROUP) {
    write.immediate(e);
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    if (queued.push({ e, done: (err) => (err ? reject(err as Error) : resolve()) }) === 1) setImmediate(writeQueued);
  });
}

const KEY = /^Bearer fc_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/;
const NO_HASH = Buffer.alloc(32);
/** `addr@domain` or `Name <addr@domain>`: the address and its domain (not checked further). */
const MAILBOX = /^(?:[^<]*<)?([^<>@\s]+@([^<>@\s]+?))>?$/;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID as Formcast's ids have (src/lib/ids.ts): the time, then 16 random characters. */
function ulid(): string {
  const bytes = crypto.randomBytes(16);
  let random = '';
  for (const b of bytes) random += CROCKFORD[b & 31];
  return encodeTime(Date.now(), 10) + random;
}

const app = Fastify({ logger: false });
// No logger, but an unexpected failure is said (on stderr: the benchmark shows it with a run's non-2xx answers).
app.setErrorHandler((err, _req, reply) => {
  process.stderr.write(`emails-floor-server: ${(err as Error).stack ?? String(err)}\n`);
  return reply.code(500).send({ code: 'internal_error' });
});

interface Body {
  from?: string;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  tags?: string[];
}

app.post<{ Body: Body }>('/v1/emails', async (req, reply) => {
  const parts = KEY.exec(req.headers.authorization ?? '');
  if (!parts) return reply.code(401).send({ code: 'unauthorized' });
  const keyId = `key_${parts[1]}`;
  const key = findKey.get(keyId);
  const presented = crypto.createHash('sha256').update(parts[2]!).digest();
  const equal = crypto.timingSafeEqual(presented, key ? Buffer.from(key.key_hash, 'hex') : NO_HASH);
  if (!key || !equal || key.revoked_at) return reply.code(401).send({ code: 'unauthorized' });

  const b = req.body;
  const from = MAILBOX.exec(b.from ?? '');
  if (!from || !b.to?.length || !b.subject) return reply.code(422).send({ code: 'validation_failed' });
  const to = b.to;
  const cc = b.cc ?? [];
  const bcc = b.bcc ?? [];
  const recipients: string[] = [];
  for (const m of [...to, ...cc, ...bcc]) {
    const address = MAILBOX.exec(m)?.[1]?.toLowerCase();
    if (!address) return reply.code(422).send({ code: 'validation_failed' });
    if (!recipients.includes(address)) recipients.push(address);
  }
  if (findDomain.get(key.workspace_id, from[2]!)?.status !== 'VERIFIED')
    return reply.code(422).send({ code: 'sender_domain_not_verified' });

  const id = `em_${ulid()}`;
  await accept({
    id,
    workspaceId: key.workspace_id,
    apiKeyId: keyId,
    from: b.from!,
    to,
    cc,
    bcc,
    replyTo: b.replyTo ?? null,
    subject: b.subject,
    html: b.html ?? null,
    text: b.text ?? null,
    headers: b.headers ?? {},
    tags: b.tags ?? [],
    recipients,
    now: new Date().toISOString(),
  });
  return reply.code(202).header('location', `/v1/emails/${id}`).send({ id });
});

await serveUntilSignal(app, db);
