import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInbound } from '../../src/sending/bounces/bounces.parse.js';
import { claimsOf, provenTarget } from '../../src/sending/bounces/bounces.proof.js';
import { InboundProcessor } from '../../src/sending/bounces/bounces.inbound.js';
import {
  INBOUND_MAX_CLIENTS_PER_IP,
  startInboundServer,
  type InboundServer,
} from '../../src/sending/bounces/bounces.server.js';
import { reportRules } from '../../src/sending/bounces/bounces.service.js';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { newId } from '../../src/lib/ids.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { returnPath } from '../../src/mail/verp.js';
import { UnsubscribeService } from '../../src/sending/unsubscribe/unsubscribe.service.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer, type Received } from '../helpers/smtp.js';

/**
 * The inbound listener end to end (docs/bounces.md): a broadcast is sent to a local SMTP sink, then each
 * fixture of test/fixtures/inbound (DSNs, ARF reports, plain bounces, auto-replies after the shapes real MTAs
 * and mailbox providers produce) is sent by a real SMTP client to the VERP address of its own recipient's
 * message, and the contact, the suppression list, the delivery and the stats are checked against the
 * fixture's expected classification.
 */
const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'inbound');

interface Fixture {
  file: string;
  source: string;
  rcptTo: 'bounces' | 'unsubscribe';
  expected: {
    kind:
      | 'hard_bounce'
      | 'soft_bounce'
      | 'blocked'
      | 'failed'
      | 'complaint'
      | 'auto_reply'
      | 'delay'
      | 'unclassified'
      | 'unsubscribe';
    status: string | null;
    recipient: string | null;
  };
}

const manifest = JSON.parse(fs.readFileSync(path.join(DIR, 'manifest.json'), 'utf8')) as Fixture[];
const silent = pino({ level: 'silent' });

function fill(text: string, v: { recipient: string; token: string; domain: string; deliveryId: string }): string {
  return text
    .replaceAll('{{RECIPIENT}}', v.recipient)
    .replaceAll('{{TOKEN}}', v.token)
    .replaceAll('{{DOMAIN}}', v.domain)
    .replaceAll('{{DELIVERY_ID}}', v.deliveryId);
}

describe('inbound fixtures: the parser reads each as its manifest says', () => {
  it(`has at least 12 fixtures with their expected classification (found ${manifest.length})`, () => {
    expect(manifest.length).toBeGreaterThanOrEqual(12);
  });
  for (const f of manifest.filter((x) => x.rcptTo === 'bounces')) {
    it(`${f.file} (${f.source}) → ${f.expected.kind}${f.expected.status ? ` ${f.expected.status}` : ''}`, async () => {
      const raw = Buffer.from(
        fill(fs.readFileSync(path.join(DIR, f.file), 'utf8'), {
          recipient: 'ann@example.com',
          token: 'x',
          domain: 'acme.test',
          deliveryId: 'dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W',
        }),
      );
      const report = await parseInbound(raw);
      const kind = report.kind === 'bounce' ? `${report.results[0]!.class}` : report.kind;
      const want = f.expected.kind.replace(/_bounce$/, '');
      expect(kind).toBe(want);
      if (report.kind === 'bounce' && f.expected.status) expect(report.results[0]!.status).toBe(f.expected.status);
      if (report.kind === 'bounce' && f.expected.recipient)
        expect(report.results.map((r) => r.recipient)).toContain('ann@example.com');
      if (report.kind === 'complaint')
        expect(report.originalMessageId).toBe('<dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W@acme.test>');
    });
  }
});

