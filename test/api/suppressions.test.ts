import { beforeAll, describe, expect, it } from 'vitest';
import { AutomationEngine, DEFAULT_ENGINE } from '../../src/integrations/automations/automations.engine.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';

/**
 * The suppression list as the console's page uses it (docs/bounces.md, "The suppression list"): the address search
 * (`q`), the date filters (`since`, `before`), many addresses at once (POST /v1/suppressions/bulk), and `source`, what
 * sent the message an entry or a contact's event came from: a broadcast, or an automation's send step (whose message
 * is a broadcast row the broadcasts API hides, so its `broadcastId` alone led the console to a 404).
 */
describeApi('the suppression list: search, dates, bulk add, message sources', (h) => {
  const sending = useSending(h, { workerId: 'suppressions-test' });
  let engine: AutomationEngine;
  beforeAll(() => {
    engine = new AutomationEngine(
      h.db,
      new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: false, allowPrivate: false }),
      {
        ...DEFAULT_ENGINE,
        workerId: 'suppressions-engine',
        clock: () => Date.now(),
      },
    );
  });

  const emails = (res: { json(): { data: { email: string }[] } }) => res.json().data.map((s) => s.email);
  const rows = (ws: TestWorkspace) =>
    h.db.kysely
      .selectFrom('suppressions')
      .select(['email', 'reason', 'detail', 'created_at'])
      .where('workspace_id', '=', ws.id)
      .orderBy('email')
      .execute();

  describe('search and filters', () => {
    it('?q= matches a case-insensitive part of the address, its % and _ literally; with reason and paging', async () => {
      const ws = await h.workspace();
      for (const email of ['ana@shop.example', 'bo_b@shop.example', 'bob@other.example', 'cy%d@other.example'])
        expect((await h.call(ws.key, 'POST', '/v1/suppressions', { email, reason: 'MANUAL' })).statusCode).toBe(201);
      expect(emails(await h.call(ws.key, 'GET', '/v1/suppressions?q=%40SHOP.example'))).toEqual([
        'bo_b@shop.example',
        'ana@shop.example',
      ]);
      // `_` and `%` are not wildcards: bo_b matches, bob does not; cy%d matches only itself.
      expect(emails(await h.call(ws.key, 'GET', '/v1/suppressions?q=o_b'))).toEqual(['bo_b@shop.example']);
      expect(emails(await h.call(ws.key, 'GET', `/v1/suppressions?q=${encodeURIComponent('%')}`))).toEqual([
        'cy%d@other.example',
      ]);
      expect(emails(await h.call(ws.key, 'GET', '/v1/suppressions?q=nobody'))).toEqual([]);
      expect(emails(await h.call(ws.key, 'GET', '/v1/suppressions?q=shop&reason=BOUNCED'))).toEqual([]);
      // Pages of a search: the cursor carries on under the same filter.
      const first = (await h.call(ws.key, 'GET', '/v1/suppressions?q=example&limit=3')).json();
      expect(first.data).toHaveLength(3);
      const second = (
        await h.call(ws.key, 'GET', `/v1/suppressions?q=example&limit=3&cursor=${first.nextCursor}`)
      ).json();
      expect(second).toMatchObject({ data: [{ email: 'ana@shop.example' }], nextCursor: null });
      const bad = await h.call(ws.key, 'GET', '/v1/suppressions?q=');
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors[0].path).toBe('/query/q');
    });

    it('?since= and ?before= keep the entries added in that time (at or after, before)', async () => {
      const ws = await h.workspace();
      for (const [email, at] of [
        ['old@example.com', '2026-01-10T10:00:00.000Z'],
        ['mid@example.com', '2026-03-01T00:00:00.000Z'],
        ['new@example.com', '2026-06-30T23:59:59.999Z'],
      ] as const) {
        await h.call(ws.key, 'POST', '/v1/suppressions', { email, reason: 'MANUAL' });
        await h.db.kysely
          .updateTable('suppressions')
          .set({ created_at: at })
          .where('workspace_id', '=', ws.id)
          .where('email', '=', email)
          .execute();
      }
      expect(emails(await h.call(ws.key, 'GET', '/v1/suppressions?since=2026-03-01T00:00:00Z'))).toEqual([
        'new@example.com',
        'mid@example.com',
      ]);
      expect(
        emails(
          await h.call(ws.key, 'GET', `/v1/suppressions?before=${encodeURIComponent('2026-03-01T01:00:00+01:00')}`),
        ),
      ).toEqual(['old@example.com']);
      expect(
        emails(await h.call(ws.key, 'GET', '/v1/suppressions?since=2026-02-01T00:00:00Z&before=2026-06-01T00:00:00Z')),
      ).toEqual(['mid@example.com']);
      const bad = await h.call(ws.key, 'GET', '/v1/suppressions?since=yesterday');
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors[0].path).toBe('/query/since');
    });
  });

  describe('POST /v1/suppressions/bulk', () => {
    it('adds the valid addresses, keeps those already there as they were, reports the invalid ones, counts a repeat once', async () => {
      const ws = await h.workspace();
      await h.call(ws.key, 'POST', '/v1/suppressions', {
        email: 'kept@example.com',
        reason: 'MANUAL',
        detail: 'first',
      });
      const contact = await insertContact(h, ws, { email: 'lin@example.com' });
      const res = await h.call(ws.key, 'POST', '/v1/suppressions/bulk', {
        emails: [' Lin@Example.com', 'new@example.com', 'not an address', 'KEPT@example.com', 'new@EXAMPLE.com', ''],
        detail: 'pasted list',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        added: ['lin@example.com', 'new@example.com'],
        alreadySuppressed: ['kept@example.com'],
        invalid: [
          { index: 2, email: 'not an address', message: 'is not a valid email address' },
          { index: 5, email: '', message: 'is not a valid email address' },
        ],
      });
      expect(await rows(ws)).toEqual([
        expect.objectContaining({ email: 'kept@example.com', reason: 'MANUAL', detail: 'first' }),
        expect.objectContaining({ email: 'lin@example.com', reason: 'MANUAL', detail: 'pasted list' }),
        expect.objectContaining({ email: 'new@example.com', reason: 'MANUAL', detail: 'pasted list' }),
      ]);
      // The contact of an address added is suppressed, as with one address at a time.
      expect((await h.call(ws.key, 'GET', `/v1/contacts/${contact}`)).json().suppressed).toBe(true);
    });

    it('refuses an empty list, more than 1000 addresses, another reason and unknown fields, adding nothing', async () => {
      const ws = await h.workspace();
      const refused = async (body: unknown, path: string) => {
        const res = await h.call(ws.key, 'POST', '/v1/suppressions/bulk', body);
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().code).toBe('validation_failed');
        expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
      };
      await refused({ emails: [] }, '/emails');
      await refused({ emails: Array.from({ length: 1001 }, (_, i) => `a${i}@example.com`) }, '/emails');
      await refused({ emails: ['a@example.com'], reason: 'BOUNCED' }, '/reason');
      await refused({ emails: ['a@example.com'], status: 'x' }, '/status');
      expect(await rows(ws)).toEqual([]);
      // 1000 is allowed, in one go.
      const many = await h.call(ws.key, 'POST', '/v1/suppressions/bulk', {
        emails: Array.from({ length: 1000 }, (_, i) => `m${i}@example.com`),
        reason: 'MANUAL',
      });
      expect(many.statusCode).toBe(200);
      expect(many.json().added).toHaveLength(1000);
      expect(await rows(ws)).toHaveLength(1000);
    }, 120_000);

    it('needs write:contacts; another workspace neither sees nor lifts the entries (404)', async () => {
      const ws = await h.workspace();
      const other = await h.workspace('Other');
      const reader = await h.key(ws, ['read:contacts']);
      expect((await h.call(reader, 'POST', '/v1/suppressions/bulk', { emails: ['r@example.com'] })).json().code).toBe(
        'insufficient_scope',
      );
      const writer = await h.key(ws, ['write:contacts']);
      expect(
        (await h.call(writer, 'POST', '/v1/suppressions/bulk', { emails: ['mine@example.com'] })).json().added,
      ).toEqual(['mine@example.com']);
      expect(emails(await h.call(reader, 'GET', '/v1/suppressions?q=mine'))).toEqual(['mine@example.com']);
      expect(emails(await h.call(other.key, 'GET', '/v1/suppressions?q=mine'))).toEqual([]);
      expect((await h.call(other.key, 'GET', '/v1/suppressions/mine%40example.com')).statusCode).toBe(404);
      expect((await h.call(other.key, 'DELETE', '/v1/suppressions/mine%40example.com')).statusCode).toBe(404);
      // The other workspace's own bulk add of the same address is its own entry.
      expect(
        (await h.call(other.key, 'POST', '/v1/suppressions/bulk', { emails: ['mine@example.com'] })).json().added,
      ).toEqual(['mine@example.com']);
      expect(await rows(ws)).toHaveLength(1);
    });
  });

  describe('source: what sent the message', () => {
    it("names the broadcast, or the automation and send step of an automation's email, on entries and a contact's activity", async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `sources-${h.dbName}.test`);
      const from = `News <news@sources-${h.dbName}.test>`;
      sending.smtp.setPolicy((a) => (a.startsWith('gone') ? { code: 550, message: '5.1.1 User unknown' } : null));
      const ada = await insertContact(h, ws, { email: 'ada@example.com' });
      const gone = await insertContact(h, ws, { email: 'gone@example.com' });
      const goneToo = await insertContact(h, ws, { email: 'gone-too@example.com' });

      // An automation (api trigger) whose send step mails ada and gone.
      const automation = (
        await h.call(ws.key, 'POST', '/v1/automations', {
          name: 'Welcome series',
          trigger: { type: 'api' },
          steps: [{ id: 'hello', type: 'send', from, emailContent: { subject: 'Hi', html: '<p>Hi</p>' } }],
        })
      ).json();
      expect((await h.call(ws.key, 'POST', `/v1/automations/${automation.id}/activate`)).statusCode).toBe(200);
      for (const contactId of [ada, gone])
        expect(
          (await h.call(ws.key, 'POST', `/v1/automations/${automation.id}/trigger`, { contactId })).statusCode,
        ).toBe(202);
      for (let i = 0; i < 100 && (await engine.runDue()); i++);
      await sending.drain();

      const sent = (await h.call(ws.key, 'GET', `/v1/contacts/${ada}/activity?type=email.sent`)).json().data;
      expect(sent).toHaveLength(1);
      const message = sent[0].broadcastId as string;
      // The message's broadcast row is hidden from the broadcasts API: a link to it would be a 404.
      expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${message}`)).statusCode).toBe(404);
      const automationSource = {
        type: 'automation',
        broadcastId: message,
        automationId: automation.id,
        stepId: 'hello',
        name: 'Welcome series',
      };
      expect(sent[0].source).toEqual(automationSource);
      // Events that name no message have none.
      const created = (await h.call(ws.key, 'POST', '/v1/contacts', { email: 'new@example.com' })).json();
      const own = (await h.call(ws.key, 'GET', `/v1/contacts/${created.id}/activity`)).json().data;
      expect(own.length).toBeGreaterThan(0);
      expect(own.every((e: any) => e.source === null)).toBe(true);

      // gone bounced: its entry names the automation's message.
      expect((await h.call(ws.key, 'GET', '/v1/suppressions/gone%40example.com')).json()).toMatchObject({
        reason: 'BOUNCED',
        broadcastId: message,
        source: automationSource,
      });

      // A broadcast's bounce names the broadcast.
      const bc = (
        await h.call(ws.key, 'POST', '/v1/broadcasts', {
          name: 'November news',
          from,
          emailContent: { subject: 'News', text: 'News' },
        })
      ).json();
      await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/send`);
      await sending.drain();
      const list = (await h.call(ws.key, 'GET', '/v1/suppressions?reason=BOUNCED')).json().data;
      expect(list.find((s: any) => s.email === 'gone-too@example.com').source).toEqual({
        type: 'broadcast',
        broadcastId: bc.id,
        automationId: null,
        stepId: null,
        name: 'November news',
      });
      expect(
        (await h.call(ws.key, 'GET', `/v1/contacts/${goneToo}/activity?type=email.bounced`)).json().data[0].source,
      ).toMatchObject({ type: 'broadcast', name: 'November news' });
      // A MANUAL entry names no message.
      await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'manual@example.com', reason: 'MANUAL' });
      expect((await h.call(ws.key, 'GET', '/v1/suppressions/manual%40example.com')).json().source).toBeNull();

      // An automation that ran cannot be deleted (it keeps its runs and stats), so `name` is null only for a deleted
      // broadcast's rows, which never sent; the name is read now: a renamed automation shows its new name.
      const renamed = await h.call(ws.key, 'PUT', `/v1/automations/${automation.id}`, { name: 'Welcome, renamed' });
      expect(renamed.statusCode, renamed.body).toBe(200);
      // (ada got the broadcast since: its activity names both messages, each by its own source.)
      const sources = (await h.call(ws.key, 'GET', `/v1/contacts/${ada}/activity?type=email.sent`))
        .json()
        .data.map((e: any) => e.source);
      expect(sources).toEqual([
        expect.objectContaining({ type: 'broadcast', broadcastId: bc.id }),
        { ...automationSource, name: 'Welcome, renamed' },
      ]);

      // Another workspace's key does not reach the contact's activity or the entry.
      const other = await h.workspace('Other');
      expect((await h.call(other.key, 'GET', `/v1/contacts/${ada}/activity`)).statusCode).toBe(404);
      expect((await h.call(other.key, 'GET', '/v1/suppressions/gone%40example.com')).statusCode).toBe(404);
    });
  });
});
