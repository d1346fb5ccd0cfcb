/**
 * Secrets at rest (issue 29, item 8; db/secrets.ts, docs/domains.md "Secrets at rest"): the installation's key lives
 * outside the database (SECRET_KEY, or a key file created with mode 0600), and the secrets the database keeps (DKIM
 * private keys, webhook signing secrets) are sealed with it. Installations as a user runs them: `bin/formcast` processes
 * on a SQLite file of their own, and on a PostgreSQL database of their own when TEST_DATABASE_URL is set.
 *
 * "A copy of the database" is every row of every table, as text: what someone who took a backup has.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../src/app.js';
import { connect, type Db } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { sealer } from '../src/lib/seal.js';
import { newId } from '../src/lib/ids.js';
import { parseInboundAddress, returnPath } from '../src/mail/verp.js';
import { cli, runCli, serve } from './helpers/formcast-process.js';
import { startSmtpServer } from './helpers/smtp.js';

const PG_URL = process.env.TEST_DATABASE_URL;
const WEBHOOK_PURPOSE = 'webhook endpoint secret';

interface Installation {
  env: Record<string, string>;
  dir: string;
  /** Where the key file is expected (SQLite: beside the database file, by default). */
  keyFile: string;
  open(): Db;
  drop(): Promise<void>;
}

/** A fresh installation: SQLite in a temp dir (the key file's default place), or a PostgreSQL database of its own (SECRET_KEY_FILE in a temp dir). */
async function installation(kind: 'sqlite' | 'postgres', extra: Record<string, string> = {}): Promise<Installation> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-secrets-'));
  const base = {
    LOG_LEVEL: 'warn',
    OUTBOX_DIR: path.join(dir, 'outbox'),
    SECRET_KEY: '',
    SECRET_KEY_FILE: '',
    ...extra,
  };
  if (kind === 'sqlite') {
    const file = path.join(dir, 'formcast.db');
    return {
      env: { ...base, DATABASE_URL: file },
      dir,
      keyFile: path.join(dir, 'secret.key'),
      open: () => connect(file),
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = `formcast_sec_${crypto.randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const url = new URL(PG_URL!);
  url.pathname = `/${database}`;
  const keyFile = path.join(dir, 'secret.key');
  return {
    env: { ...base, DATABASE_URL: url.toString(), SECRET_KEY_FILE: keyFile },
    dir,
    keyFile,
    open: () => connect(url.toString()),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${database} with (force)`);
      await c.end();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every row of every table, as text: a copy of the database. */
async function databaseCopy(db: Db): Promise<string> {
  const tables =
    db.dialect === 'sqlite'
      ? (
          await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db.kysely)
        ).rows.map((r) => r.name)
      : (
          await sql<{
            name: string;
          }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(
            db.kysely,
          )
        ).rows.map((r) => r.name);
  expect(tables).toContain('domains');
  let text = '';
  for (const t of tables)
    text += `${t}: ${JSON.stringify((await sql`select * from ${sql.table(t)}`.execute(db.kysely)).rows)}\n`;
  return text;
}

/** Every key that can be made of what the database holds: the values of server_secrets (where 8110232 kept its secret). */
async function keysInDatabase(db: Db): Promise<Buffer[]> {
  const rows = await db.kysely.selectFrom('server_secrets').select('value').execute();
  return rows.map((r) => Buffer.from(r.value, 'base64'));
}

/** A receiver of webhook deliveries on loopback. */
async function startReceiver() {
  const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (d: string) => (body += d))
      .on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Standard Webhooks: the signature header verifies with the `whsec_` secret. */
function webhookSignatureValid(secret: string, d: { headers: http.IncomingHttpHeaders; body: string }): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = `v1,${crypto.createHmac('sha256', key).update(`${d.headers['webhook-id']}.${d.headers['webhook-timestamp']}.${d.body}`).digest('base64')}`;
  return String(d.headers['webhook-signature']).split(' ').includes(expected);
}