describe('ids: none can be derived from another (issue 29)', () => {
  const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const random = (id: string) => [...id.slice(-16)].reduce((n, c) => n * 32n + BigInt(B32.indexOf(c)), 0n);
  const time = (id: string) => id.slice(-26, -16);

  it('ids made in the same millisecond keep their order but are not consecutive: each steps by a random amount no other id tells', () => {
    for (const prefix of ['dlv', 'cnf', 'tst', 'ct', 'evt'] as const) {
      const ids = Array.from({ length: 3000 }, () => newId(prefix));
      expect([...ids].sort()).toEqual(ids);
      const steps = new Set<bigint>();
      let sameMs = 0;
      for (let i = 1; i < ids.length; i++) {
        if (time(ids[i]!) !== time(ids[i - 1]!)) continue;
        sameMs++;
        const step = random(ids[i]!) - random(ids[i - 1]!);
        // A monotonic ULID steps by 1; a random step of 1 to 2^64 is under 2^24 once in 2^40 pairs.
        expect(step, `${ids[i - 1]} then ${ids[i]}`).toBeGreaterThan(2n ** 24n);
        steps.add(step);
      }
      expect(sameMs, 'the loop makes many ids per millisecond').toBeGreaterThan(100);
      expect(steps.size, 'no two steps alike').toBe(sameMs);
    }
  });
});

