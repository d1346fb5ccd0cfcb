import { afterEach, expect, it, vi } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import type { Received } from '../helpers/smtp.js';
import { useSending } from '../helpers/sending.js';

/** POST /v1/broadcasts/{id}/resend (contract §18; docs/sending.md, "Resend to non-openers"). */

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const APPLE_MPP = 'Mozilla/5.0';
// With an image: a short HTML part without one gets no open pixel (docs/tracking.md, "Opens").
const HTML = `<html><body>
<p><img src="https://images.example/logo.png" alt="Shop" width="120" height="40"></p>
<p>Hi {{ contact.firstName }}, <a href="https://shop.example/sale">the sale</a></p>
<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</body></html>`;

afterEach(() => {
  vi.useRealTimers();
});

function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

describeApi('broadcasts: resend to non-openers and non-clickers', (h) => {
  const sending = useSending(h, { workerId: 'resend-worker' });

  const pathOf = (url: string) => new URL(url).pathname;
  const pixelOf = (m: Received) => pathOf(/src="([^"]+\/t\/o\/[^"]+)"/.exec(String(m.parsed.html))![1]!);
  const linkOf = (m: Received) => pathOf(/href="([^"]+\/t\/c\/[^"]+)"/.exec(String(m.parsed.html))![1]!);
  const hit = (path: string, ua: string) => h.app.inject({ method: 'GET', url: path, headers: { 'user-agent': ua } });

  async function sendAndDrain(ws: TestWorkspace, id: string): Promise<Received[]> {
    const before = sending.smtp.received.length;
    const sent = await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/send`);
    expect(sent.statusCode, sent.body).toBe(202);
    await sending.drain();
    return sending.smtp.received.slice(before);
  }

  /** Seven contacts, a broadcast sent to five of them, and what each did with it. */
  async function sentBroadcast(opts: { tracking?: { opens: boolean; clicks: boolean } } = {}) {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `r${ws.id.slice(-8).toLowerCase()}.test`);
    const ids: Record<string, string> = {};
    for (const n of ['r0', 'r1', 'r2', 'r3', 'r4'])
      ids[n] = await insertContact(h, ws, { email: `${n}@example.com`, firstName: n });
    const created = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'November',
      from: `News <news@${domain.name}>`,
      replyTo: 'hello@example.com',
      emailContent: { subject: 'Hello {{ contact.firstName }}', html: HTML, text: 'Hello', previewText: 'Hi' },
      ...(opts.tracking ? { tracking: opts.tracking } : {}),
    });
    expect(created.statusCode, created.body).toBe(201);
    const original = created.json();
    const received = await sendAndDrain(ws, original.id);
    expect(received).toHaveLength(5);
    const to = (n: string) => received.find((m) => m.to === `${n}@example.com`)!;
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${original.id}`)).json().status).toBe('SENT');
    return { ws, domain, ids, original, to };
  }

  it('NON_OPENERS: a DRAFT with the same content; sent, it reaches exactly the recipients without a human open or click at the resend', async () => {
    const { ws, ids, original, to } = await sentBroadcast();
    // r0 opens (a person, through Gmail's proxy); r1 only by Apple Mail Privacy Protection (a machine);
    // r2 clicks a minute later (a person: the pixel was blocked, the click says it was read); r3, r4 do nothing.
    expect((await hit(pixelOf(to('r0')), GMAIL)).statusCode).toBe(200);
    expect((await hit(pixelOf(to('r1')), APPLE_MPP)).statusCode).toBe(200);
    advanceClock(60_000);
    expect((await hit(linkOf(to('r2')), CHROME)).statusCode).toBe(302);
    // r5 joins after the original was sent: never a recipient of it.
    await insertContact(h, ws, { email: 'r5@example.com', firstName: 'r5' });

    advanceClock(1_000);
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${original.id}/resend`, {
      to: 'NON_OPENERS',
      subject: 'In case you missed it, {{ contact.firstName }}',
    });
    expect(res.statusCode, res.body).toBe(201);
    const resend = res.json();
    expect(res.headers.location).toBe(`/v1/broadcasts/${resend.id}`);
    expect(resend).toMatchObject({
      status: 'DRAFT',
      name: 'November (resend to non-openers)',
      from: original.from,
      replyTo: 'hello@example.com',
      topicId: null,
      segmentId: null,
      tracking: { opens: true, clicks: true },
      emailContent: { ...original.emailContent, subject: 'In case you missed it, {{ contact.firstName }}' },
      resendOf: { broadcastId: original.id, to: 'NON_OPENERS', asOf: resend.createdAt },
    });
    expect(resend.id).not.toBe(original.id);
    const got = await h.call(ws.key, 'GET', `/v1/broadcasts/${resend.id}`);
    expect(got.json().resendOf).toEqual(resend.resendOf);
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${original.id}`)).json().resendOf).toBeUndefined();
    // Its audience, before sending: r1, r3, r4.
    const audience = (await h.call(ws.key, 'GET', `/v1/broadcasts/${resend.id}/audience`)).json();
    expect(audience.count).toBe(3);

    // After the resend: r4 opens (the list was frozen at the resend: r4 still gets it); r3 unsubscribes (obeyed at send).
    advanceClock(60_000);
    expect((await hit(pixelOf(to('r4')), GMAIL)).statusCode).toBe(200);
    const unsub = await h.call(ws.key, 'PUT', `/v1/contacts/${ids.r3}`, { status: 'UNSUBSCRIBED' });
    expect(unsub.statusCode, unsub.body).toBe(200);

    const received = await sendAndDrain(ws, resend.id);
    expect(received.map((m) => m.to).sort()).toEqual(['r1@example.com', 'r4@example.com']);
    expect(received.map((m) => m.parsed.subject).sort()).toEqual([
      'In case you missed it, r1',
      'In case you missed it, r4',
    ]);
    const deliveries = await h.db.kysely
      .selectFrom('deliveries')
      .select(['email', 'status'])
      .where('broadcast_id', '=', resend.id)
      .orderBy('email')
      .execute();
    expect(deliveries).toEqual([
      { email: 'r1@example.com', status: 'SENT' },
      { email: 'r4@example.com', status: 'SENT' },
    ]);
    // The audit log has it, on the original.
    const audit = await h.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('workspace_id', '=', ws.id)
      .where('action', '=', 'broadcast.resent')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target_id: original.id });
  });

  it('NON_CLICKERS: every recipient without a human click, openers included; the subject stays when not given', async () => {
    const { ws, original, to } = await sentBroadcast();
    expect((await hit(pixelOf(to('r0')), GMAIL)).statusCode).toBe(200);
    advanceClock(60_000);
    expect((await hit(linkOf(to('r2')), CHROME)).statusCode).toBe(302);
    advanceClock(1_000);
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${original.id}/resend`, { to: 'NON_CLICKERS' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      name: 'November (resend to non-clickers)',
      emailContent: { subject: 'Hello {{ contact.firstName }}' },
      resendOf: { to: 'NON_CLICKERS' },
    });
    const received = await sendAndDrain(ws, res.json().id);
    expect(received.map((m) => m.to).sort()).toEqual([
      'r0@example.com',
      'r1@example.com',
      'r3@example.com',
      'r4@example.com',
    ]);
  });

  it('bad input: not SENT is 409 invalid_state; another `to`, a bad subject or an untracked original is 422; another workspace is 404; nothing is created', async () => {
    const { ws, original } = await sentBroadcast({ tracking: { opens: false, clicks: true } });
    const count = async () =>
      Number(
        (
          await h.db.kysely
            .selectFrom('broadcasts')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', ws.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const draft = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Draft' })).json();
    const post = (id: string, body: unknown, key = ws.key) => h.call(key, 'POST', `/v1/broadcasts/${id}/resend`, body);

    const notSent = await post(draft.id, { to: 'NON_OPENERS' });
    expect(notSent.statusCode).toBe(409);
    expect(notSent.json().code).toBe('invalid_state');
    await h.db.kysely.updateTable('broadcasts').set({ status: 'SENDING' }).where('id', '=', draft.id).execute();
    const sendingNow = await post(draft.id, { to: 'NON_CLICKERS' });
    expect(sendingNow.statusCode).toBe(409);
    expect(sendingNow.json().code).toBe('invalid_state');
    await h.db.kysely.updateTable('broadcasts').set({ status: 'DRAFT' }).where('id', '=', draft.id).execute();

    for (const body of [{ to: 'EVERYONE' }, {}, { to: 'NON_OPENERS', extra: 1 }, { to: 'NON_OPENERS', subject: '' }]) {
      const r = await post(original.id, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(422);
      expect(r.json().code).toBe('validation_failed');
    }
    const badLiquid = await post(original.id, { to: 'NON_CLICKERS', subject: 'Hi {{ contact.firstName ' });
    expect(badLiquid.statusCode).toBe(422);
    expect(badLiquid.json().errors[0].path).toBe('/subject');
    // The original did not track opens: nobody would count as having opened it.
    const untracked = await post(original.id, { to: 'NON_OPENERS' });
    expect(untracked.statusCode).toBe(422);
    expect(untracked.json().errors).toEqual([{ path: '/to', message: expect.stringContaining('did not track opens') }]);

    const other = await h.workspace();
    expect((await post(original.id, { to: 'NON_CLICKERS' }, other.key)).statusCode).toBe(404);
    expect((await post('bc_unknown', { to: 'NON_CLICKERS' })).statusCode).toBe(404);
    const readOnly = await h.key(ws, ['read:broadcasts']);
    expect((await post(original.id, { to: 'NON_CLICKERS' }, readOnly)).statusCode).toBe(403);

    expect(await count()).toBe(before + 1); // the draft made above, nothing else
    expect((await post(original.id, { to: 'NON_CLICKERS' })).statusCode).toBe(201);
  });
});