async function until<T>(what: string, read: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A message sent with `send-test` from the domain verifies (DKIM) against the domain's published key. */
async function expectDkimSigned(
  inst: Installation,
  ws: string,
  domain: { name: string; selector: string; publicKey: string },
) {
  const smtp = await startSmtpServer();
  try {
    const res = await runCli(
      ['send-test', '--to', 'ops@example.org', '--from', `ops@${domain.name}`, '--workspace', ws],
      { ...inst.env, SMTP_URL: `smtp://127.0.0.1:${smtp.port}` },
    );
    expect(res.code, res.stderr).toBe(0);
    const raw = smtp.received.at(-1)!.raw;
    const record = `v=DKIM1; k=rsa; p=${domain.publicKey}`;
    const { results } = await dkimVerify(raw, {
      resolver: async (name: string) => (name === `${domain.selector}._domainkey.${domain.name}` ? [[record]] : []),
    });
    expect(results[0]?.status.result).toBe('pass');
  } finally {
    await smtp.close();
  }
}

/**
 * The layout 8110232 left: migrated up to before 0020, its generated secret in server_secrets, a DKIM private key in
 * clear, a webhook endpoint's secret sealed with a key derived from that secret. Made with the services of the code
 * (the webhook), SQL for what the code now does otherwise (the clear key).
 */
async function oldLayout(inst: Installation, oldSecret: Buffer | null, sealingKey: Buffer, receiverUrl: string) {
  const db = inst.open();
  try {
    await migrateToLatest(db);
    const services = createServices(db, {
      logLevel: 'silent',
      publicUrl: 'http://localhost:3000',
      secret: sealingKey,
      webhooks: { allowHttp: true, allowPrivate: true },
    });
    const { workspace, apiKey } = await services.workspaces.createWithAdminKey('Upgraded');
    const webhook = await services.webhooks.create(workspace.id, { url: receiverUrl, eventTypes: ['contact.created'] });
    const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const domain = {
      id: newId('dom'),
      name: 'upgraded.example',
      selector: 'fc20261101',
      publicKey: publicKey.toString('base64'),
    };
    const now = new Date().toISOString();
    await db.kysely
      .insertInto('domains')
      .values({
        id: domain.id,
        workspace_id: workspace.id,
        name: domain.name,
        status: 'VERIFIED',
        verification_token: 'a'.repeat(32),
        dkim_selector: domain.selector,
        dkim_public_key: domain.publicKey,
        dkim_private_key: privateKey,
        verification: null,
        created_at: now,
        verified_at: now,
      })
      .execute();
    if (oldSecret)
      await db.kysely
        .insertInto('server_secrets')
        .values({ name: 'tokens', value: oldSecret.toString('base64'), created_at: now })
        .execute();
    // Back to before 0020, which the next start applies with every migration after it (migrations run in order):
    // what those added goes too (a new migration adds its tables and columns here; 0028 adds none: it makes
    // confirmations.form_id nullable, and running it again changes nothing).
    await sql`delete from ${sql.table('kysely_migration')} where name >= ${'0020_secrets_at_rest'}`.execute(db.kysely);
    for (const table of [
      // 0039's: sender health's closed hours (counts, no secret).
      'sender_health_hours',
      'sender_health_rollups',
      // 0034's (no secret in them): attachments before the emails they belong to.
      'email_attachments',
      'emails',
      'template_versions',
      'installation_keys',
      'images',
      'dmarc_rows',
      'dmarc_reports',
      'audit_log',
      'user_recovery_codes',
      'contact_tags',
      'contact_bulk_jobs',
    ])
      await sql`drop table if exists ${sql.table(table)}`.execute(db.kysely);
    // 0031: an index of the events (no secret in it) and the resend columns of broadcasts (no secret either).
    await sql`drop index if exists events_engagement`.execute(db.kysely);
    // 0035: its index of the events and the contacts' engagement summary (no secret in them).
    await sql`drop index if exists events_broadcast_engagement`.execute(db.kysely);
    // 0036: an index of the events of transactional emails (no secret in it).
    await sql`drop index if exists events_email`.execute(db.kysely);
    // 0038: two indexes of the stats (no secret in them).
    for (const index of ['deliveries_broadcast_marks', 'events_broadcast_tracking'])
      await sql`drop index if exists ${sql.ref(index)}`.execute(db.kysely);
    // 0037: the contacts search's index (names and addresses, no secret): its triggers and table, or its indexes.
    if (db.dialect === 'sqlite') {
      for (const t of ['insert', 'update', 'delete'])
        await sql`drop trigger if exists ${sql.ref(`contacts_search_${t}`)}`.execute(db.kysely);
      await sql`drop table if exists contacts_search`.execute(db.kysely);
    } else
      for (const column of ['email', 'first_name', 'last_name'])
        await sql`drop index if exists ${sql.ref(`contacts_search_${column}`)}`.execute(db.kysely);
    // 0034: its indexes first (SQLite drops no indexed column).
    for (const index of ['deliveries_lane_due', 'templates_alias'])
      await sql`drop index if exists ${sql.ref(index)}`.execute(db.kysely);
    // 0032's indexes first: SQLite drops no indexed column.
    for (const index of ['workspaces_slug', 'broadcasts_archive'])
      await sql`drop index if exists ${sql.ref(index)}`.execute(db.kysely);
    for (const [table, column] of [
      ['templates', 'editor_content'],
      ['domains', 'tracking_host'],
      ['domains', 'tracking_verified_at'],
      ['users', 'totp_secret'],
      ['users', 'totp_enrolled_at'],
      ['users', 'totp_last_step'],
      ['broadcasts', 'ab_test'],
      ['broadcasts', 'ab_winner'],
      ['broadcasts', 'ab_winner_at'],
      ['broadcasts', 'ab_selection'],
      ['deliveries', 'variant'],
      ['deliveries', 'ab_group'],
      ['broadcasts', 'resend_of'],
      ['broadcasts', 'resend_to'],
      ['broadcasts', 'resend_as_of'],
      ['workspaces', 'slug'],
      ['broadcasts', 'archive'],
      ['contacts', 'timezone'],
      ['broadcasts', 'local_send_time'],
      ['broadcasts', 'local_start_at'],
      ['deliveries', 'local_zone'],
      ['contacts', 'last_sent_at'],
      ['contacts', 'last_opened_at'],
      ['contacts', 'last_clicked_at'],
      ['broadcasts', 'transactional'],
      ['deliveries', 'lane'],
      ['templates', 'alias'],
      ['templates', 'version'],
    ] as const)
      await sql`alter table ${sql.table(table)} drop column ${sql.ref(column)}`.execute(db.kysely);
    return { workspace, apiKey: apiKey.key, webhook, domain, privateKey };
  } finally {
    await db.close();
  }
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(kind === 'postgres' && !PG_URL)(`secrets at rest [${kind}]`, () => {
    describe.sequential('a new installation', () => {
      let inst: Installation;
      let ws: { id: string; key: string };
      let domain: { id: string; name: string; selector: string; publicKey: string };
      let receiver: Awaited<ReturnType<typeof startReceiver>>;
      let webhookSecret: string;

      beforeAll(async () => {
        inst = await installation(kind);
        receiver = await startReceiver();
      });
      afterAll(async () => {
        await receiver?.close();
        await inst?.drop();
      });

      it(
        'keeps its key in a file of mode 0600 beside the data, and a copy of the database opens no DKIM key or webhook secret and holds no key',
        { timeout: 120_000 },
        async () => {
          const created = await cli(['workspace', 'create', 'Acme', '--json'], inst.env);
          ws = { id: created.workspace.id, key: created.apiKey.key };
          const d = await cli(
            ['domain', 'add', 'news.example', '--workspace', ws.id, '--verified', '--json'],
            inst.env,
          );
          const dkim = d.records.find((r: { name: string }) => r.name.includes('._domainkey.'));
          domain = {
            id: d.id,
            name: d.name,
            selector: dkim.name.split('._domainkey.')[0],
            publicKey: dkim.value.split('p=')[1],
          };

          const server = await serve({ ...inst.env, WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
          try {
            const res = await fetch(`${server.url}/v1/webhooks`, {
              method: 'POST',
              headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ url: receiver.url, eventTypes: ['contact.created'] }),
            });
            expect(res.status).toBe(201);
            webhookSecret = (await res.json()).secret;
          } finally {
            server.child.kill('SIGTERM');
            await new Promise((r) => server.child.once('close', r));
          }
          expect(webhookSecret).toMatch(/^whsec_/);

          const db = inst.open();
          let copy: string;
          try {
            copy = await databaseCopy(db);
            // The attack of the report: the webhook secret opened with a key the database holds. None opens it.
            const row = await db.kysely
              .selectFrom('webhook_endpoints')
              .select(['id', 'secret'])
              .executeTakeFirstOrThrow();
            for (const k of await keysInDatabase(db))
              expect(
                () => sealer(k, WEBHOOK_PURPOSE).open(row.secret, row.id),
                'a key in the database opens the webhook secret',
              ).toThrow();
            // No server secret at all.
            expect(await keysInDatabase(db)).toEqual([]);
            // No DKIM private key in clear, no webhook secret in clear.
            expect(copy).not.toContain('PRIVATE KEY');
            expect(copy).not.toContain(webhookSecret);
            expect(copy).not.toContain(webhookSecret.slice('whsec_'.length));
            const stored = await db.kysely
              .selectFrom('domains')
              .select('dkim_private_key')
              .where('id', '=', domain.id)
              .executeTakeFirstOrThrow();
            expect(() => crypto.createPrivateKey(stored.dkim_private_key)).toThrow();
          } finally {
            await db.close();
          }

          // The key file: created at the first start, readable by its owner only, and in no form in the database.
          const stat = fs.statSync(inst.keyFile);
          expect(stat.mode & 0o777).toBe(0o600);
          const key = Buffer.from(fs.readFileSync(inst.keyFile, 'utf8').trim(), 'base64');
          expect(key).toHaveLength(32);
          for (const form of [key.toString('base64'), key.toString('base64url'), key.toString('hex')])
            expect(copy).not.toContain(form);
        },
      );

      it(
        'signs with the sealed DKIM key and the sealed webhook secret, and every process of the installation finds the same key',
        { timeout: 120_000 },
        async () => {
          await expectDkimSigned(inst, ws.id, domain);
          const server = await serve({ ...inst.env, WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
          try {
            const res = await fetch(`${server.url}/v1/contacts`, {
              method: 'POST',
              headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ email: 'grace@example.org' }),
            });
            expect(res.status).toBe(201);
            const delivery = await until('the webhook delivery', () =>
              receiver.got.find((g) => g.body.includes('grace@example.org')),
            );
            expect(webhookSignatureValid(webhookSecret, delivery)).toBe(true);
          } finally {
            server.child.kill('SIGTERM');
            await new Promise((r) => server.child.once('close', r));
          }
        },
      );

      it(
        'refuses to start with a key file others can read, without the key file, or with another key: a clear error, exit 3, nothing changed',
        { timeout: 120_000 },
        async () => {
          const before = fs.readFileSync(inst.keyFile, 'utf8');
          fs.chmodSync(inst.keyFile, 0o644);
          const open = await runCli(['domain', 'list', '--workspace', ws.id], inst.env);
          expect(open.code).toBe(3);
          expect(open.stderr).toContain(`chmod 600 ${inst.keyFile}`);
          fs.chmodSync(inst.keyFile, 0o600);

          const moved = `${inst.keyFile}.moved`;
          fs.renameSync(inst.keyFile, moved);
          const missing = await runCli(['domain', 'list', '--workspace', ws.id], inst.env);
          expect(missing.code).toBe(3);
          expect(missing.stderr).toContain(
            `the key file ${inst.keyFile} does not exist, but this database's secrets were sealed with a key`,
          );
          // Not replaced by a new key, which would open nothing.
          expect(fs.existsSync(inst.keyFile)).toBe(false);
          fs.renameSync(moved, inst.keyFile);

          const other = await runCli(['domain', 'list', '--workspace', ws.id], {
            ...inst.env,
            SECRET_KEY: crypto.randomBytes(32).toString('base64'),
          });
          expect(other.code).toBe(3);
          expect(other.stderr).toContain("SECRET_KEY is not the key this database's secrets were sealed with");

          expect(fs.readFileSync(inst.keyFile, 'utf8')).toBe(before);
          const listed = await runCli(['domain', 'list', '--workspace', ws.id, '--json'], inst.env);
          expect(listed.code, listed.stderr).toBe(0);
          expect(JSON.parse(listed.stdout).map((x: { id: string }) => x.id)).toEqual([domain.id]);
        },
      );
    });

    it(
      "an upgrade from the layout of 8110232 adopts the database's secret as the key file and forgets it: old tokens verify, the DKIM key is sealed and signs, the webhook secret still signs; two processes starting at once agree",
      { timeout: 180_000 },
      async () => {
        const inst = await installation(kind);
        const receiver = await startReceiver();
        try {
          const oldSecret = crypto.randomBytes(32);
          const old = await oldLayout(inst, oldSecret, oldSecret, receiver.url);
          // Links in mail sent before the upgrade: a VERP bounce address signed with the old secret.
          const bounceAddress = returnPath(oldSecret, 'd', newId('dlv'), old.domain.name);

          // The first start after the upgrade: two processes at once.
          const [a, b] = await Promise.all([
            runCli(['domain', 'list', '--workspace', old.workspace.id, '--json'], inst.env),
            runCli(['workspace', 'list', '--json'], inst.env),
          ]);
          expect(a.code, a.stderr).toBe(0);
          expect(b.code, b.stderr).toBe(0);

          // The key file holds the old secret, so everything signed or sealed with it keeps working.
          expect(fs.statSync(inst.keyFile).mode & 0o777).toBe(0o600);
          const key = Buffer.from(fs.readFileSync(inst.keyFile, 'utf8').trim(), 'base64');
          expect(key.equals(oldSecret)).toBe(true);
          expect(parseInboundAddress(key, bounceAddress)).toMatchObject({ purpose: 'bounce', kind: 'd' });
          expect(fs.readdirSync(inst.dir).filter((f) => f.includes('secret.key'))).toEqual(['secret.key']);

          const db = inst.open();
          try {
            const copy = await databaseCopy(db);
            expect(await keysInDatabase(db)).toEqual([]);
            expect(copy).not.toContain(oldSecret.toString('base64'));
            expect(copy).not.toContain('PRIVATE KEY');
            expect(copy).not.toContain(old.webhook.secret);
            // The webhook secret is sealed as it was: a key from the database (none is left) does not open it.
            const row = await db.kysely
              .selectFrom('webhook_endpoints')
              .select(['id', 'secret'])
              .where('id', '=', old.webhook.id)
              .executeTakeFirstOrThrow();
            expect(sealer(key, WEBHOOK_PURPOSE).open(row.secret, row.id)).toBe(old.webhook.secret);
          } finally {
            await db.close();
          }

          await expectDkimSigned(inst, old.workspace.id, old.domain);
          const server = await serve({ ...inst.env, WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
          try {
            const res = await fetch(`${server.url}/v1/contacts`, {
              method: 'POST',
              headers: { authorization: `Bearer ${old.apiKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ email: 'ada@example.org' }),
            });
            expect(res.status).toBe(201);
            const delivery = await until('the webhook delivery', () =>
              receiver.got.find((g) => g.body.includes('ada@example.org')),
            );
            expect(webhookSignatureValid(old.webhook.secret, delivery)).toBe(true);
          } finally {
            server.child.kill('SIGTERM');
            await new Promise((r) => server.child.once('close', r));
          }

          // Idempotent: another start changes nothing.
          const sealedBefore = await (async () => {
            const d2 = inst.open();
            try {
              return (
                await d2.kysely
                  .selectFrom('domains')
                  .select('dkim_private_key')
                  .where('id', '=', old.domain.id)
                  .executeTakeFirstOrThrow()
              ).dkim_private_key;
            } finally {
              await d2.close();
            }
          })();
          expect((await runCli(['workspace', 'list', '--json'], inst.env)).code).toBe(0);
          const d3 = inst.open();
          try {
            expect(
              (
                await d3.kysely
                  .selectFrom('domains')
                  .select('dkim_private_key')
                  .where('id', '=', old.domain.id)
                  .executeTakeFirstOrThrow()
              ).dkim_private_key,
            ).toBe(sealedBefore);
          } finally {
            await d3.close();
          }
        } finally {
          await receiver.close();
          await inst.drop();
        }
      },
    );

    it(
      "an upgrade with SECRET_KEY set: the unused secret the database held is deleted, no key file is made, the DKIM key is sealed with SECRET_KEY's key",
      { timeout: 120_000 },
      async () => {
        const secretKey = crypto.randomBytes(32).toString('base64');
        const inst = await installation(kind, { SECRET_KEY: secretKey });
        try {
          const sealingKey = crypto.createHash('sha256').update(secretKey).digest();
          const old = await oldLayout(inst, crypto.randomBytes(32), sealingKey, 'http://127.0.0.1:9/hook');
          const res = await runCli(['domain', 'list', '--workspace', old.workspace.id, '--json'], inst.env);
          expect(res.code, res.stderr).toBe(0);
          expect(fs.existsSync(inst.keyFile)).toBe(false);
          const db = inst.open();
          try {
            expect(await keysInDatabase(db)).toEqual([]);
            const copy = await databaseCopy(db);
            expect(copy).not.toContain('PRIVATE KEY');
            expect(copy).not.toContain(old.webhook.secret);
          } finally {
            await db.close();
          }
          await expectDkimSigned(inst, old.workspace.id, old.domain);
        } finally {
          await inst.drop();
        }
      },
    );
  });
}
