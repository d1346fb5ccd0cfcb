/**
 * People, sessions and roles of the console (contract §14, docs/console.md): sign-in pages, the session
 * cookie and its CSRF token, roles mapped onto scopes, invitations and password resets by email (a real SMTP
 * server on loopback), the CLI. On SQLite and PostgreSQL, through app.inject, checking the database after.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { buildApp } from '../../src/app.js';
import { redactUrl } from '../../src/http/server.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { cookieIsSecure } from '../../src/access/users/sessions.service.js';
import { safeNext } from '../../src/access/users/users.pages.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer } from '../helpers/smtp.js';

const PUBLIC_URL = 'https://console.example.test';
const PASSWORD = 'correct horse battery';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Session {
  cookie: string;
  csrf: string;
}

let seq = 0;
const uniqueEmail = (tag: string) => `${tag}.${process.pid}.${++seq}@people.example`;

function describeConsole(
  title: string,
  suite: (h: { app(): FastifyInstance; db(): Db; smtp(): Awaited<ReturnType<typeof startSmtpServer>> }) => void,
): void {
  for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
    const target = testDatabases.find((d) => d.name === name);
    (target ? describe : describe.skip)(
      `${title} [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
      () => {
        let app: FastifyInstance;
        let db: Db;
        let drop: () => Promise<void>;
        let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
        let mailer: Mailer;
        beforeAll(async () => {
          const opened = await target!.open();
          db = opened.db;
          drop = opened.drop;
          smtp = await startSmtpServer();
          mailer = createMailer({
            smtpUrl: `smtp://127.0.0.1:${smtp.port}`,
            outboxDir: '',
            maxConnections: 1,
            rateLimit: 0,
          });
          app = await buildApp({
            db,
            config: { logLevel: 'silent', publicUrl: PUBLIC_URL, secret: TEST_SECRET },
            logger: false,
            mailer,
          });
          await app.ready();
        });
        afterAll(async () => {
          await app?.close();
          await mailer?.close();
          await smtp?.close();
          await drop?.();
        });
        beforeEach(() => {
          smtp.received.length = 0;
        });
        suite({ app: () => app, db: () => db, smtp: () => smtp });
      },
    );
  }
}

describe('pure rules', () => {
  it('the cookie is Secure except on http:// loopback', () => {
    expect(cookieIsSecure('https://console.example.test')).toBe(true);
    expect(cookieIsSecure('http://mail.example.com')).toBe(true);
    expect(cookieIsSecure('http://127.0.0.1:3000')).toBe(false);
    expect(cookieIsSecure('http://localhost:3000')).toBe(false);
    expect(cookieIsSecure('http://[::1]:3000')).toBe(false);
  });

  it('invitation and reset tokens are redacted from logged URLs', () => {
    expect(redactUrl(`/app/invite/${'a'.repeat(43)}`)).toBe('/app/invite/[redacted]');
    expect(redactUrl(`/app/reset/${'b'.repeat(43)}?x=1`)).toBe('/app/reset/[redacted]?x=1');
    expect(redactUrl('/app/login?next=/app')).toBe('/app/login?next=/app');
  });

  it('next: only a path of the console on this origin', () => {
    expect(safeNext('/app/forms?x=1#top')).toBe('/app/forms?x=1#top');
    expect(safeNext('/app')).toBe('/app');
    for (const bad of [
      'https://evil.example/app',
      '//evil.example/app',
      '/\\evil.example',
      '/app\\..\\x',
      '/apple',
      '/application/x',
      'javascript:alert(1)',
      '/app/../v1/x',
      '/docs',
      '',
      undefined,
      42,
      '/app\n/x',
    ]) {
      const out = safeNext(bad);
      expect(out === '/app' || out.startsWith('/app/'), String(bad)).toBe(true);
      expect(new URL(out, 'https://console.example.test').origin).toBe('https://console.example.test');
      expect(out).not.toContain('evil');
    }
  });
});

describeConsole('people, sessions, roles', (h) => {
  const k = () => h.db().kysely;

  async function workspace(name = 'Acme'): Promise<{ id: string; key: string }> {
    const { workspace: ws, apiKey } = await h.app().services.workspaces.createWithAdminKey(name);
    return { id: ws.id, key: apiKey.key };
  }

  async function user(wsId: string, role: string, email = uniqueEmail(role)): Promise<{ id: string; email: string }> {
    const u = await h.app().services.users.create(wsId, { email, role, password: PASSWORD });
    return { id: u.id, email: u.email };
  }

  function login(
    email: string,
    password = PASSWORD,
    extra: Record<string, string> = {},
    remoteAddress = '127.0.0.1',
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    return h.app().inject({
      method: 'POST',
      url: '/app/login',
      remoteAddress,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams({ email, password, ...extra }).toString(),
    });
  }

  function cookieOf(res: LightMyRequestResponse): string {
    const set = String(res.headers['set-cookie']);
    const m = /^__Host-fc_session=([^;]*)/.exec(set);
    expect(m, set).not.toBeNull();
    return `__Host-fc_session=${m![1]}`;
  }

  async function signIn(email: string): Promise<Session> {
    const res = await login(email);
    expect(res.statusCode, res.body).toBe(303);
    const cookie = cookieOf(res);
    const info = await h.app().inject({ method: 'GET', url: '/v1/session', headers: { cookie } });
    expect(info.statusCode, info.body).toBe(200);
    return { cookie, csrf: info.json().csrfToken };
  }

  function call(
    s: Session | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    opts: { csrf?: string | null; key?: string } = {},
  ): Promise<LightMyRequestResponse> {
    const csrf = opts.csrf === undefined ? s?.csrf : opts.csrf;
    return h.app().inject({
      method,
      url,
      headers: {
        ...(s ? { cookie: s.cookie } : {}),
        ...(csrf ? { 'x-csrf-token': csrf } : {}),
        ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  }

  it('sign-in sets an HttpOnly, Secure, SameSite=Lax cookie for 30 days and answers 303 /app; the session row keeps only the hash', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'editor');
    const page = await h.app().inject({ method: 'GET', url: '/app/login' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<input[^>]+name="email"/);
    expect(page.body).toMatch(/<input[^>]+name="password"/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    const res = await login(u.email.toUpperCase());
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/app');
    const set = String(res.headers['set-cookie']);
    expect(set).toMatch(/^__Host-fc_session=[A-Za-z0-9_-]{43}; /);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('Secure');
    expect(set).toContain('SameSite=Lax');
    expect(set).toContain('Path=/');
    expect(set).toContain(`Max-Age=${30 * 24 * 3600}`);
    const token = /^__Host-fc_session=([^;]*)/.exec(set)![1]!;
    const rows = await k().selectFrom('sessions').selectAll().where('user_id', '=', u.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(token);
    const info = await h
      .app()
      .inject({ method: 'GET', url: '/v1/session', headers: { cookie: `__Host-fc_session=${token}` } });
    expect(info.json()).toMatchObject({
      user: { id: u.id, email: u.email, role: 'editor' },
      workspace: { id: ws.id, name: 'Acme' },
      role: 'editor',
    });
    expect(info.json().scopes).toEqual(expect.arrayContaining(['write:forms', 'read:domains']));
    // What the role may do, by the API's own rule (the console enables actions by it).
    expect(info.json().grants).toEqual([
      'read:forms',
      'write:forms',
      'read:broadcasts',
      'write:broadcasts',
      'read:contacts',
      'write:contacts',
      'read:domains',
      'read:webhooks',
      'send:emails',
    ]);
    expect(info.json().csrfToken).toEqual(expect.any(String));
    expect(
      (await k().selectFrom('users').select('last_login_at').where('id', '=', u.id).executeTakeFirst())!.last_login_at,
    ).not.toBeNull();
    // With an API key, the same endpoint describes the key.
    const byKey = await call(null, 'GET', '/v1/session', undefined, { key: ws.key });
    expect(byKey.json()).toMatchObject({
      user: null,
      role: null,
      csrfToken: null,
      scopes: ['admin'],
      workspace: { id: ws.id },
    });
    expect(byKey.json().grants).toEqual(
      expect.arrayContaining(['write:webhooks', 'admin', 'manage:keys', 'manage:people', 'manage:workspace']),
    );
  });

  it("the session names the workspace's owners, then admins (up to five), whom the console tells people to ask; never another workspace's, never to a key", async () => {
    const ws = await workspace();
    const other = await workspace('Other');
    await user(other.id, 'owner', uniqueEmail('other-owner'));
    const admin = await user(ws.id, 'admin', uniqueEmail('admin'));
    const owner = await h.app().services.users.create(ws.id, {
      email: uniqueEmail('owner'),
      role: 'owner',
      name: 'Olga Owner',
      password: PASSWORD,
    });
    const editor = await user(ws.id, 'editor');
    const info = (await call(await signIn(editor.email), 'GET', '/v1/session')).json();
    expect(info.managers).toEqual([
      { name: 'Olga Owner', email: owner.email, role: 'owner' },
      { name: null, email: admin.email, role: 'admin' },
    ]);
    for (let i = 0; i < 6; i++) await user(ws.id, 'admin', uniqueEmail(`admin${i}`));
    const many = (await call(await signIn(editor.email), 'GET', '/v1/session')).json().managers;
    expect(many).toHaveLength(5);
    expect(many[0]).toMatchObject({ email: owner.email, role: 'owner' });
    expect((await call(null, 'GET', '/v1/session', undefined, { key: ws.key })).json().managers).toEqual([]);
  });

  it('a wrong password or an unknown address: the same 401 page, no cookie', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'viewer');
    const wrong = await login(u.email, 'not the password at all', {}, '10.1.0.1');
    const unknown = await login(uniqueEmail('nobody'), PASSWORD, {}, '10.1.0.1');
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.body).toContain('The email or the password is wrong.');
    }
    // JSON sign-in answers problems.
    const json = await h.app().inject({
      method: 'POST',
      url: '/app/login',
      remoteAddress: '10.1.0.1',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: u.email, password: 'nope nope nope' }),
    });
    expect(json.statusCode).toBe(401);
    expect(json.json()).toMatchObject({ code: 'unauthorized' });
    const ok = await h.app().inject({
      method: 'POST',
      url: '/app/login',
      remoteAddress: '10.1.0.1',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: u.email, password: PASSWORD }),
    });
    expect(ok.statusCode).toBe(303);
    expect(String(ok.headers['set-cookie'])).toMatch(/^__Host-fc_session=/);
  });

  it('next: a console path is followed; an open redirect is refused', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'viewer');
    expect((await login(u.email, PASSWORD, { next: '/app/broadcasts/bc_1?tab=report' })).headers.location).toBe(
      '/app/broadcasts/bc_1?tab=report',
    );
    for (const next of ['https://evil.example/', '//evil.example/app', '/\\evil.example', 'https:evil.example']) {
      expect((await login(u.email, PASSWORD, { next })).headers.location).toBe('/app');
    }
    const page = await h
      .app()
      .inject({ method: 'GET', url: '/app/login?next=%22%3E%3Cscript%3Ealert(1)%3C/script%3E' });
    expect(page.body).not.toContain('<script>');
  });

  it('one address in two workspaces: the page asks which', async () => {
    const a = await workspace('Alpha');
    const b = await workspace('Beta');
    const email = uniqueEmail('twice');
    const ua = await user(a.id, 'viewer', email);
    await user(b.id, 'editor', email);
    const res = await login(email);
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/<select[^>]+name="workspace"/);
    expect(res.body).toContain(a.id);
    expect(res.body).toContain(b.id);
    const chosen = await login(email, PASSWORD, { workspace: a.id });
    expect(chosen.statusCode).toBe(303);
    const info = await h.app().inject({ method: 'GET', url: '/v1/session', headers: { cookie: cookieOf(chosen) } });
    expect(info.json().user.id).toBe(ua.id);
  });

  /** The known-device cookie a sign-in set, as a Cookie header. */
  function deviceOf(res: LightMyRequestResponse): string {
    const set = ([] as string[]).concat(res.headers['set-cookie'] as string | string[]);
    const line = set.find((c) => c.startsWith('__Host-fc_device='));
    expect(line, String(set)).toBeDefined();
    expect(line).toMatch(/; Max-Age=31536000; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    return line!.split(';')[0]!;
  }

  it('rate limits (issue 29 item 12): failures from one address hold that address, never the owner elsewhere nor their known device; 20 per IP address', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'owner');
    // An attacker at 10.2.0.1 fails five times: that address is held for the account (even with the right password).
    for (let i = 0; i < 5; i++) expect((await login(u.email, 'wrong password!', {}, '10.2.0.1')).statusCode).toBe(401);
    const limited = await login(u.email, PASSWORD, {}, '10.2.0.1');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800);
    expect(limited.headers['set-cookie']).toBeUndefined();
    // The owner signs in from anywhere else, and from the attacker's own address with the browser that signed in before.
    const elsewhere = await login(u.email, PASSWORD, {}, '10.2.0.2');
    expect(elsewhere.statusCode).toBe(303);
    const device = deviceOf(elsewhere);
    expect((await login(u.email, PASSWORD, {}, '10.2.0.1', { cookie: device })).statusCode).toBe(303);
    // A device cookie made for another account, or altered, is not one.
    const other = await user(ws.id, 'viewer');
    const otherDevice = deviceOf(await login(other.email, PASSWORD, {}, '10.2.1.2'));
    expect((await login(u.email, PASSWORD, {}, '10.2.0.1', { cookie: otherDevice })).statusCode).toBe(429);
    expect(
      (
        await login(u.email, PASSWORD, {}, '10.2.0.1', {
          cookie: `${device.slice(0, -2)}${device.endsWith('xx') ? 'yy' : 'xx'}`,
        })
      ).statusCode,
    ).toBe(429);
    // The known device has its own count: five failures with it, and it waits too.
    for (let i = 0; i < 5; i++)
      expect((await login(u.email, 'wrong password!', {}, '10.2.0.3', { cookie: device })).statusCode).toBe(401);
    expect((await login(u.email, PASSWORD, {}, '10.2.0.3', { cookie: device })).statusCode).toBe(429);
    // IPv6 addresses count by /64: a new address of the same network is the same client.
    const v6 = await user(ws.id, 'viewer');
    for (let i = 1; i <= 5; i++)
      expect((await login(v6.email, 'wrong password!', {}, `2001:db8:1:2::${i}`)).statusCode).toBe(401);
    expect((await login(v6.email, PASSWORD, {}, '2001:db8:1:2:ffff::99')).statusCode).toBe(429);
    expect((await login(v6.email, PASSWORD, {}, '::ffff:10.2.0.1')).statusCode).toBe(303);
    expect((await login(v6.email, PASSWORD, {}, '2001:db8:1:3::1')).statusCode).toBe(303);
    // Per IP address: 20 failures over many addresses, then even a right password from that address waits.
    const third = await user(ws.id, 'viewer');
    for (let i = 0; i < 20; i++)
      expect((await login(uniqueEmail('spray'), 'wrong password!', {}, '10.3.0.1')).statusCode).toBe(401);
    const fromIp = await login(third.email, PASSWORD, {}, '10.3.0.1');
    expect(fromIp.statusCode).toBe(429);
    expect(Number(fromIp.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login(third.email, PASSWORD, {}, '10.3.0.2')).statusCode).toBe(303);
  });

  it('rate limits (issue 29 item 12): failures spread over many addresses start an account-wide backoff that a known device or address is not held by (controlled clock)', async () => {
    const t0 = Date.parse('2031-03-01T10:00:00.000Z');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(t0);
      const ws = await workspace();
      const u = await user(ws.id, 'owner');
      const device = deviceOf(await login(u.email, PASSWORD, {}, '10.7.0.1')); // the owner's browser, at the office
      // An attacker spreads ten failures over ten addresses: each address is far below its own limit.
      for (let i = 1; i <= 10; i++)
        expect((await login(u.email, 'wrong password!', {}, `10.8.0.${i}`)).statusCode).toBe(401);
      // Now the account is held for new places: 30 seconds, doubling with each further failure.
      const held = await login(u.email, PASSWORD, {}, '10.8.1.1');
      expect(held.statusCode).toBe(429);
      expect(Number(held.headers['retry-after'])).toBe(30);
      // Not the owner: from the address they signed in from before, or from their browser anywhere.
      expect((await login(u.email, PASSWORD, {}, '10.7.0.1')).statusCode).toBe(303);
      expect((await login(u.email, PASSWORD, {}, '10.9.9.9', { cookie: device })).statusCode).toBe(303);
      // The attacker gets one guess per backoff period, each period twice the last.
      vi.setSystemTime(t0 + 31_000);
      expect((await login(u.email, 'wrong password!', {}, '10.8.1.2')).statusCode).toBe(401);
      const longer = await login(u.email, 'wrong password!', {}, '10.8.1.3');
      expect(longer.statusCode).toBe(429);
      expect(Number(longer.headers['retry-after'])).toBe(60);
      // The backoff is capped at 15 minutes and ends when the failures are a day old.
      for (let i = 0; i < 8; i++) {
        vi.setSystemTime(Date.now() + 16 * 60_000);
        expect((await login(u.email, 'wrong password!', {}, `10.8.2.${i}`)).statusCode).toBe(401);
      }
      expect(Number((await login(u.email, 'wrong password!', {}, '10.8.3.1')).headers['retry-after'])).toBe(900);
      vi.setSystemTime(Date.now() + 24 * 3600_000 + 60_000);
      expect((await login(u.email, PASSWORD, {}, '10.8.4.1')).statusCode).toBe(303);
    } finally {
      vi.useRealTimers();
    }
  });

  it('login CSRF: the sign-in, invitation and reset forms refuse a cross-site POST (Sec-Fetch-Site or a foreign Origin)', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'viewer');
    const post = (url: string, headers: Record<string, string>) =>
      h.app().inject({
        method: 'POST',
        url,
        remoteAddress: '10.6.0.1',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({ email: u.email, password: PASSWORD }).toString(),
      });
    for (const headers of [
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      // A sibling subdomain is the same site, not the same origin: it may be anyone's.
      { origin: 'https://evil.example.test', 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      for (const url of ['/app/login', '/app/reset', '/app/invite/x'.padEnd(56, 'x')]) {
        const res = await post(url, headers);
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(403);
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    }
    // From the site itself (same host in Origin, or a same-origin fetch), sign-in works; so does a same-origin form
    // of a page with Referrer-Policy: no-referrer, which browsers send with `Origin: null`.
    expect((await post('/app/login', { origin: 'http://localhost:3000', host: 'localhost:3000' })).statusCode).toBe(
      303,
    );
    expect((await post('/app/login', { origin: 'null', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(303);
  });

  it('rate limits hold against parallel guesses: each attempt counts before its password is checked', async () => {
    const ws = await workspace();
    const u = await user(ws.id, 'viewer');
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => login(u.email, `wrong password ${i}`, {}, `10.4.0.${i + 1}`)),
    );
    const codes = answers.map((a) => a.statusCode);
    // Thirty addresses, one guess each: the account-wide backoff lets ten through.
    expect(codes.filter((c) => c === 401)).toHaveLength(10);
    expect(codes.filter((c) => c === 429)).toHaveLength(20);
    // Twelve guesses from one address at once: five are checked.
    const w = await user(ws.id, 'viewer');
    const pair = (
      await Promise.all(Array.from({ length: 12 }, (_, i) => login(w.email, `wrong password ${i}`, {}, '10.4.2.1')))
    ).map((a) => a.statusCode);
    expect(pair.filter((c) => c === 401)).toHaveLength(5);
    expect(pair.filter((c) => c === 429)).toHaveLength(7);
    // A right password does not use up the allowance of the others.
    const v = await user(ws.id, 'viewer');
    for (let i = 0; i < 6; i++) expect((await login(v.email, PASSWORD, {}, '10.4.1.1')).statusCode).toBe(303);
  });

  it("a viewer's session gets 403 on every write operation of /openapi.json", async () => {
    const ws = await workspace();
    const viewer = await signIn((await user(ws.id, 'viewer')).email);
    const doc = (await h.app().inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    let checked = 0;
    for (const [p, ops] of Object.entries(doc.paths)) {
      // The session's own endpoints (and one's own profile) are any caller's; previews, preflight checks, automation dry runs and the email
      // document render are reads sent as POST (read scopes).
      if (
        !p.startsWith('/v1/') ||
        p.startsWith('/v1/session') ||
        p.startsWith('/v1/me') ||
        p.endsWith('/preview') ||
        p.endsWith('/preflight') ||
        p.endsWith('/simulate') ||
        p === '/v1/email-documents/render'
      )
        continue;
      for (const method of Object.keys(ops)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
        const url = p.replace(/\{[^}]+\}/g, 'x_01ABCDEFGHJKMNPQRSTVWXYZ00');
        const res = await call(viewer, method.toUpperCase() as InjectOptions['method'], url, {});
        expect(res.statusCode, `${method} ${p}: ${res.body}`).toBe(403);
        expect(res.json().code, `${method} ${p}`).toBe('insufficient_scope');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
    // Reads work.
    expect((await call(viewer, 'GET', '/v1/forms')).statusCode).toBe(200);
    expect((await call(viewer, 'GET', '/v1/workspace')).statusCode).toBe(200);
  });

  it('editor writes forms, contacts, broadcasts but not domains, webhooks, keys, people; admin not the workspace; owner does', async () => {
    const ws = await workspace();
    const editor = await signIn((await user(ws.id, 'editor')).email);
    const admin = await signIn((await user(ws.id, 'admin')).email);
    const owner = await signIn((await user(ws.id, 'owner')).email);
    expect((await call(editor, 'POST', '/v1/forms', { name: 'F', type: 'SIGN_UP' })).statusCode).toBe(201);
    expect((await call(editor, 'POST', '/v1/contacts', { email: uniqueEmail('c') })).statusCode).toBeLessThan(300);
    expect((await call(editor, 'POST', '/v1/broadcasts', { name: 'B' })).statusCode).toBe(201);
    for (const [method, url, body] of [
      ['POST', '/v1/domains', { name: 'editor.example' }],
      ['POST', '/v1/webhooks', { url: 'https://hooks.example.com/x', eventTypes: ['contact.created'] }],
      ['POST', '/v1/api-keys', { name: 'k', scopes: ['read:forms'] }],
      ['GET', '/v1/api-keys', undefined],
      ['GET', '/v1/users', undefined],
      ['POST', '/v1/invitations', { email: uniqueEmail('i'), role: 'viewer' }],
      ['PUT', '/v1/workspace', { name: 'X' }],
    ] as const) {
      const res = await call(editor, method, url, body);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
      expect(res.json().code).toBe('insufficient_scope');
    }
    expect(await k().selectFrom('domains').select('id').where('workspace_id', '=', ws.id).execute()).toHaveLength(0);
    // Admin: keys and people yes (but no admin key, which it does not hold), the workspace no.
    expect((await call(admin, 'POST', '/v1/api-keys', { name: 'k', scopes: ['read:forms'] })).statusCode).toBe(201);
    expect((await call(admin, 'POST', '/v1/api-keys', { name: 'k', scopes: ['admin'] })).statusCode).toBe(422);
    expect((await call(admin, 'GET', '/v1/users')).statusCode).toBe(200);
    const put = await call(admin, 'PUT', '/v1/workspace', { name: 'Renamed by admin' });
    expect(put.statusCode).toBe(403);
    expect(put.json().detail).toContain('manage:workspace');
    expect((await call(owner, 'PUT', '/v1/workspace', { name: 'Renamed' })).statusCode).toBe(200);
    expect((await k().selectFrom('workspaces').select('name').where('id', '=', ws.id).executeTakeFirst())!.name).toBe(
      'Renamed',
    );
    // An admin API key still manages keys and the workspace.
    expect((await call(null, 'GET', '/v1/api-keys', undefined, { key: ws.key })).statusCode).toBe(200);
    expect((await call(null, 'PUT', '/v1/workspace', { name: 'By key' }, { key: ws.key })).statusCode).toBe(200);
    // A key without admin is told the key scope it needs.
    const formsKey = (await h.app().services.apiKeys.create(ws.id, { name: 'f', scopes: ['write:forms'] })).key;
    const denied = await call(null, 'GET', '/v1/api-keys', undefined, { key: formsKey });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('admin');
  });

  it('a session of workspace A sees nothing of B (404)', async () => {
    const a = await workspace('A');
    const b = await workspace('B');
    const form = (await call(null, 'POST', '/v1/forms', { name: 'B form', type: 'SIGN_UP' }, { key: b.key })).json();
    const bUser = await user(b.id, 'viewer');
    const inv = (
      await call(null, 'POST', '/v1/invitations', { email: uniqueEmail('b'), role: 'viewer' }, { key: b.key })
    ).json();
    const bSession = await signIn(bUser.email);
    const bSessionId = (await call(bSession, 'GET', '/v1/session/sessions')).json().data[0].id;
    const owner = await signIn((await user(a.id, 'owner')).email);
    expect((await call(owner, 'GET', `/v1/forms/${form.id}`)).statusCode).toBe(404);
    expect((await call(owner, 'GET', `/v1/users/${bUser.id}`)).statusCode).toBe(404);
    expect((await call(owner, 'PUT', `/v1/users/${bUser.id}`, { role: 'owner' })).statusCode).toBe(404);
    expect((await call(owner, 'DELETE', `/v1/users/${bUser.id}`)).statusCode).toBe(404);
    expect((await call(owner, 'DELETE', `/v1/invitations/${inv.id}`)).statusCode).toBe(404);
    expect((await call(owner, 'DELETE', `/v1/session/sessions/${bSessionId}`)).statusCode).toBe(404);
    expect((await call(owner, 'GET', '/v1/users')).json().data.map((u: { id: string }) => u.id)).not.toContain(
      bUser.id,
    );
    expect((await call(owner, 'GET', '/v1/forms')).json().data).toHaveLength(0);
    expect((await k().selectFrom('users').select('role').where('id', '=', bUser.id).executeTakeFirst())!.role).toBe(
      'viewer',
    );
    expect((await call(bSession, 'GET', '/v1/session')).statusCode).toBe(200);
  });

  it('a write without X-CSRF-Token, or with a wrong one, is 403 csrf_failed and changes nothing; API keys need none', async () => {
    const ws = await workspace();
    const editor = await signIn((await user(ws.id, 'editor')).email);
    for (const csrf of [null, 'wrong', `${editor.csrf}x`]) {
      const res = await call(editor, 'POST', '/v1/forms', { name: 'CSRF', type: 'SIGN_UP' }, { csrf });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'csrf_failed', type: '/docs/errors#csrf_failed' });
    }
    const other = await signIn((await user(ws.id, 'editor')).email);
    expect(
      (await call(editor, 'POST', '/v1/forms', { name: 'CSRF', type: 'SIGN_UP' }, { csrf: other.csrf })).statusCode,
    ).toBe(403);
    expect(await k().selectFrom('forms').select('id').where('workspace_id', '=', ws.id).execute()).toHaveLength(0);
    // Reads need no token; the right token writes.
    expect((await call(editor, 'GET', '/v1/forms', undefined, { csrf: null })).statusCode).toBe(200);
    expect((await call(editor, 'POST', '/v1/forms', { name: 'CSRF', type: 'SIGN_UP' })).statusCode).toBe(201);
    expect((await call(null, 'POST', '/v1/forms', { name: 'Key', type: 'SIGN_UP' }, { key: ws.key })).statusCode).toBe(
      201,
    );
    // Documented.
    const doc = (await h.app().inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/forms'].post.responses['403'].description).toContain('csrf_failed');
    expect((await h.app().inject({ method: 'GET', url: '/docs/errors' })).body).toContain('id="csrf_failed"');
  });

  it('sign-out kills the cookie at once; it needs the CSRF token', async () => {
    const ws = await workspace();
    const s = await signIn((await user(ws.id, 'viewer')).email);
    const forged = await h.app().inject({
      method: 'POST',
      url: '/app/logout',
      headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_csrf=nope',
    });
    expect(forged.statusCode).toBe(403);
    expect((await call(s, 'GET', '/v1/session')).statusCode).toBe(200);
    const out = await h.app().inject({
      method: 'POST',
      url: '/app/logout',
      headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(s.csrf)}`,
    });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/app/login');
    expect(String(out.headers['set-cookie'])).toMatch(/^__Host-fc_session=; Max-Age=0/);
    const after = await call(s, 'GET', '/v1/session');
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe('unauthorized');
    const row = await k()
      .selectFrom('sessions')
      .select('revoked_at')
      .where('csrf_token', '=', s.csrf)
      .executeTakeFirst();
    expect(row!.revoked_at).not.toBeNull();
    // A garbage or unknown cookie is 401 too.
    expect((await call({ cookie: '__Host-fc_session=garbage', csrf: '' }, 'GET', '/v1/forms')).statusCode).toBe(401);
    expect(
      (await call({ cookie: `__Host-fc_session=${'A'.repeat(43)}`, csrf: '' }, 'GET', '/v1/forms')).statusCode,
    ).toBe(401);
  });

  it("sessions: listed with the current one marked; revoking one kills it at once; another user's is 404", async () => {
    const ws = await workspace();
    const email = (await user(ws.id, 'viewer')).email;
    const laptop = await signIn(email);
    const phone = await signIn(email);
    const list = (await call(laptop, 'GET', '/v1/session/sessions')).json().data as {
      id: string;
      current: boolean;
      ip: string;
    }[];
    expect(list).toHaveLength(2);
    expect(list.filter((s) => s.current)).toHaveLength(1);
    const phoneId = list.find((s) => !s.current)!.id;
    expect(
      (await call(laptop, 'DELETE', `/v1/session/sessions/${phoneId}`, undefined, { csrf: null })).statusCode,
    ).toBe(403);
    expect((await call(laptop, 'DELETE', `/v1/session/sessions/${phoneId}`)).statusCode).toBe(204);
    expect((await call(phone, 'GET', '/v1/forms')).statusCode).toBe(401);
    expect((await call(laptop, 'GET', '/v1/forms')).statusCode).toBe(200);
    expect((await call(laptop, 'GET', '/v1/session/sessions')).json().data).toHaveLength(1);
    const stranger = await signIn((await user(ws.id, 'admin')).email);
    const laptopId = list.find((s) => s.current)!.id;
    expect((await call(stranger, 'DELETE', `/v1/session/sessions/${laptopId}`)).statusCode).toBe(404);
    expect((await call(laptop, 'GET', '/v1/forms')).statusCode).toBe(200);
  });

  it("people: rename and change roles (effective at once); the owner role is an owner's; the last owner stays", async () => {
    const ws = await workspace();
    const ownerUser = await user(ws.id, 'owner');
    const owner = await signIn(ownerUser.email);
    const adminUser = await user(ws.id, 'admin');
    const admin = await signIn(adminUser.email);
    const editorUser = await user(ws.id, 'editor');
    const editor = await signIn(editorUser.email);
    // Admin demotes the editor to viewer: the editor's next write is refused.
    const put = await call(admin, 'PUT', `/v1/users/${editorUser.id}`, { role: 'viewer', name: 'Ed' });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ id: editorUser.id, role: 'viewer', name: 'Ed' });
    expect((await call(editor, 'POST', '/v1/forms', { name: 'F', type: 'SIGN_UP' })).statusCode).toBe(403);
    // Admin cannot make owners, nor touch an owner.
    expect((await call(admin, 'PUT', `/v1/users/${editorUser.id}`, { role: 'owner' })).statusCode).toBe(403);
    expect((await call(admin, 'PUT', `/v1/users/${ownerUser.id}`, { role: 'viewer' })).statusCode).toBe(403);
    expect((await call(admin, 'DELETE', `/v1/users/${ownerUser.id}`)).statusCode).toBe(403);
    expect((await call(admin, 'POST', '/v1/invitations', { email: uniqueEmail('o'), role: 'owner' })).statusCode).toBe(
      403,
    );
    // The last owner: neither demoted nor removed, even by themselves.
    const demote = await call(owner, 'PUT', `/v1/users/${ownerUser.id}`, { role: 'admin' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().code).toBe('invalid_state');
    expect((await call(owner, 'DELETE', `/v1/users/${ownerUser.id}`)).statusCode).toBe(409);
    expect((await k().selectFrom('users').select('role').where('id', '=', ownerUser.id).executeTakeFirst())!.role).toBe(
      'owner',
    );
    // With a second owner, the first may step down.
    expect((await call(owner, 'PUT', `/v1/users/${adminUser.id}`, { role: 'owner' })).json().role).toBe('owner');
    expect((await call(owner, 'PUT', `/v1/users/${ownerUser.id}`, { role: 'admin' })).json().role).toBe('admin');
    expect((await call(admin, 'DELETE', `/v1/users/${adminUser.id}`)).statusCode).toBe(409);
    // Removing a person ends their sessions at once.
    expect((await call(admin, 'DELETE', `/v1/users/${editorUser.id}`)).statusCode).toBe(204);
    expect((await call(editor, 'GET', '/v1/forms')).statusCode).toBe(401);
    expect(await k().selectFrom('users').select('id').where('id', '=', editorUser.id).execute()).toHaveLength(0);
    expect((await call(owner, 'PUT', `/v1/users/${editorUser.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await call(owner, 'PUT', `/v1/users/${ownerUser.id}`, { role: 'god' })).statusCode).toBe(422);
    expect((await call(owner, 'PUT', `/v1/users/${ownerUser.id}`, { email: 'x@y.z' })).statusCode).toBe(422);
  });

  it('invitations: emailed, accepted once through the page, then the link is gone (410); revoked and expired links too', async () => {
    const ws = await workspace('Invite Co');
    await h.app().services.domains.add(ws.id, 'invite.example', { verified: true });
    const admin = await signIn((await user(ws.id, 'admin')).email);
    const email = uniqueEmail('invitee');
    const created = await call(admin, 'POST', '/v1/invitations', { email, role: 'editor' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      email,
      role: 'editor',
      status: 'PENDING',
      emailSent: true,
      acceptedAt: null,
    });
    expect(Date.parse(created.json().expiresAt) - Date.parse(created.json().createdAt)).toBe(7 * 24 * 3600 * 1000);
    expect(h.smtp().received).toHaveLength(1);
    const mail = h.smtp().received[0]!;
    expect(mail.to).toBe(email);
    expect(mail.parsed.from?.value[0]?.address).toBe('no-reply@invite.example');
    expect(mail.mailFrom).toMatch(/^bounces\+[a-z0-9]+@bounces\.invite\.example$/);
    const link = /https:\/\/console\.example\.test\/app\/invite\/([A-Za-z0-9_-]{43})/.exec(mail.parsed.text ?? '');
    expect(link).not.toBeNull();
    const token = link![1]!;
    const row = await k().selectFrom('invitations').selectAll().where('id', '=', created.json().id).executeTakeFirst();
    expect(row!.token_hash).not.toContain(token);
    expect(JSON.stringify(created.json())).not.toContain(token);
    // The page, then a too-short password, then acceptance.
    const page = await h.app().inject({ method: 'GET', url: `/app/invite/${token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Join Invite Co');
    const short = await h.app().inject({
      method: 'POST',
      url: `/app/invite/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=Ivy&password=short',
    });
    expect(short.statusCode).toBe(422);
    const accept = await h.app().inject({
      method: 'POST',
      url: `/app/invite/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: 'Ivy', password: PASSWORD }).toString(),
    });
    expect(accept.statusCode).toBe(303);
    const info = await h.app().inject({ method: 'GET', url: '/v1/session', headers: { cookie: cookieOf(accept) } });
    expect(info.json().user).toMatchObject({ email, name: 'Ivy', role: 'editor' });
    expect((await login(email)).statusCode).toBe(303);
    // Single use.
    for (const method of ['GET', 'POST'] as const) {
      const again = await h.app().inject({
        method,
        url: `/app/invite/${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ name: 'Eve', password: 'another password' }).toString(),
      });
      expect(again.statusCode).toBe(410);
      expect(again.body).toContain('was used already');
    }
    expect((await call(admin, 'GET', '/v1/invitations')).json().data[0]).toMatchObject({
      id: created.json().id,
      status: 'ACCEPTED',
    });
    expect((await call(admin, 'POST', '/v1/invitations', { email, role: 'viewer' })).json().code).toBe('user_exists');
    // Revoked.
    const second = (
      await call(admin, 'POST', '/v1/invitations', { email: uniqueEmail('revoked'), role: 'viewer' })
    ).json();
    const secondToken = /\/app\/invite\/([A-Za-z0-9_-]{43})/.exec(h.smtp().received.at(-1)!.parsed.text ?? '')![1]!;
    expect((await call(admin, 'DELETE', `/v1/invitations/${second.id}`)).statusCode).toBe(204);
    expect((await h.app().inject({ method: 'GET', url: `/app/invite/${secondToken}` })).statusCode).toBe(410);
    // Expired.
    const third = (await call(admin, 'POST', '/v1/invitations', { email: uniqueEmail('late'), role: 'viewer' })).json();
    const thirdToken = /\/app\/invite\/([A-Za-z0-9_-]{43})/.exec(h.smtp().received.at(-1)!.parsed.text ?? '')![1]!;
    await k()
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', third.id)
      .execute();
    const expired = await h.app().inject({ method: 'GET', url: `/app/invite/${thirdToken}` });
    expect(expired.statusCode).toBe(410);
    expect(expired.body).toContain('expired');
    expect(
      (
        await h.app().inject({
          method: 'POST',
          url: `/app/invite/${thirdToken}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `password=${encodeURIComponent(PASSWORD)}`,
        })
      ).statusCode,
    ).toBe(410);
    expect((await h.app().inject({ method: 'GET', url: `/app/invite/${'x'.repeat(43)}` })).statusCode).toBe(404);
    expect((await h.app().inject({ method: 'GET', url: '/app/invite/short' })).statusCode).toBe(404);
  });

  it('an invitation without a verified domain is created with emailSent false', async () => {
    const ws = await workspace();
    const res = await call(
      null,
      'POST',
      '/v1/invitations',
      { email: uniqueEmail('nomail'), role: 'viewer' },
      { key: ws.key },
    );
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ emailSent: false, status: 'PENDING', invitedBy: null });
    expect(h.smtp().received).toHaveLength(0);
  });

  it('password reset: the same answer for any address; the link works once, for an hour, and revokes the other sessions', async () => {
    const ws = await workspace('Reset Co');
    await h.app().services.domains.add(ws.id, 'reset.example', { verified: true });
    const u = await user(ws.id, 'editor');
    const before = await signIn(u.email);
    const ask = (email: string) =>
      h.app().inject({
        method: 'POST',
        url: '/app/reset',
        remoteAddress: '10.9.0.1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `email=${encodeURIComponent(email)}`,
      });
    const unknown = await ask(uniqueEmail('ghost'));
    const known = await ask(u.email);
    expect(unknown.statusCode).toBe(200);
    expect(known.statusCode).toBe(200);
    expect(known.body).toBe(unknown.body);
    // The email goes out after the answer (its timing must not tell which addresses have accounts).
    await expect.poll(() => h.smtp().received.length).toBe(1);
    const token = /https:\/\/console\.example\.test\/app\/reset\/([A-Za-z0-9_-]{43})/.exec(
      h.smtp().received[0]!.parsed.text ?? '',
    )![1]!;
    expect((await h.app().inject({ method: 'GET', url: `/app/reset/${token}` })).statusCode).toBe(200);
    const done = await h.app().inject({
      method: 'POST',
      url: `/app/reset/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `password=${encodeURIComponent('a brand new password')}`,
    });
    expect(done.statusCode).toBe(303);
    const fresh = cookieOf(done);
    expect((await call(before, 'GET', '/v1/forms')).statusCode).toBe(401);
    expect((await h.app().inject({ method: 'GET', url: '/v1/forms', headers: { cookie: fresh } })).statusCode).toBe(
      200,
    );
    expect((await login(u.email, PASSWORD, {}, '10.9.0.2')).statusCode).toBe(401);
    expect((await login(u.email, 'a brand new password', {}, '10.9.0.2')).statusCode).toBe(303);
    const again = await h.app().inject({
      method: 'POST',
      url: `/app/reset/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `password=${encodeURIComponent('yet another password')}`,
    });
    expect(again.statusCode).toBe(410);
    // Expired after an hour.
    await ask(u.email);
    await expect.poll(() => h.smtp().received.length).toBe(2);
    const late = /\/app\/reset\/([A-Za-z0-9_-]{43})/.exec(h.smtp().received.at(-1)!.parsed.text ?? '')![1]!;
    await k()
      .updateTable('password_resets')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', u.id)
      .where('used_at', 'is', null)
      .execute();
    expect((await h.app().inject({ method: 'GET', url: `/app/reset/${late}` })).statusCode).toBe(410);
    const rows = await k()
      .selectFrom('password_resets')
      .select('expires_at')
      .select('created_at')
      .where('user_id', '=', u.id)
      .execute();
    expect(rows.length).toBeGreaterThanOrEqual(2);
  });
});

describe('formcast user create (CLI)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-users-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: path.join(dir, 'formcast.db') };
  for (const name of ['PORT', 'HOST', 'SMTP_URL', 'PUBLIC_URL', 'LOG_LEVEL']) delete env[name];
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function cli(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/formcast', ...args], { cwd: ROOT, env });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  it('creates a user who can sign in; refuses a short password, an unknown workspace, a duplicate address', async () => {
    const ws = JSON.parse((await cli(['workspace', 'create', 'CLI Co', '--json'])).stdout).workspace.id as string;
    const ok = await cli(
      [
        'user',
        'create',
        '--workspace',
        ws,
        '--email',
        'Owner@CLI.example',
        '--role',
        'owner',
        '--password-stdin',
        '--json',
      ],
      `${PASSWORD}\n`,
    );
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const out = JSON.parse(ok.stdout);
    expect(out).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: 'owner@cli.example',
      role: 'owner',
      workspaceId: ws,
    });
    // Exit codes (docs/cli.md): 5 refused, 4 not found, 2 usage.
    for (const [args, stdin, message, code] of [
      [['--workspace', ws, '--email', 'b@cli.example', '--role', 'viewer'], 'short', /at least 10 characters/, 5],
      [['--workspace', 'ws_nope', '--email', 'b@cli.example', '--role', 'viewer'], PASSWORD, /no workspace/, 4],
      [['--workspace', ws, '--email', 'OWNER@cli.example', '--role', 'viewer'], PASSWORD, /already a user/, 5],
      [['--workspace', ws, '--email', 'b@cli.example', '--role', 'root'], PASSWORD, /owner, admin, editor, viewer/, 2],
    ] as const) {
      const bad = await cli(['user', 'create', ...args, '--password-stdin', '--json'], stdin);
      expect(bad.code).toBe(code);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(message);
    }
    const list = await cli(['user', 'list', '--workspace', ws, '--json']);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ id: out.id, email: 'owner@cli.example', role: 'owner' }),
    ]);
  }, 180_000);
});
