import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mergePacing, DEFAULT_PACING } from '../../src/sending/deliveries/pacing.config.js';
import { resolverLookup } from '../../src/mail-setup/domains/domains.dns.js';
import { buildApp } from '../../src/app.js';
import { classifySendError } from '../../src/mail/outcome.js';
import { createMailer } from '../../src/mail/transport.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { startDnsServer } from '../helpers/dns.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';
import { startSmtpServer } from '../helpers/smtp.js';

/**
 * Pacing per receiving domain and several relays (docs/sending.md), for real: recipient domains grouped by the MX
 * a DNS server on loopback answers, an SMTP server on loopback that throttles one domain ("421 4.7.0 Try again
 * later"), relays that refuse connections or will not greet. No assertion on time: what is checked is what arrived,
 * in which order relative to the other domains, and what the deliveries and the pacer recorded.
 */
let dns: Awaited<ReturnType<typeof startDnsServer>>;
beforeAll(async () => {
  dns = await startDnsServer();
  // Two domains on one provider's MX hosts (grouped: "bigmail"), and two with MX hosts of their own.
  for (const d of ['bulk-a.example', 'bulk-b.example', 'quota-a.example', 'quota-b.example'])
    dns.mx.set(d, ['mx1.bigmail.example', 'mx2.bigmail.example']);
  dns.mx.set('slow.example', ['mx.slow.example']);
  dns.mx.set('other.example', ['mx.other.example']);
  dns.mx.set('stuck.example', ['mx.stuck.example']);
});
afterAll(async () => {
  await dns?.close();
});

const pacing = mergePacing(DEFAULT_PACING, {
  groups: { bigmail: { mx: ['*.bigmail.example'], concurrency: 2, rate: 50 } },
  // Short pauses and a high floor: the throttled domain is waited out in a moment.
  adaptive: { pauseMs: 30, minRate: 20, recoverEveryMs: 60_000 },
});

