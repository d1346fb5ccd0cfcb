/**
 * One's own account (docs/console.md, "Your profile"; docs/security.md): name, email and password changes, and
 * two-factor sign-in with TOTP and recovery codes (enrolment, the sign-in's second step, replay, rate limits, the
 * workspace's requirement). On SQLite and PostgreSQL through app.inject, checking the database after. TOTP codes are
 * computed with otplib from the secret and the controlled clock (vi.setSystemTime).
 */
import crypto from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { afterEach, expect, it, vi } from 'vitest';
import { describeApi } from '../helpers/app.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';
let seq = 0;
const uniqueEmail = (tag: string) => `${tag}.${process.pid}.${++seq}@account.example`;

interface Session {
  cookie: string;
  csrf: string;
}

describeApi(
  'account: profile and two-factor sign-in',
  (h) => {
    const k = () => h.db.kysely;
    afterEach(() => {
      vi.useRealTimers();
    });

    async function user(wsId: string, role = 'owner', email = uniqueEmail(role)) {
      const u = await h.app.services.users.create(wsId, { email, role, password: PASSWORD });
      return { id: u.id, email: u.email };
    }

    let ip = 0;
    /** Each test signs in from an address of its own, so that the per-IP limits of one test do not reach another. */
    const freshIp = () => `10.9.${Math.floor(++ip / 250)}.${ip % 250}`;

    function login(email: string, password = PASSWORD, remoteAddress = '127.0.0.1') {
      return h.app.inject({
        method: 'POST',
        url: '/app/login',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ email, password }).toString(),
      });
    }

    const cookieValue = (res: LightMyRequestResponse, name: string): string | null => {
      const all = ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []);
      for (const c of all) {
        const m = new RegExp(`^${name}=([^;]*)`).exec(c);
        if (m && m[1]) return m[1];
      }
      return null;
    };

    async function sessionOf(res: LightMyRequestResponse): Promise<Session> {
      const token = cookieValue(res, '__Host-fc_session');
      expect(token, String(res.headers['set-cookie'])).not.toBeNull();
      const cookie = `__Host-fc_session=${token}`;
      const info = await h.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie } });
      expect(info.statusCode, info.body).toBe(200);
      return { cookie, csrf: info.json().csrfToken };
    }

    async function signIn(email: string, password = PASSWORD, remoteAddress = freshIp()): Promise<Session> {
      const res = await login(email, password, remoteAddress);
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toBe('/app');
      return sessionOf(res);
    }

    function call(
      s: Session | null,
      method: InjectOptions['method'],
      url: string,
      body?: unknown,
      remoteAddress?: string,
    ) {
      return h.app.inject({
        method,
        url,
        remoteAddress,
        headers: {
          ...(s ? { cookie: s.cookie, 'x-csrf-token': s.csrf } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    }

    const code = (secret: string, at = Date.now()) => generate({ secret, epoch: Math.floor(at / 1000) });

    /** `n` codes that no step the server accepts around `at` gives for `secret` (a fixed "wrong" code is right 1 in ~300,000). */
    async function wrongCodes(secret: string, n = 1, at = Date.now()): Promise<string[]> {
      const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((step) => code(secret, at + step * 30_000))));
      const out: string[] = [];
      for (let c = 0; out.length < n; c++)
        if (!valid.has(String(c).padStart(6, '0'))) out.push(String(c).padStart(6, '0'));
      return out;
    }

    /** Enrols the signed-in user: returns the secret and the recovery codes. */
    async function enrol(s: Session): Promise<{ secret: string; recoveryCodes: string[] }> {
      const setup = await call(s, 'POST', '/v1/me/two-factor/setup', { currentPassword: PASSWORD });
      expect(setup.statusCode, setup.body).toBe(200);
      const { secret, uri, qrCode } = setup.json();
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(uri).toMatch(/^otpauth:\/\/totp\//);
      expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
      const confirm = await call(s, 'POST', '/v1/me/two-factor/confirm', { code: await code(secret) });
      expect(confirm.statusCode, confirm.body).toBe(200);
      const { recoveryCodes } = confirm.json();
      expect(recoveryCodes).toHaveLength(10);
      return { secret, recoveryCodes };
    }

    async function secondStep(pending: string, value: string, remoteAddress = '127.0.0.1') {
      return h.app.inject({
        method: 'POST',
        url: '/app/login/two-factor',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `__Host-fc_2fa=${pending}` },
        payload: new URLSearchParams({ code: value, next: '/app/forms' }).toString(),
      });
    }

    /** The password step of a user with two-factor sign-in: the pending cookie (no session yet). */
    async function passwordStep(email: string, remoteAddress = freshIp()): Promise<string> {
      const res = await login(email, PASSWORD, remoteAddress);
      expect(res.statusCode, res.body).toBe(303);
      expect(res.headers.location).toBe('/app/login/two-factor');
      expect(cookieValue(res, '__Host-fc_session')).toBeNull();
      const pending = cookieValue(res, '__Host-fc_2fa');
      expect(pending).not.toBeNull();
      return pending!;
    }

    it('changes the name; an email change needs the current password, is refused when taken (409), and a wrong password changes nothing', async () => {
      const ws = await h.workspace();
      const me = await user(ws.id);
      const other = await user(ws.id, 'editor');
      const s = await signIn(me.email);
      const named = await call(s, 'PUT', '/v1/me', { name: '  Ada Lovelace ' });
      expect(named.statusCode, named.body).toBe(200);
      expect(named.json()).toMatchObject({ name: 'Ada Lovelace', email: me.email, emailChanged: false });

      const noPassword = await call(s, 'PUT', '/v1/me', { email: 'ada@new.example' });
      expect(noPassword.statusCode).toBe(422);
      expect(noPassword.json().errors[0].path).toBe('/currentPassword');
      const wrong = await call(s, 'PUT', '/v1/me', { email: 'ada@new.example', currentPassword: 'not the password' });
      expect(wrong.statusCode).toBe(422);
      expect(wrong.json().errors).toEqual([{ path: '/currentPassword', message: 'is not your current password' }]);
      const taken = await call(s, 'PUT', '/v1/me', { email: other.email.toUpperCase(), currentPassword: PASSWORD });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().code).toBe('user_exists');
      let row = await k()
        .selectFrom('users')
        .select(['email', 'name'])
        .where('id', '=', me.id)
        .executeTakeFirstOrThrow();
      expect(row.email).toBe(me.email);

      const moved = await call(s, 'PUT', '/v1/me', { email: 'Ada@New.Example', currentPassword: PASSWORD });
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json()).toMatchObject({ email: 'ada@new.example', emailChanged: true });
      row = await k().selectFrom('users').select(['email', 'name']).where('id', '=', me.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ email: 'ada@new.example', name: 'Ada Lovelace' });
      expect((await login('ada@new.example', PASSWORD, freshIp())).statusCode).toBe(303);
    });

    it('a password change needs the current password and ends the other sessions, keeping this one', async () => {
      const ws = await h.workspace();
      const me = await user(ws.id);
      const here = await signIn(me.email);
      const elsewhere = await signIn(me.email);
      const wrong = await call(here, 'POST', '/v1/me/password', {
        currentPassword: 'not the password',
        newPassword: NEW_PASSWORD,
      });
      expect(wrong.statusCode).toBe(422);
      expect(wrong.json().errors[0].path).toBe('/currentPassword');
      const short = await call(here, 'POST', '/v1/me/password', { currentPassword: PASSWORD, newPassword: 'short' });
      expect(short.statusCode).toBe(422);
      expect((await call(elsewhere, 'GET', '/v1/session')).statusCode).toBe(200);

      const done = await call(here, 'POST', '/v1/me/password', {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(done.statusCode, done.body).toBe(200);
      expect(done.json()).toEqual({ sessionsEnded: 1 });
      expect((await call(here, 'GET', '/v1/session')).statusCode).toBe(200);
      expect((await call(elsewhere, 'GET', '/v1/session')).statusCode).toBe(401);
      const live = await k()
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', me.id)
        .where('revoked_at', 'is', null)
        .execute();
      expect(live).toHaveLength(1);
      expect((await login(me.email, PASSWORD, freshIp())).statusCode).toBe(401);
      expect((await login(me.email, NEW_PASSWORD, freshIp())).statusCode).toBe(303);
    });

    it('wrong current passwords are rate-limited per person (429 with Retry-After)', async () => {
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      for (let i = 0; i < 5; i++) {
        const r = await call(s, 'POST', '/v1/me/password', {
          currentPassword: `wrong ${i}`,
          newPassword: NEW_PASSWORD,
        });
        expect(r.statusCode).toBe(422);
      }
      const limited = await call(s, 'POST', '/v1/me/password', {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('enrols: the secret is sealed at rest, recovery codes are stored only as hashes; sign-in then asks for a code on a page of its own', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T10:00:05.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret, recoveryCodes } = await enrol(s);
      const row = await k()
        .selectFrom('users')
        .select(['totp_secret', 'totp_enrolled_at', 'totp_last_step'])
        .where('id', '=', me.id)
        .executeTakeFirstOrThrow();
      expect(row.totp_secret).toMatch(/^v1\./);
      expect(row.totp_secret).not.toContain(secret);
      expect(row.totp_enrolled_at).not.toBeNull();
      expect(Number(row.totp_last_step)).toBe(Math.floor(Date.now() / 30_000));
      const codes = await k().selectFrom('user_recovery_codes').selectAll().where('user_id', '=', me.id).execute();
      expect(codes).toHaveLength(10);
      const dump = JSON.stringify(codes);
      for (const c of recoveryCodes) {
        expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
        expect(dump).not.toContain(c);
        expect(dump).not.toContain(c.replace(/-/g, ''));
      }
      const status = await call(s, 'GET', '/v1/me/two-factor');
      expect(status.json()).toMatchObject({ enabled: true, recoveryCodesLeft: 10, required: false });
      expect((await call(s, 'POST', '/v1/me/two-factor/setup', { currentPassword: PASSWORD })).statusCode).toBe(409);

      const pending = await passwordStep(me.email);
      const page = await h.app.inject({
        method: 'GET',
        url: '/app/login/two-factor',
        headers: { cookie: `__Host-fc_2fa=${pending}` },
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).toMatch(/<input[^>]+name="code"/);
      const noPending = await h.app.inject({ method: 'GET', url: '/app/login/two-factor' });
      expect(noPending.statusCode).toBe(303);
      expect(noPending.headers.location).toBe('/app/login');

      vi.setSystemTime(Date.now() + 30_000);
      const wrong = await secondStep(pending, (await wrongCodes(secret))[0]!);
      expect(wrong.statusCode).toBe(401);
      expect(wrong.body).toContain('That code is not right');
      expect(cookieValue(wrong, '__Host-fc_session')).toBeNull();
      const ok = await secondStep(pending, await code(secret));
      expect(ok.statusCode, ok.body).toBe(303);
      expect(ok.headers.location).toBe('/app/forms');
      const signed = await sessionOf(ok);
      expect((await call(signed, 'GET', '/v1/forms')).statusCode).toBe(200);
    });

    it('a code is accepted once: the same code again (within its window) is refused, on sign-in and on the API', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T11:00:02.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret } = await enrol(s);
      vi.setSystemTime(Date.now() + 30_000);
      const now = await code(secret);
      const first = await secondStep(await passwordStep(me.email), now);
      expect(first.statusCode).toBe(303);
      vi.setSystemTime(Date.now() + 10_000); // the same step still
      const again = await secondStep(await passwordStep(me.email), now);
      expect(again.statusCode).toBe(401);
      expect(again.body).toContain('used already');
      // An older code (the step before) is refused too, although it is within the tolerance.
      const older = await secondStep(await passwordStep(me.email), await code(secret, Date.now() - 30_000));
      expect(older.statusCode).toBe(401);
      const disable = await call(s, 'POST', '/v1/me/two-factor/disable', { currentPassword: PASSWORD, code: now });
      expect(disable.statusCode).toBe(422);
      expect(disable.json().errors[0].message).toContain('used already');
    });

    it('a recovery code signs in once; turning off needs the password and a code, and leaves no secret behind', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T12:00:01.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret, recoveryCodes } = await enrol(s);
      const typed = recoveryCodes[3]!.toUpperCase().replace(/-/g, ' ');
      const ok = await secondStep(await passwordStep(me.email), typed);
      expect(ok.statusCode, ok.body).toBe(303);
      const used = await k()
        .selectFrom('user_recovery_codes')
        .select('used_at')
        .where('user_id', '=', me.id)
        .where('used_at', 'is not', null)
        .execute();
      expect(used).toHaveLength(1);
      const twice = await secondStep(await passwordStep(me.email), recoveryCodes[3]!);
      expect(twice.statusCode).toBe(401);
      expect((await call(s, 'GET', '/v1/me/two-factor')).json().recoveryCodesLeft).toBe(9);

      // New codes replace the old ones.
      vi.setSystemTime(Date.now() + 30_000);
      const fresh = await call(s, 'POST', '/v1/me/two-factor/recovery-codes', {
        currentPassword: PASSWORD,
        code: await code(secret),
      });
      expect(fresh.statusCode, fresh.body).toBe(200);
      const newCodes: string[] = fresh.json().recoveryCodes;
      expect((await secondStep(await passwordStep(me.email), recoveryCodes[0]!)).statusCode).toBe(401);

      const noPassword = await call(s, 'POST', '/v1/me/two-factor/disable', {
        currentPassword: 'wrong password!',
        code: newCodes[0],
      });
      expect(noPassword.statusCode).toBe(422);
      const off = await call(s, 'POST', '/v1/me/two-factor/disable', { currentPassword: PASSWORD, code: newCodes[0] });
      expect(off.statusCode, off.body).toBe(204);
      const row = await k()
        .selectFrom('users')
        .select(['totp_secret', 'totp_enrolled_at'])
        .where('id', '=', me.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ totp_secret: null, totp_enrolled_at: null });
      expect(await k().selectFrom('user_recovery_codes').select('id').where('user_id', '=', me.id).execute()).toEqual(
        [],
      );
      expect((await login(me.email, PASSWORD, freshIp())).headers.location).toBe('/app');
    });

    it('wrong codes are rate-limited: after 5, even the right code waits (429)', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T13:00:01.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret } = await enrol(s);
      vi.setSystemTime(Date.now() + 30_000);
      const pending = await passwordStep(me.email);
      for (const wrong of await wrongCodes(secret, 5)) expect((await secondStep(pending, wrong)).statusCode).toBe(401);
      const limited = await secondStep(pending, await code(secret));
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(cookieValue(limited, '__Host-fc_session')).toBeNull();
      // After the window, the right code passes (the pending sign-in itself lasts 10 minutes: sign in again).
      vi.setSystemTime(Date.now() + 16 * 60_000);
      expect((await secondStep(pending, await code(secret))).statusCode).toBe(401); // expired: too old
      const ok = await secondStep(await passwordStep(me.email), await code(secret));
      expect(ok.statusCode).toBe(303);
    });

    it('a pending sign-in dies with a password change and cannot be forged', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T14:00:01.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret } = await enrol(s);
      const pending = await passwordStep(me.email);
      const forged = `${pending.split('.')[0]}.${'A'.repeat(43)}`;
      vi.setSystemTime(Date.now() + 30_000);
      expect((await secondStep(forged, await code(secret))).body).toContain('took too long');
      const changed = await call(s, 'POST', '/v1/me/password', {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(changed.statusCode).toBe(200);
      const res = await secondStep(pending, await code(secret));
      expect(res.statusCode).toBe(401);
      expect(cookieValue(res, '__Host-fc_session')).toBeNull();
    });

    it('a password reset of a user with two-factor sign-in sets the password and still asks for the code', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-30T10:00:01.000Z'));
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret } = await enrol(s);
      // A reset link, as the reset email gives it (the mailbox is all it proves).
      const token = 'r'.repeat(43);
      await k()
        .insertInto('password_resets')
        .values({
          id: `pwr_${process.pid}_${++seq}`,
          workspace_id: ws.id,
          user_id: me.id,
          token_hash: crypto.createHash('sha256').update(token).digest('hex'),
          created_at: new Date().toISOString(),
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          used_at: null,
        })
        .execute();
      const done = await h.app.inject({
        method: 'POST',
        url: `/app/reset/${token}`,
        remoteAddress: freshIp(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ password: NEW_PASSWORD }).toString(),
      });
      expect(done.statusCode, done.body).toBe(303);
      expect(done.headers.location).toBe('/app/login/two-factor');
      expect(cookieValue(done, '__Host-fc_session')).toBeNull();
      const pending = cookieValue(done, '__Host-fc_2fa');
      expect(pending).not.toBeNull();
      // The password changed (every session signed out), and no session exists until the code is given.
      expect((await call(s, 'GET', '/v1/session')).statusCode).toBe(401);
      const open = await k()
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', me.id)
        .where('revoked_at', 'is', null)
        .execute();
      expect(open).toEqual([]);
      vi.setSystemTime(Date.now() + 30_000);
      const second = await secondStep(pending!, await code(secret));
      expect(second.statusCode, second.body).toBe(303);
      await sessionOf(second);
    });

    it('an owner requires two-factor sign-in: people without it can only set it up; the owner must have it first', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.parse('2026-11-29T15:00:01.000Z'));
      const ws = await h.workspace();
      const owner = await user(ws.id, 'owner');
      const editor = await user(ws.id, 'editor');
      const os = await signIn(owner.email);
      const early = await call(os, 'PUT', '/v1/workspace', { settings: { requireTwoFactor: true } });
      expect(early.statusCode).toBe(409);
      expect(early.json().code).toBe('invalid_state');
      await enrol(os);
      const on = await call(os, 'PUT', '/v1/workspace', { settings: { requireTwoFactor: true } });
      expect(on.statusCode, on.body).toBe(200);
      expect(on.json().settings.requireTwoFactor).toBe(true);

      const es = await signIn(editor.email);
      const info = await call(es, 'GET', '/v1/session');
      expect(info.json().twoFactor).toEqual({ enabled: false, required: true });
      const refused = await call(es, 'GET', '/v1/forms');
      expect(refused.statusCode).toBe(403);
      expect(refused.json().code).toBe('two_factor_required');
      expect((await call(es, 'PUT', '/v1/me', { name: 'x' })).statusCode).toBe(403);
      const { secret } = await enrol(es);
      expect((await call(es, 'GET', '/v1/forms')).statusCode).toBe(200);
      expect((await call(es, 'GET', '/v1/session')).json().twoFactor).toEqual({ enabled: true, required: true });
      vi.setSystemTime(Date.now() + 30_000);
      expect((await secondStep(await passwordStep(editor.email), await code(secret))).statusCode).toBe(303);
      // API keys are not concerned.
      expect((await h.call(ws.key, 'GET', '/v1/forms')).statusCode).toBe(200);
    });

    it('the audit log records a password change, two-factor turned on and off, by the person, with no secret', async () => {
      const ws = await h.workspace();
      const me = await user(ws.id);
      const s = await signIn(me.email);
      const { secret } = await enrol(s);
      const changed = await call(s, 'POST', '/v1/me/password', {
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(changed.statusCode, changed.body).toBe(200);
      const off = await call(s, 'POST', '/v1/me/two-factor/disable', {
        currentPassword: NEW_PASSWORD,
        code: await code(secret, Date.now() + 30_000),
      });
      expect(off.statusCode, off.body).toBe(204);
      const rows = await k()
        .selectFrom('audit_log')
        .selectAll()
        .where('workspace_id', '=', ws.id)
        .where('action', 'like', 'user.%')
        .orderBy('occurred_at')
        .execute();
      const mine = rows.filter((r) => r.target_id === me.id && r.action !== 'user.created');
      expect(mine.map((r) => r.action)).toEqual(['user.2fa_enabled', 'user.password_changed', 'user.2fa_disabled']);
      for (const r of mine) {
        expect(r).toMatchObject({ actor_type: 'user', actor_id: me.id, actor_label: me.email });
        expect(JSON.stringify(r)).not.toContain(NEW_PASSWORD);
      }
    });

    it("an API key has no profile; another workspace's session sees only its own person", async () => {
      const a = await h.workspace();
      const b = await h.workspace();
      const ua = await user(a.id);
      await user(b.id);
      expect((await h.call(a.key, 'PUT', '/v1/me', { name: 'Key' })).statusCode).toBe(403);
      expect((await h.call(a.key, 'POST', '/v1/me/two-factor/setup', { currentPassword: PASSWORD })).statusCode).toBe(
        403,
      );
      const s = await signIn(ua.email);
      const status = await call(s, 'GET', '/v1/me/two-factor');
      expect(status.statusCode).toBe(200);
      // The email of a person of another workspace is free here (addresses are unique per workspace).
      const bUser = await user(b.id, 'editor');
      const moved = await call(s, 'PUT', '/v1/me', { email: bUser.email, currentPassword: PASSWORD });
      expect(moved.statusCode).toBe(200);
      const bRow = await k().selectFrom('users').select('workspace_id').where('id', '=', bUser.id).executeTakeFirst();
      expect(bRow?.workspace_id).toBe(b.id);
    });
  },
  { publicUrl: 'https://console.example.test' },
);