describeApi('inbound SMTP listener', (h) => {
  let sink: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  let inbound: InboundServer;
  let client: ReturnType<typeof nodemailer.createTransport>;

  beforeAll(async () => {
    sink = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, outboxDir: '', maxConnections: 2, rateLimit: 0 });
    const processor = new InboundProcessor(
      h.db,
      TEST_SECRET,
      reportRules(),
      new UnsubscribeService(h.db),
      silent as never,
    );
    inbound = await startInboundServer({ port: 0, host: '127.0.0.1', processor, log: silent as never });
    client = nodemailer.createTransport({ host: '127.0.0.1', port: inbound.port, secure: false, ignoreTLS: true });
  });
  afterAll(async () => {
    client?.close();
    await inbound?.close();
    await mailer?.close();
    await sink?.close();
  });

  async function sendBroadcast(count: number) {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `in${ws.id.slice(-8).toLowerCase()}.test`);
    const emails = Array.from({ length: count }, (_, i) => `r${i}@example.com`);
    for (const e of emails) await insertContact(h, ws, { email: e });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'News',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', text: 'Hello' },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    const pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'in', publicUrl: 'https://m.test' },
      silent as never,
    );
    for (let i = 0; i < 50 && (await pipeline.materialize()) + (await pipeline.sendBatch()) > 0;) i++;
    const sent = new Map<string, Received>(sink.received.filter((m) => emails.includes(m.to)).map((m) => [m.to, m]));
    expect(sent.size).toBe(count);
    return { ws, domain: domain.name, broadcastId: b.id as string, emails, sent };
  }

  const state = async (wsId: string, email: string) => {
    const k = h.db.kysely;
    const contact = await k
      .selectFrom('contacts')
      .select(['id', 'status'])
      .where('workspace_id', '=', wsId)
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    const delivery = await k
      .selectFrom('deliveries')
      .select(['status', 'bounce_class', 'soft_bounced_at', 'complained_at', 'unsubscribed_at'])
      .where('contact_id', '=', contact.id)
      .executeTakeFirstOrThrow();
    const suppression = await k
      .selectFrom('suppressions')
      .select('reason')
      .where('workspace_id', '=', wsId)
      .where('email', '=', email)
      .executeTakeFirst();
    return { contact: contact.status, delivery, suppression: suppression?.reason ?? null };
  };

  it("each fixture, sent to its recipient's VERP address, changes the contact, the suppression and the delivery as its class says", async () => {
    const { ws, domain, broadcastId, emails, sent } = await sendBroadcast(manifest.length);
    for (const [i, f] of manifest.entries()) {
      const email = emails[i]!;
      const m = sent.get(email)!;
      const [local, host] = m.mailFrom.split('@') as [string, string];
      const token = local.slice('bounces+'.length);
      const deliveryId = m.parsed.messageId!.slice(1).split('@')[0]!;
      const mailto = /<mailto:(unsubscribe\+[a-z0-9]+@[^?>]+)\?/.exec(
        m.parsed.headerLines.find((l) => l.key === 'list-unsubscribe')!.line,
      )![1]!;
      const to = f.rcptTo === 'unsubscribe' ? mailto : `bounces+${token}@${host}`;
      const raw = fill(fs.readFileSync(path.join(DIR, f.file), 'utf8'), {
        recipient: email,
        token,
        domain,
        deliveryId,
      });
      await client.sendMail({ envelope: { from: f.rcptTo === 'unsubscribe' ? email : '', to: [to] }, raw });
      const s = await state(ws.id, email);
      const why = `${f.file} → ${f.expected.kind}: ${JSON.stringify(s)}`;
      switch (f.expected.kind) {
        case 'hard_bounce':
          expect(s, why).toMatchObject({
            contact: 'BOUNCED',
            suppression: 'BOUNCED',
            delivery: { status: 'BOUNCED', bounce_class: 'hard' },
          });
          break;
        case 'soft_bounce':
          expect(s, why).toMatchObject({
            contact: 'SUBSCRIBED',
            suppression: null,
            delivery: { status: 'SENT', bounce_class: 'soft' },
          });
          expect(s.delivery.soft_bounced_at, why).not.toBeNull();
          break;
        case 'blocked':
        case 'failed':
          expect(s, why).toMatchObject({
            contact: 'SUBSCRIBED',
            suppression: null,
            delivery: { status: 'FAILED', bounce_class: f.expected.kind },
          });
          break;
        case 'complaint':
          expect(s, why).toMatchObject({
            contact: 'COMPLAINED',
            suppression: 'COMPLAINED',
            delivery: { status: 'SENT' },
          });
          expect(s.delivery.complained_at, why).not.toBeNull();
          break;
        case 'unsubscribe':
          expect(s, why).toMatchObject({ contact: 'UNSUBSCRIBED', suppression: 'UNSUBSCRIBED' });
          expect(s.delivery.unsubscribed_at, why).not.toBeNull();
          break;
        default:
          expect(s, why).toMatchObject({
            contact: 'SUBSCRIBED',
            suppression: null,
            delivery: { status: 'SENT', bounce_class: null },
          });
      }
    }
    const stats = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcastId}`)).json().stats;
    const count = (k: string) => manifest.filter((f) => f.expected.kind === k).length;
    expect(stats).toMatchObject({
      bounced: count('hard_bounce'),
      softBounced: count('soft_bounce'),
      complained: count('complaint'),
      failed: count('blocked') + count('failed'),
    });
    // What could not be read is kept and listed (newest first); auto-replies are not.
    const kept = (await h.call(ws.key, 'GET', '/v1/inbound')).json().data;
    expect(kept).toHaveLength(count('unclassified'));
    for (const k of kept) expect(Buffer.from(k.raw, 'base64').length).toBe(k.size);
    expect((await h.call((await h.workspace()).key, 'GET', '/v1/inbound')).json().data).toEqual([]);
  });

  it('connections are bounded per address: past INBOUND_MAX_CLIENTS_PER_IP at once, 421; one closed frees a place', async () => {
    const greet = () =>
      new Promise<{ socket: net.Socket; line: string }>((resolve, reject) => {
        const socket = net.connect(inbound.port, '127.0.0.1');
        socket.once('error', reject);
        socket.once('data', (d) => resolve({ socket, line: d.toString('latin1') }));
      });
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < INBOUND_MAX_CLIENTS_PER_IP; i++) {
        const { socket, line } = await greet();
        held.push(socket);
        expect(line, `connection ${i + 1}`).toMatch(/^220 /);
      }
      const over = await greet();
      held.push(over.socket);
      expect(over.line).toMatch(/^421 /);
      held.shift()!.destroy();
      // The server learns of the close, then counts one fewer.
      await expect
        .poll(async () => {
          const again = await greet();
          held.push(again.socket);
          return again.line.slice(0, 3);
        })
        .toBe('220');
    } finally {
      for (const s of held) s.destroy();
    }
  });

  it('RCPT to anything but a valid token is refused with 550 before any data; a duplicate report changes nothing', async () => {
    const { ws, domain, emails, sent } = await sendBroadcast(1);
    const m = sent.get(emails[0]!)!;
    const good = m.mailFrom;
    const forged = good.replace(
      /\+(\w)(\w{26})(\w)/,
      (_all, k: string, u: string, c: string) => `+${k}${u}${c === 'a' ? 'b' : 'a'}`,
    );
    // postmaster@ (and abuse@, fbl@, dmarc@) the bounce domain of a domain no workspace has verified is not ours.
    for (const to of [
      forged,
      `bounces+x@bounces.${domain}`,
      `postmaster@bounces.not-${domain}`,
      `info@bounces.${domain}`,
      'someone@example.com',
    ]) {
      const err = await client
        .sendMail({ envelope: { from: '', to: [to] }, raw: 'Subject: x\r\n\r\nx' })
        .catch((e: { responseCode?: number }) => e);
      expect((err as { responseCode?: number }).responseCode, to).toBe(550);
    }
    const dsn = fill(
      fs.readFileSync(path.join(DIR, manifest.find((f) => f.expected.kind === 'hard_bounce')!.file), 'utf8'),
      {
        recipient: emails[0]!,
        token: good.split('@')[0]!.slice(8),
        domain,
        deliveryId: m.parsed.messageId!.slice(1).split('@')[0]!,
      },
    );
    await client.sendMail({ envelope: { from: '', to: [good] }, raw: dsn });
    await client.sendMail({ envelope: { from: '', to: [good] }, raw: dsn });
    expect((await state(ws.id, emails[0]!)).contact).toBe('BOUNCED');
    expect((await h.call(ws.key, 'GET', '/v1/suppressions')).json().data).toHaveLength(1);
  });
  /** What a recipient of `email` sees of their own message: its VERP address, token and Message-ID's delivery id. */
  const seen = (sent: Map<string, Received>, email: string) => {
    const m = sent.get(email)!;
    return {
      address: m.mailFrom,
      token: m.mailFrom.split('@')[0]!.slice('bounces+'.length),
      deliveryId: m.parsed.messageId!.slice(1).split('@')[0]!,
    };
  };

  it("a report acts only on the delivery its address names: an ARF or a DSN sent to one's own bounce address naming another message changes nobody and is kept for review (issue 29)", async () => {
    const { ws, domain, emails, sent } = await sendBroadcast(3);
    const [me, neighbour, third] = emails.map((e) => seen(sent, e)) as [
      ReturnType<typeof seen>,
      ReturnType<typeof seen>,
      ReturnType<typeof seen>,
    ];
    const read = (kind: string) =>
      fs.readFileSync(path.join(DIR, manifest.find((f) => f.expected.kind === kind)!.file), 'utf8');
    const arf = read('complaint');
    const dsn = read('hard_bounce');
    const forged = me.token.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    const attempts = [
      // The issue's attack: one's own bounce address, a neighbour's Message-ID inside.
      fill(arf, { recipient: emails[1]!, token: me.token, domain, deliveryId: neighbour.deliveryId }),
      fill(dsn, { recipient: emails[1]!, token: me.token, domain, deliveryId: neighbour.deliveryId }),
      // Another message's (valid) VERP token in the original's Return-Path, or a forged one.
      fill(arf, { recipient: emails[0]!, token: third.token, domain, deliveryId: me.deliveryId }),
      fill(dsn, { recipient: emails[0]!, token: forged, domain, deliveryId: me.deliveryId }),
    ];
    for (const raw of attempts) await client.sendMail({ envelope: { from: '', to: [me.address] }, raw });
    for (const e of emails) {
      expect(await state(ws.id, e), e).toMatchObject({
        contact: 'SUBSCRIBED',
        suppression: null,
        delivery: { status: 'SENT', bounce_class: null, complained_at: null },
      });
    }
    const kept = (await h.call(ws.key, 'GET', '/v1/inbound')).json().data as { rcptTo: string; reason: string }[];
    expect(kept).toHaveLength(attempts.length);
    for (const k of kept)
      expect(k).toMatchObject({
        rcptTo: me.address,
        reason: expect.stringMatching(/^not applied: the original message's (Message-ID|Return-Path)/),
      });
    expect(kept.filter((k) => k.reason.includes(neighbour.deliveryId))).toHaveLength(2);
    const health = (await h.call(ws.key, 'GET', '/v1/workspace/health')).json().windows[0];
    expect(health).toMatchObject({ complaints: 0, hardBounces: 0 });
    // One's own report about one's own message is applied, to that message only.
    await client.sendMail({
      envelope: { from: '', to: [me.address] },
      raw: fill(arf, { recipient: emails[0]!, token: me.token, domain, deliveryId: me.deliveryId }),
    });
    expect(await state(ws.id, emails[0]!)).toMatchObject({ contact: 'COMPLAINED', suppression: 'COMPLAINED' });
    for (const e of emails.slice(1)) expect((await state(ws.id, e)).contact).toBe('SUBSCRIBED');
  });

  it('what a report proves by itself (for addresses without a token): only a signed VERP token in the original, agreeing with its Message-ID', async () => {
    const { domain, emails, sent } = await sendBroadcast(2);
    const [me, neighbour] = emails.map((e) => seen(sent, e)) as [ReturnType<typeof seen>, ReturnType<typeof seen>];
    const arf = fs.readFileSync(path.join(DIR, 'arf-yahoo-cfl.eml'), 'utf8');
    const proven = async (raw: string) => {
      const report = await parseInbound(Buffer.from(raw));
      if (report.kind !== 'complaint') throw new Error(report.kind);
      return provenTarget(claimsOf(TEST_SECRET, report))?.id ?? null;
    };
    expect(await proven(fill(arf, { recipient: emails[0]!, token: me.token, domain, deliveryId: me.deliveryId }))).toBe(
      me.deliveryId,
    );
    // A Message-ID alone proves nothing; a Message-ID that disagrees with the token, or a forged token, neither.
    expect(
      await proven(fill(arf, { recipient: emails[0]!, token: me.token, domain, deliveryId: neighbour.deliveryId })),
    ).toBeNull();
    expect(
      await proven(fill(arf, { recipient: emails[0]!, token: 'x', domain, deliveryId: neighbour.deliveryId })),
    ).toBeNull();
    expect(
      await proven(
        fill(arf, {
          recipient: emails[0]!,
          token: me.token.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')),
          domain,
          deliveryId: me.deliveryId,
        }),
      ),
    ).toBeNull();
  });

  it("postmaster@, abuse@, fbl@ and dmarc@ a verified domain's bounce domain are accepted (not a pending one's); what is kept from them is capped per day", async () => {
    const ws = await h.workspace();
    const name = `fx${ws.id.slice(-8).toLowerCase()}.test`;
    await verifiedDomain(h, ws, name);
    const pending = `pending-${name}`;
    await h.call(ws.key, 'POST', '/v1/domains', { name: pending });
    const lines: { msg: string; rcptTo?: string; outcome?: { result: string; why?: string } }[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as (typeof lines)[number]) });
    const processor = new InboundProcessor(
      h.db,
      TEST_SECRET,
      reportRules(),
      new UnsubscribeService(h.db),
      log as never,
      parseInbound,
      { fixedKeptPerDay: 2 },
    );
    const server = await startInboundServer({ port: 0, host: '127.0.0.1', processor, log: log as never });
    const c = nodemailer.createTransport({ host: '127.0.0.1', port: server.port, secure: false, ignoreTLS: true });
    try {
      const note = (n: number) => `From: someone@example.org\r\nSubject: note ${n}\r\n\r\nHello postmaster.\r\n`;
      for (const box of ['postmaster', 'Postmaster', 'abuse', 'fbl', 'dmarc']) {
        const info = await c.sendMail({ envelope: { from: '', to: [`${box}@bounces.${name}`] }, raw: note(0) });
        expect(info.accepted, box).toEqual([`${box}@bounces.${name}`]);
      }
      for (const to of [`postmaster@bounces.${pending}`, `fbl@${name}`, `fbl@bounces.sub.${name}`]) {
        const err = await c
          .sendMail({ envelope: { from: '', to: [to] }, raw: note(0) })
          .catch((e: { responseCode?: number }) => e);
        expect((err as { responseCode?: number }).responseCode, to).toBe(550);
      }
      // Five accepted above; two kept (the day's limit here), the rest dropped and logged.
      const kept = (await h.call(ws.key, 'GET', '/v1/inbound')).json().data as { rcptTo: string; reason: string }[];
      expect(kept).toHaveLength(2);
      const outcomes = lines.filter((l) => l.msg === 'inbound message').map((l) => l.outcome!);
      expect(outcomes.map((o) => o.result)).toEqual(['kept', 'kept', 'ignored', 'ignored', 'ignored']);
      expect(outcomes[2]!.why).toMatch(/^not kept: 2 messages to the fixed mailboxes kept in 24 hours already/);
      expect(lines.filter((l) => l.msg.includes('daily review limit'))).toHaveLength(3);
    } finally {
      c.close();
      await server.close();
    }
  });

  it('one message to many recipients: parsed once, applied once per distinct recipient (a repeated RCPT is one, and logs no error), at most 50 recipients (452 beyond)', async () => {
    const { ws, domain, emails, sent } = await sendBroadcast(2);
    const [a, b] = emails.map((e) => seen(sent, e)) as [ReturnType<typeof seen>, ReturnType<typeof seen>];
    let parses = 0;
    const lines: { level: number; msg: string }[] = [];
    const log = pino(
      { level: 'info' },
      { write: (l: string) => lines.push(JSON.parse(l) as { level: number; msg: string }) },
    );
    const processor = new InboundProcessor(
      h.db,
      TEST_SECRET,
      reportRules(),
      new UnsubscribeService(h.db),
      log as never,
      (raw) => {
        parses++;
        return parseInbound(raw);
      },
    );
    const server = await startInboundServer({ port: 0, host: '127.0.0.1', processor, log: log as never });
    const c = nodemailer.createTransport({ host: '127.0.0.1', port: server.port, secure: false, ignoreTLS: true });
    try {
      const garbage = fill(fs.readFileSync(path.join(DIR, 'garbage-truncated.eml'), 'utf8'), {
        recipient: emails[0]!,
        token: a.token,
        domain,
        deliveryId: a.deliveryId,
      });
      // a three times (once in capitals, once at another domain's bounce address: the same token), then b.
      const sameToken = `bounces+${a.token}@bounces.elsewhere.test`;
      const info = await c.sendMail({
        envelope: { from: '', to: [a.address, a.address, a.address.toUpperCase(), sameToken, b.address] },
        raw: garbage,
      });
      expect(info.rejected).toEqual([]);
      const kept = (await h.call(ws.key, 'GET', '/v1/inbound')).json().data as { rcptTo: string }[];
      // (smtp-server keeps the last spelling of a repeated address.)
      expect(kept.map((k) => k.rcptTo.toLowerCase()).sort()).toEqual([a.address, b.address].sort());
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.msg === 'inbound message')).toHaveLength(2);
      const parsesOfOneMessage = parses;

      // The cap: 50 distinct recipients; the 51st is 452 (sent again later), a repeat of an accepted one is not counted.
      const many = Array.from({ length: 51 }, () => returnPath(TEST_SECRET, 'd', newId('dlv'), domain));
      const capped = await c.sendMail({ envelope: { from: '', to: [...many, many[0]!] }, raw: 'Subject: x\r\n\r\nx' });
      expect(capped.rejected).toEqual([many[50]]);
      expect((capped.rejectedErrors as { responseCode?: number }[] | undefined)?.[0]?.responseCode).toBe(452);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      // Read once for its four recipients (the capped message names no existing row: it is never read).
      expect(parsesOfOneMessage).toBe(1);
    } finally {
      c.close();
      await server.close();
    }
  });
});