describeApi('pacing per receiving domain', (h) => {
  const sending = useSending(h, {
    // A long window: a loaded machine's slow sends never push the other domains out of the first batch.
    workerId: 'pacing',
    leaseMs: 30_000,
    batchSize: 100,
    maxConnections: 6,
    pacing,
    pacingWindowMs: 20_000,
    // The MX lookups go to the DNS server above (started before any send).
    mxLookup: (name) => resolverLookup([dns.address], 2_000).mx(name),
  });

  async function broadcastTo(ws: TestWorkspace, emails: string[]) {
    const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
    for (const email of emails) await insertContact(h, ws, { email });
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'News',
      from: `Acme <news@${domain.name}>`,
      emailContent: { subject: 'Hi', text: 'Hello' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }
  const deliveries = (broadcastId: string) =>
    h.db.kysely
      .selectFrom('deliveries')
      .select(['email', 'status', 'attempts', 'soft_bounced_at', 'bounce_class', 'last_error'])
      .where('broadcast_id', '=', broadcastId)
      .execute();
  const pace = (key: string) => sending.pipeline.pacer.snapshot().find((p) => p.key === key);
  const at = (list: string[], re: RegExp) => list.map((to, i) => (re.test(to) ? i : -1)).filter((i) => i >= 0);

  it('a domain that throttles is slowed down and waited out, each message arriving once; the other domains keep their pace', async () => {
    const ws = await h.workspace();
    const emails = [
      ...Array.from({ length: 8 }, (_, i) => `s${i}@slow.example`),
      ...Array.from({ length: 10 }, (_, i) => `o${i}@other.example`),
      ...Array.from({ length: 6 }, (_, i) => `a${i}@bulk-a.example`),
      ...Array.from({ length: 6 }, (_, i) => `b${i}@bulk-b.example`),
    ];
    const broadcastId = await broadcastTo(ws, emails);
    // slow.example's MX answers its first six recipients "421 4.7.0 Try again later", then takes everything.
    let throttled = 0;
    sending.smtp.setPolicy((to) =>
      to.endsWith('@slow.example') && throttled++ < 6 ? { code: 421, message: '4.7.0 Try again later' } : null,
    );
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcastId}/send`)).statusCode).toBe(202);

    await sending.pipeline.materialize();
    // One batch holds every delivery: the one that met the throttle delivered all of other.example anyway.
    await sending.pipeline.sendBatch();
    const first = sending.smtp.received.map((m) => m.to);
    expect(first.filter((to) => to.endsWith('@other.example')).sort()).toEqual(
      emails.filter((e) => e.endsWith('@other.example')).sort(),
    );
    expect(throttled).toBeGreaterThan(0);

    await sending.drain();
    const arrived = sending.smtp.received.map((m) => m.to);
    // Everyone, exactly once.
    expect([...arrived].sort()).toEqual([...emails].sort());
    expect(throttled).toBeGreaterThanOrEqual(6);
    // Every other domain was done before the throttled one: its waiting held nobody up.
    expect(Math.max(...at(arrived, /@(other|bulk-a|bulk-b)\.example$/))).toBeLessThan(
      Math.max(...at(arrived, /@slow\.example$/)),
    );

    const rows = await deliveries(broadcastId);
    expect(rows.every((d) => d.status === 'SENT')).toBe(true);
    // A throttle is no attempt and no soft bounce: every delivery took one attempt.
    expect(rows.map((d) => [d.email, Number(d.attempts), d.soft_bounced_at, d.bounce_class])).toEqual(
      rows.map((d) => [d.email, 1, null, null]),
    );

    // Grouped by MX: bulk-a and bulk-b are one destination; slow.example was slowed down, the others were not.
    expect(pace('mx:mx.slow.example')).toMatchObject({
      throttles: 6,
      rate: expect.any(Number),
      lastReply: expect.stringContaining('421 4.7.0'),
    });
    expect(pace('mx:mx.other.example')).toMatchObject({ throttles: 0, rate: null });
    expect(pace('bigmail')).toMatchObject({ throttles: 0, rate: 50, concurrency: 2 });
    expect(pace('domain:bulk-a.example') ?? pace('mx:mx1.bigmail.example')).toBeUndefined();
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcastId}`)).json()).toMatchObject({
      status: 'SENT',
      stats: { sent: emails.length },
    });
  });

  it('deliveries a destination has no room for in the batch wait for it without using attempts', async () => {
    const ws = await h.workspace();
    // 40 to the bigmail group (50 a second, 2 at once) with a window of 200 ms: at most 15 fit in a batch.
    const emails = Array.from({ length: 40 }, (_, i) => `q${i}@quota-${i % 2 ? 'a' : 'b'}.example`);
    const broadcastId = await broadcastTo(ws, emails);
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcastId}/send`);
    const usual = sending.pipeline;
    sending.pipeline = sending.build({ pacingWindowMs: 200 });
    try {
      await sending.pipeline.materialize();
      await sending.pipeline.sendBatch();
      const waiting = (await deliveries(broadcastId)).filter((d) => d.status === 'QUEUED');
      expect(waiting.length).toBeGreaterThanOrEqual(25);
      expect(waiting.every((d) => Number(d.attempts) === 0)).toBe(true);
      await sending.drain();
    } finally {
      sending.pipeline = usual;
    }
    expect(sending.smtp.received.map((m) => m.to).sort()).toEqual([...emails].sort());
    expect((await deliveries(broadcastId)).every((d) => d.status === 'SENT' && Number(d.attempts) === 1)).toBe(true);
  });

  it('a destination that throttles for longer than giveUpAfterMs: its deliveries fail, no soft bounce, the contact untouched', async () => {
    const ws = await h.workspace();
    const broadcastId = await broadcastTo(ws, ['x@stuck.example']);
    sending.smtp.setPolicy((to) =>
      to.endsWith('@stuck.example') ? { code: 421, message: '4.7.0 Try again later' } : null,
    );
    const patient = sending.pipeline;
    sending.pipeline = sending.build({ pacing: { ...pacing, giveUpAfterMs: 200 } });
    try {
      await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcastId}/send`);
      await sending.drain();
    } finally {
      sending.pipeline = patient;
    }
    const [d] = await deliveries(broadcastId);
    expect(d).toMatchObject({ status: 'FAILED', soft_bounced_at: null, bounce_class: null });
    expect(Number(d!.attempts)).toBe(1);
    expect(d!.last_error).toMatch(
      /^its destination did not take it within 0\.2 s of queueing: 421 4\.7\.0 Try again later/,
    );
    expect(
      (
        await h.db.kysely
          .selectFrom('contacts')
          .select('status')
          .where('workspace_id', '=', ws.id)
          .where('email', '=', 'x@stuck.example')
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('SUBSCRIBED');
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcastId}`)).json().status).toBe('FAILED');
  });
});

describeApi('several relays', (h) => {
  const sending = useSending(h, { workerId: 'relays', leaseMs: 10_000, batchSize: 100 });
  let refusing: number;
  const busy = net.createServer((socket) =>
    socket.end('421 4.3.2 Service not available, closing transmission channel\r\n'),
  );
  beforeAll(async () => {
    // A port nobody listens on, and a relay that greets with 421 (relay-level failures both). Port 1: a port taken and
    // let go could be handed to another test's server meanwhile; a privileged one never is by listen(0).
    refusing = 1;
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise<void>((r) => busy.close(() => r()));
  });

  it('weighted relays fail over when one refuses connections or will not greet; each message arrives once; /readyz shows each relay', async () => {
    const second = await startSmtpServer();
    const relays = [
      { url: `smtp://127.0.0.1:${refusing}`, weight: 5 },
      { url: `smtp://user:secret@127.0.0.1:${(busy.address() as net.AddressInfo).port}`, weight: 5 },
      { url: `smtp://127.0.0.1:${sending.smtp.port}`, weight: 1 },
      { url: `smtp://127.0.0.1:${second.port}`, weight: 1 },
    ];
    const mailer = createMailer({
      smtpUrl: null,
      relays,
      outboxDir: '',
      maxConnections: 2,
      rateLimit: 0,
      allowPlaintextAuth: true,
    });
    const usual = sending.pipeline;
    sending.pipeline = sending.build({}, mailer);
    const app = await buildApp({
      db: h.db,
      config: { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET },
      logger: false,
      mailer,
      status: () => ({ transport: mailer.state(), warnings: [] }),
    });
    try {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
      const emails = Array.from({ length: 24 }, (_, i) => `r${i}@example.com`);
      for (const email of emails) await insertContact(h, ws, { email });
      const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'News',
        from: `Acme <news@${domain.name}>`,
        emailContent: { subject: 'Hi', text: 'Hello' },
      });
      await h.call(ws.key, 'POST', `/v1/broadcasts/${res.json().id}/send`);
      await sending.drain();

      const arrived = [...sending.smtp.received, ...second.received].map((m) => m.to);
      expect(arrived.sort()).toEqual([...emails].sort());
      // Both working relays took a share (chosen by weight among those up).
      expect(sending.smtp.received.length).toBeGreaterThan(0);
      expect(second.received.length).toBeGreaterThan(0);
      // Failing over is part of one attempt.
      const rows = await h.db.kysely
        .selectFrom('deliveries')
        .select(['status', 'attempts'])
        .where('broadcast_id', '=', res.json().id)
        .execute();
      expect(rows.every((d) => d.status === 'SENT' && Number(d.attempts) === 1)).toBe(true);

      const ready = (await app.inject({ method: 'GET', url: '/readyz' })).json();
      expect(ready.transport).toMatchObject({
        mode: 'smtp',
        ok: true,
        detail: expect.stringMatching(/^2 of 4 relays failing/),
      });
      expect(ready.transport.relays).toEqual([
        expect.objectContaining({
          url: `smtp://127.0.0.1:${refusing}`,
          weight: 5,
          ok: false,
          detail: expect.stringContaining('ECONNREFUSED'),
        }),
        expect.objectContaining({
          url: `smtp://127.0.0.1:${(busy.address() as net.AddressInfo).port}`,
          weight: 5,
          ok: false,
          detail: expect.stringContaining('421 4.3.2'),
        }),
        expect.objectContaining({ url: `smtp://127.0.0.1:${sending.smtp.port}`, weight: 1, ok: true, detail: null }),
        expect.objectContaining({ url: `smtp://127.0.0.1:${second.port}`, weight: 1, ok: true, detail: null }),
      ]);
      expect(JSON.stringify(ready)).not.toContain('secret');
    } finally {
      sending.pipeline = usual;
      await app.close();
      await mailer.close();
      await second.close();
    }
  });

  it('a "421 try later" on a reused connection is the destination throttling, not the relay failing', async () => {
    // nodemailer's pool reports such a reply as a bare "connection was closed"; the reply is recovered (relays.ts).
    const mailer = createMailer({
      smtpUrl: `smtp://127.0.0.1:${sending.smtp.port}`,
      outboxDir: '',
      maxConnections: 1,
      rateLimit: 0,
    });
    const message = (to: string, n: number) => ({
      from: { name: null, address: 'news@acme.test' },
      to,
      replyTo: null,
      returnPath: 'bounces@acme.test',
      subject: 'Hi',
      html: null,
      text: 'Hello',
      messageId: `<m${n}@acme.test>`,
      headers: {},
      dkim: null,
    });
    try {
      sending.smtp.setPolicy((to) => (to.startsWith('busy') ? { code: 421, message: '4.7.0 Try again later' } : null));
      await mailer.send(message('first@example.com', 1));
      const err = await mailer.send(message('busy@example.com', 2)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(classifySendError(err)).toEqual({
        kind: 'temporary',
        reason: '421 4.7.0 Try again later',
        reply: true,
        throttle: true,
      });
      expect(mailer.state()).toMatchObject({ ok: true, relays: [{ ok: true, downUntil: null }] });
      await mailer.send(message('next@example.com', 3));
      expect(sending.smtp.received.map((m) => m.to)).toEqual(['first@example.com', 'next@example.com']);
    } finally {
      await mailer.close();
    }
  });

  it('all relays down: the delivery is retried later with an attempt (not a bounce), and goes out when one comes back', async () => {
    const mailer = createMailer({
      smtpUrl: null,
      relays: [
        { url: `smtp://127.0.0.1:${refusing}`, weight: 1 },
        { url: `smtp://127.0.0.1:${(busy.address() as net.AddressInfo).port}`, weight: 1 },
      ],
      outboxDir: '',
      maxConnections: 1,
      rateLimit: 0,
    });
    const usual = sending.pipeline;
    sending.pipeline = sending.build({}, mailer);
    try {
      const ws = await h.workspace();
      const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
      await insertContact(h, ws, { email: 'later@example.com' });
      const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'News',
        from: `Acme <news@${domain.name}>`,
        emailContent: { subject: 'Hi', text: 'Hello' },
      });
      await h.call(ws.key, 'POST', `/v1/broadcasts/${res.json().id}/send`);
      await sending.pipeline.materialize();
      await sending.pipeline.sendBatch();
      const row = await h.db.kysely
        .selectFrom('deliveries')
        .select(['status', 'attempts', 'last_error'])
        .where('broadcast_id', '=', res.json().id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'QUEUED', attempts: 1 });
      expect(mailer.state()).toMatchObject({ ok: false, detail: expect.stringMatching(/^2 of 2 relays failing/) });
      // The usual relay is back.
      sending.pipeline = usual;
      await sending.drain();
      expect(sending.smtp.received.map((m) => m.to)).toEqual(['later@example.com']);
    } finally {
      sending.pipeline = usual;
      await mailer.close();
    }
  });
});
