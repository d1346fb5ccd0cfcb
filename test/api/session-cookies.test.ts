/**
 * Issue 29 item 14: the console's cookies are `__Host-` prefixed where the origin allows it (https: Secure, Path=/, no
 * Domain), keep working on http:// loopback without the prefix, and a duplicate cookie of the session's name (planted
 * for a parent domain or another path, and sent first) cannot sign the user out nor replace their session.
 */
import type { LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

const PASSWORD = 'correct horse battery';
let seq = 0;

for (const origin of ['https://console.example.test', 'http://127.0.0.1:3000']) {
  const secure = origin.startsWith('https:');
  const cookieName = secure ? '__Host-fc_session' : 'fc_session';
  describeApi(
    `session cookies on ${origin}`,
    (h) => {
      async function signIn(role = 'owner'): Promise<{ token: string; cookie: string; csrf: string; set: string[] }> {
        const { workspace } = await h.app.services.workspaces.createWithAdminKey('Acme');
        const email = `cookie.${process.pid}.${++seq}@people.example`;
        await h.app.services.users.create(workspace.id, { email, role, password: PASSWORD });
        const res = await h.app.inject({
          method: 'POST',
          url: '/app/login',
          remoteAddress: `10.50.0.${seq}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
        });
        expect(res.statusCode, res.body).toBe(303);
        const set = ([] as string[]).concat(res.headers['set-cookie'] as string | string[]);
        const token = new RegExp(`^${cookieName}=([A-Za-z0-9_-]{43});`).exec(set[0]!)?.[1];
        expect(token, set[0]).toBeDefined();
        const cookie = `${cookieName}=${token}`;
        const info = await get('/v1/session', cookie);
        expect(info.statusCode, info.body).toBe(200);
        return { token: token!, cookie, csrf: info.json().csrfToken, set };
      }
      const get = (url: string, cookie: string): Promise<LightMyRequestResponse> =>
        h.app.inject({ method: 'GET', url, headers: { cookie } });

      it(
        secure
          ? 'https: the session and device cookies are __Host- prefixed (Secure, Path=/, no Domain); the bare name is not read'
          : 'http:// loopback: the bare names, without Secure (the prefix needs it); sign-in works',
        async () => {
          const s = await signIn();
          for (const line of s.set) {
            expect(line).toMatch(secure ? /^__Host-fc_(session|device)=/ : /^fc_(session|device)=/);
            expect(line).toContain('Path=/;');
            expect(line).not.toMatch(/Domain=/i);
            if (secure) expect(line).toMatch(/; Secure$/);
            else expect(line).not.toContain('Secure');
          }
          if (secure) expect((await get('/v1/session', `fc_session=${s.token}`)).statusCode).toBe(401);
          const out = await h.app.inject({
            method: 'POST',
            url: '/app/logout',
            headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
          });
          expect(out.statusCode).toBe(303);
          expect(String(out.headers['set-cookie'])).toMatch(
            new RegExp(`^${cookieName}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}$`),
          );
          expect((await get('/v1/session', s.cookie)).statusCode).toBe(401);
        },
      );

      it('a planted duplicate sent first (garbage, dead, or another valid session) neither signs the user out nor takes their place', async () => {
        const victim = await signIn();
        const attacker = await signIn();
        const dead = await signIn();
        await h.app.inject({
          method: 'POST',
          url: '/app/logout',
          headers: { cookie: dead.cookie, 'x-csrf-token': dead.csrf },
        });
        for (const planted of [`${cookieName}=garbage`, `${cookieName}=${'A'.repeat(43)}`, dead.cookie]) {
          const cookie = `${planted}; ${victim.cookie}`;
          const info = await get('/v1/session', cookie);
          expect(info.statusCode, planted).toBe(200);
          expect(info.json().csrfToken).toBe(victim.csrf);
          expect((await get('/app/login', cookie)).statusCode).toBe(303); // signed in: sent on to the console
        }
        // Another live session planted first: a write goes to the session whose CSRF token it carries.
        const both = `${attacker.cookie}; ${victim.cookie}`;
        const mine = await h.app.inject({
          method: 'DELETE',
          url: '/v1/session/sessions/ses_00000000000000000000000000',
          headers: { cookie: both, 'x-csrf-token': victim.csrf },
        });
        expect(mine.statusCode).toBe(404); // checked as the victim's session: not one of theirs
        expect(
          (
            await h.app.inject({
              method: 'DELETE',
              url: '/v1/session/sessions/ses_00000000000000000000000000',
              headers: { cookie: both, 'x-csrf-token': 'nope' },
            })
          ).json().code,
        ).toBe('csrf_failed');
        // Signing out with both cookies ends the session whose token was sent, not the planted one.
        const out = await h.app.inject({
          method: 'POST',
          url: '/app/logout',
          headers: { cookie: both, 'x-csrf-token': victim.csrf },
        });
        expect(out.statusCode).toBe(303);
        expect((await get('/v1/session', victim.cookie)).statusCode).toBe(401);
        expect((await get('/v1/session', attacker.cookie)).statusCode).toBe(200);
      });
    },
    { publicUrl: origin },
  );
}
