import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { senderHealth } from '../../src/sending/bounces/bounces.health.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';

/**
 * After sending (docs/bounces.md): the suppression list and every path that could re-subscribe a suppressed
 * address, bounces at send time, the soft-bounce limit, the circuit breaker, pause and resume, sender health.
 */
const silent = pino({ level: 'silent' });
let slugs = 0;

describeApi('bounces, suppression and the circuit breaker', (h) => {
  const sending = useSending(h, {
    workerId: 'bounces',
    leaseMs: 10_000,
    batchSize: 50,
    maxAttempts: 2,
    maxConnections: 4,
  });

  async function broadcastTo(ws: TestWorkspace, domain: string) {
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'News',
      from: `Acme <news@${domain}>`,
      emailContent: { subject: 'Hi', text: 'Hello {{ contact.email }}' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }
  const contact = (ws: TestWorkspace, email: string) =>
    h.db.kysely
      .selectFrom('contacts')
      .selectAll()
      .where('workspace_id', '=', ws.id)
      .where('email', '=', email)
      .executeTakeFirst();
  const bc = async (ws: TestWorkspace, id: string) => (await h.call(ws.key, 'GET', `/v1/broadcasts/${id}`)).json();

  describe('the suppression list', () => {
    it('MANUAL entries: add (201, then 200 for the same address), list with ?reason, get, lift (204, then 404); scopes; other workspaces see nothing', async () => {
      const ws = await h.workspace();
      const add = await h.call(ws.key, 'POST', '/v1/suppressions', {
        email: 'Spam.Trap@Example.com',
        reason: 'MANUAL',
        detail: 'a known trap',
      });
      expect(add.statusCode).toBe(201);
      expect(add.json()).toEqual({
        email: 'spam.trap@example.com',
        reason: 'MANUAL',
        deliveryId: null,
        broadcastId: null,
        detail: 'a known trap',
        createdAt: expect.any(String),
        source: null,
      });
      expect(
        (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'spam.trap@example.com', reason: 'MANUAL' }))
          .statusCode,
      ).toBe(200);
      expect(
        (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'x@example.com', reason: 'BOUNCED' })).statusCode,
      ).toBe(422);
      expect(
        (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'not an address', reason: 'MANUAL' })).statusCode,
      ).toBe(422);
      expect(
        (await h.call(ws.key, 'GET', '/v1/suppressions?reason=MANUAL'))
          .json()
          .data.map((s: { email: string }) => s.email),
      ).toEqual(['spam.trap@example.com']);
      expect((await h.call(ws.key, 'GET', '/v1/suppressions?reason=BOUNCED')).json().data).toEqual([]);
      expect(
        (await h.call(ws.key, 'GET', `/v1/suppressions/${encodeURIComponent('spam.trap@example.com')}`)).json().reason,
      ).toBe('MANUAL');
      const other = await h.workspace();
      expect((await h.call(other.key, 'GET', '/v1/suppressions')).json().data).toEqual([]);
      expect((await h.call(other.key, 'DELETE', '/v1/suppressions/spam.trap%40example.com')).statusCode).toBe(404);
      const reader = await h.key(ws, ['read:contacts']);
      expect((await h.call(reader, 'DELETE', '/v1/suppressions/spam.trap%40example.com')).statusCode).toBe(403);
      expect((await h.call(ws.key, 'DELETE', '/v1/suppressions/spam.trap%40example.com')).statusCode).toBe(204);
      expect((await h.call(ws.key, 'DELETE', '/v1/suppressions/spam.trap%40example.com')).statusCode).toBe(404);
    });

    it('a suppressed address gets no broadcast whatever its contact says, and the entry outlives the contact', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `supp${h.dbName}.test`);
      const id = await insertContact(h, ws, { email: 'kept@example.com' });
      await insertContact(h, ws, { email: 'mailed@example.com' });
      await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'kept@example.com', reason: 'MANUAL' });
      const got = (await h.call(ws.key, 'GET', `/v1/contacts/${id}`)).json();
      expect(got).toMatchObject({ status: 'SUBSCRIBED', suppressed: true });
      const b = await broadcastTo(ws, domain.name);
      expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b}/audience`)).json().count).toBe(1);
      await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
      await sending.drain();
      expect(sending.smtp.received.map((m) => m.to)).toEqual(['mailed@example.com']);
      expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${id}`)).statusCode).toBe(204);
      expect(
        (await h.call(ws.key, 'GET', '/v1/suppressions')).json().data.map((s: { email: string }) => s.email),
      ).toEqual(['kept@example.com']);
    });

    it('POST, PUT and imports cannot make a suppressed address SUBSCRIBED: the status stays and the answer says so', async () => {
      const ws = await h.workspace();
      const id = await insertContact(h, ws, { email: 'gone@example.com', status: 'BOUNCED' });
      await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'gone@example.com', reason: 'MANUAL' });
      const post = await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'gone@example.com',
        status: 'SUBSCRIBED',
        firstName: 'Gone',
      });
      expect(post.json()).toMatchObject({ status: 'BOUNCED', suppressed: true, firstName: 'Gone' });
      const put = await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { status: 'PENDING' });
      expect(put.json()).toMatchObject({ status: 'BOUNCED', suppressed: true });
      expect((await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { status: 'UNSUBSCRIBED' })).json()).toMatchObject({
        status: 'UNSUBSCRIBED',
        suppressed: true,
      });
      const csv = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
        payload: 'email,status\ngone@example.com,SUBSCRIBED\nfresh@example.com,SUBSCRIBED\n',
      });
      expect(csv.json()).toMatchObject({ status: 'COMPLETED', created: 1, updated: 1, suppressed: 1 });
      expect((await contact(ws, 'gone@example.com'))!.status).toBe('UNSUBSCRIBED');
      // Deleted, then re-imported: the new contact starts with its suppression's status.
      await h.call(ws.key, 'DELETE', `/v1/contacts/${id}`);
      const again = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
        payload: 'email\ngone@example.com\n',
      });
      expect(again.json()).toMatchObject({ created: 1, suppressed: 1 });
      expect((await contact(ws, 'gone@example.com'))!.status).toBe('UNSUBSCRIBED');
      // Lifted: the API may set it again.
      await h.call(ws.key, 'DELETE', '/v1/suppressions/gone%40example.com');
      expect(
        (await h.call(ws.key, 'POST', '/v1/contacts', { email: 'gone@example.com', status: 'SUBSCRIBED' })).json(),
      ).toMatchObject({ status: 'SUBSCRIBED', suppressed: false });
    });

    it('a sign-up (hosted form or API submission) of a suppressed address changes nothing until its owner confirms; confirming lifts it', async () => {
      const ws = await h.workspace();
      await verifiedDomain(h, ws, `resub${h.dbName}.test`);
      const slug = `bounce-${h.dbName}-${++slugs}`;
      const form = (
        await h.call(ws.key, 'POST', '/v1/forms', {
          name: 'N',
          type: 'SIGN_UP',
          slug,
          fieldMapping: { email: 'email' },
          settings: { doubleOptIn: true },
        })
      ).json();
      await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`);
      await insertContact(h, ws, { email: 'complainer@example.com', status: 'COMPLAINED' });
      await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'complainer@example.com', reason: 'MANUAL' });
      expect(
        (await h.call(ws.key, 'POST', `/v1/forms/${form.id}/submissions`, { email: 'complainer@example.com' }))
          .statusCode,
      ).toBeLessThan(300);
      await h.app.inject({
        method: 'POST',
        url: `/f/${slug}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'email=complainer%40example.com',
      });
      expect((await contact(ws, 'complainer@example.com'))!.status).toBe('COMPLAINED');
      await new ConfirmationSender(
        h.db,
        sending.mailer,
        'https://forms.example.test',
        silent as never,
        TEST_SECRET,
      ).sendDue();
      const mails = sending.smtp.received.filter((m) => m.to === 'complainer@example.com');
      expect(mails).toHaveLength(1); // one per hour, however often it signs up
      const token = String(mails[0]!.parsed.html).match(/\/confirm\/([A-Za-z0-9_-]+)/)![1]!;
      await h.app.inject({ method: 'POST', url: `/confirm/${token}` });
      expect((await contact(ws, 'complainer@example.com'))!.status).toBe('SUBSCRIBED');
      expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data).toEqual([]);
    });
  });

  describe('bounces at send time', () => {
    it('a hard bounce suppresses the address (BOUNCED, with the delivery and the reply); a block fails the delivery and leaves the contact', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `hard${h.dbName}.test`);
      for (const e of ['unknown@example.com', 'blocked@example.com', 'nouser@example.com'])
        await insertContact(h, ws, { email: e });
      sending.smtp.setPolicy((a) =>
        a.startsWith('unknown')
          ? { code: 550, message: '5.1.1 <unknown@example.com>: Recipient address rejected: User unknown' }
          : a.startsWith('blocked')
            ? { code: 554, message: '5.7.1 Message rejected: IP on blocklist' }
            : a.startsWith('nouser')
              ? { code: 550, message: 'No such user here' }
              : null,
      );
      const b = await broadcastTo(ws, domain.name);
      await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
      await sending.drain();
      expect((await contact(ws, 'unknown@example.com'))!.status).toBe('BOUNCED');
      expect((await contact(ws, 'nouser@example.com'))!.status).toBe('BOUNCED');
      expect((await contact(ws, 'blocked@example.com'))!.status).toBe('SUBSCRIBED');
      const entries = (await h.call(ws.key, 'GET', '/v1/suppressions?reason=BOUNCED')).json().data;
      expect(entries.map((s: { email: string }) => s.email).sort()).toEqual([
        'nouser@example.com',
        'unknown@example.com',
      ]);
      expect(entries.find((s: { email: string }) => s.email === 'unknown@example.com')).toMatchObject({
        broadcastId: b,
        deliveryId: expect.stringMatching(/^dlv_/),
        detail: expect.stringContaining('5.1.1'),
      });
      expect((await bc(ws, b)).stats).toMatchObject({ recipients: 3, sent: 0, bounced: 2, failed: 1 });
    });

    it('the soft-bounce limit: three or more consecutive broadcasts soft-bounced over at least SOFT_BOUNCE_DAYS (7) make the contact BOUNCED; a delivery between starts again', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `soft${h.dbName}.test`);
      await insertContact(h, ws, { email: 'full@example.com' });
      let full = true;
      sending.smtp.setPolicy((a) =>
        full && a.startsWith('full') ? { code: 452, message: '4.2.2 Mailbox full' } : null,
      );
      // The clock the test controls: only Date is faked (it runs on from where the test sets it), and only moves forward.
      const start = Date.now();
      vi.useFakeTimers({ toFake: ['Date'], now: start, shouldAdvanceTime: true });
      try {
        const sendOn = async (day: number) => {
          vi.setSystemTime(start + day * 86_400_000);
          const b = await broadcastTo(ws, domain.name);
          await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
          await sending.drain();
          return b;
        };
        // Three soft bounces within a day: a full mailbox for an afternoon is not a dead one.
        for (const day of [0, 0.2, 0.4]) {
          const b = await sendOn(day);
          expect((await bc(ws, b)).stats).toMatchObject({ softBounced: 1, failed: 1 });
          expect((await contact(ws, 'full@example.com'))!.status).toBe('SUBSCRIBED');
        }
        // A delivered broadcast between starts the count again.
        full = false;
        await sendOn(3);
        full = true;
        for (const day of [4, 6, 10]) await sendOn(day);
        // 3 soft bounces since the delivery, from day 4 to day 10: 6 days, not yet 7.
        expect((await contact(ws, 'full@example.com'))!.status).toBe('SUBSCRIBED');
        await sendOn(11.5);
        expect((await contact(ws, 'full@example.com'))!.status).toBe('BOUNCED');
      } finally {
        vi.useRealTimers();
      }
      expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data[0]).toMatchObject({
        email: 'full@example.com',
        reason: 'BOUNCED',
        detail: expect.stringContaining('consecutive broadcasts soft-bounced over at least 7 days'),
      });
    });
  });

  describe('pause, resume and the circuit breaker', () => {
    it('a broadcast to 2,000 recipients through a sink that hard-bounces 10% pauses itself, and resumes by hand', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `breaker${h.dbName}.test`);
      const rows = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ email: `r${i}@list.example` }));
      const imp = await h.app.inject({
        method: 'POST',
        url: '/v1/contacts/imports',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/x-ndjson' },
        payload: rows.join('\n'),
      });
      expect(imp.json().created).toBe(2000);
      sending.smtp.setPolicy((a) =>
        Number(/^r(\d+)@/.exec(a)?.[1]) % 10 === 0 ? { code: 550, message: '5.1.1 User unknown' } : null,
      );
      const b = await broadcastTo(ws, domain.name);
      await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
      await sending.drain(async () => (await bc(ws, b)).status === 'PAUSED');
      await sending.drain(); // the batches already claimed finish; nothing new starts
      const paused = await bc(ws, b);
      expect(paused.status).toBe('PAUSED');
      expect(paused.pausedReason).toMatch(/^hard-bounce rate .* passed the 5\.0% limit \(PAUSE_BOUNCE_RATE\)$/);
      const final = paused.stats.sent + paused.stats.bounced + paused.stats.failed;
      expect(final).toBeGreaterThanOrEqual(500);
      expect(paused.stats.queued).toBe(2000 - final);
      const sentWhilePaused = sending.smtp.received.length;
      await sending.drain();
      expect(sending.smtp.received.length).toBe(sentWhilePaused);
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`)).json().code).toBe('invalid_state');
      // The operator cleans up and resumes: the rest goes out, and the bounced stay suppressed.
      sending.smtp.setPolicy(() => null);
      const resumed = await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/resume`);
      expect(resumed.json()).toMatchObject({ status: 'SENDING', pausedReason: null });
      await sending.drain();
      const done = await bc(ws, b);
      expect(done.status).toBe('SENT');
      expect(done.stats.sent + done.stats.bounced).toBe(2000);
      expect(new Set(sending.smtp.received.map((m) => m.to)).size).toBe(sending.smtp.received.length); // nobody twice
    }, 120_000); // 2,000 messages: seconds alone, more on a loaded machine (no timing is asserted)

    it('pause and resume by hand; cancel from PAUSED; other moves are 409 invalid_state', async () => {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `pause${h.dbName}.test`);
      for (let i = 0; i < 30; i++) await insertContact(h, ws, { email: `p${i}@example.com` });
      const b = await broadcastTo(ws, domain.name);
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/pause`)).json().code).toBe('invalid_state'); // a DRAFT
      await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
      await sending.pipeline.materialize();
      const paused = await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/pause`);
      expect(paused.json()).toMatchObject({
        status: 'PAUSED',
        pausedReason: 'paused by hand',
        stats: { recipients: 30, queued: 30 },
      });
      await sending.drain();
      expect(sending.smtp.received).toHaveLength(0);
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/pause`)).json().code).toBe('invalid_state');
      expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${b}`, { name: 'x' })).json().code).toBe(
        'broadcast_not_editable',
      );
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/resume`)).json()).toMatchObject({
        status: 'SENDING',
        stats: { queued: 30 },
      });
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/resume`)).json().code).toBe('invalid_state');
      await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/pause`);
      const canceled = await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/cancel`);
      expect(canceled.json().status).toBe('CANCELED');
      await sending.drain();
      expect(sending.smtp.received).toHaveLength(0);
      const rows = await h.db.kysely.selectFrom('deliveries').select('status').where('broadcast_id', '=', b).execute();
      expect(rows.map((r) => r.status)).toEqual(Array(30).fill('CANCELED'));
    });
  });

  it('sender health: hard-bounce and complaint rates over 7 and 30 days, with their thresholds', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `health${h.dbName}.test`);
    for (let i = 0; i < 9; i++) await insertContact(h, ws, { email: `h${i}@example.com` });
    await insertContact(h, ws, { email: 'dead@example.com' });
    sending.smtp.setPolicy((a) => (a.startsWith('dead') ? { code: 550, message: '5.1.1 User unknown' } : null));
    const b = await broadcastTo(ws, domain.name);
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b}/send`);
    await sending.drain();
    const health = (await h.call(ws.key, 'GET', '/v1/workspace/health')).json();
    expect(health.windows.map((w: { days: number }) => w.days)).toEqual([7, 30]);
    expect(health.windows[0]).toMatchObject({
      sent: 9,
      hardBounces: 1,
      complaints: 0,
      hardBounceRate: { value: 0.1, threshold: 0.02, status: 'critical' },
      complaintRate: { value: 0, threshold: 0.003, status: 'ok' },
    });
    // The windows apart (counted in one read): ten days on, the sends are in the 30-day window only; forty, in neither.
    const day = 86_400_000;
    const [week, month] = await senderHealth(h.db.kysely, ws.id, Date.now() + 10 * day);
    expect([week, month].map((w) => [w!.sent, w!.hardBounces, w!.hardBounceRate.value])).toEqual([
      [0, 0, 0],
      [9, 1, 0.1],
    ]);
    expect((await senderHealth(h.db.kysely, ws.id, Date.now() + 40 * day)).map((w) => w.sent)).toEqual([0, 0]);
    const other = await h.workspace();
    expect((await h.call(other.key, 'GET', '/v1/workspace/health')).json().windows[1]).toMatchObject({
      sent: 0,
      hardBounces: 0,
    });
  });
});
