import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { Webhook } from 'standardwebhooks';
import { WebhookDispatcher } from '../../src/integrations/webhooks/webhooks.dispatcher.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { newId } from '../../src/lib/ids.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import type { Received } from '../helpers/smtp.js';
import { useSending } from '../helpers/sending.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { createRenderer } from '../../src/sending/deliveries/send-threads.js';
import pino from 'pino';

/** Transactional email (contract §20, docs/emails.md): the API, its checks, the lane, suppression, bounces, templates. */

/** A header exactly as it was on the wire (unfolded). */
function header(m: Received, name: string): string {
  return m.parsed.headerLines.find((l) => l.key === name)?.line.replace(/\r?\n\s+/g, ' ') ?? '';
}

describeApi('transactional email', (h) => {
  const sending = useSending(h, { workerId: 'emails', leaseMs: 10_000, batchSize: 7, maxAttempts: 2 });

  async function setup() {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `tx${ws.id.slice(-8).toLowerCase()}.test`);
    return { ws, domain, from: `Acme <receipts@${domain.name}>` };
  }
  const send = (ws: TestWorkspace, body: unknown, headers: Record<string, string> = {}) =>
    h.call(ws.key, 'POST', '/v1/emails', body, headers);
  const get = async (ws: TestWorkspace, id: string) => (await h.call(ws.key, 'GET', `/v1/emails/${id}`)).json();
  /** What the workspace has queued, in every table a send writes. */
  async function written(ws: TestWorkspace) {
    const k = h.db.kysely;
    const count = async (table: 'emails' | 'email_attachments' | 'deliveries' | 'broadcasts') =>
      Number(
        (
          await k
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', ws.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      emails: await count('emails'),
      attachments: await count('email_attachments'),
      deliveries: await count('deliveries'),
      broadcasts: await count('broadcasts'),
    };
  }
  const NOTHING = { emails: 0, attachments: 0, deliveries: 0, broadcasts: 0 };

  it('sends every §20 field: one SMTP transaction per recipient, To and Cc listed, Bcc hidden, headers, tags, attachments, DKIM; events carry emailId', async () => {
    const { ws, domain, from } = await setup();
    const pdf = Buffer.from('%PDF-1.4 a receipt\n');
    const res = await send(ws, {
      from,
      to: ['Ada Lovelace <ada@example.com>', 'bob@example.com'],
      cc: ['carol@example.com'],
      bcc: ['archive@example.com'],
      replyTo: `support@${domain.name}`,
      subject: 'Your receipt #1042',
      html: '<p>Thank you for order <b>#1042</b>. <a href="https://example.com/orders/1042">See it</a></p>',
      text: 'Thank you for order #1042.',
      headers: { 'X-Order-Id': '1042', 'X-Note': 'déjà vu' },
      tags: ['receipt', 'shop'],
      attachments: [
        { filename: 'reçu-n°1042-très-long-nom-de-fichier.pdf', content: pdf.toString('base64') },
        { filename: 'note.txt', content: Buffer.from('hello').toString('base64'), contentType: 'text/plain' },
      ],
    });
    expect(res.statusCode, res.body).toBe(202);
    const { id } = res.json();
    expect(id).toMatch(/^em_[0-9A-Z]{26}$/);
    expect(res.headers.location).toBe(`/v1/emails/${id}`);
    const queued = await get(ws, id);
    expect(queued.status).toBe('QUEUED');
    await sending.drain();

    const got = sending.smtp.received.filter((m) => m.parsed.subject === 'Your receipt #1042');
    expect(got.map((m) => m.to).sort()).toEqual(
      ['ada@example.com', 'archive@example.com', 'bob@example.com', 'carol@example.com'].sort(),
    );
    const publicKey = domain.records.find((r: { name: string }) => r.name.includes('._domainkey.'))!;
    for (const m of got) {
      expect(header(m, 'to')).toBe('To: Ada Lovelace <ada@example.com>, bob@example.com');
      expect(header(m, 'cc')).toBe('Cc: carol@example.com');
      expect(header(m, 'bcc')).toBe('');
      expect(m.raw.toString('latin1')).not.toContain('archive@example.com');
      expect(header(m, 'x-order-id')).toBe('X-Order-Id: 1042');
      // Not ASCII: an RFC 2047 encoded word, as any header value.
      expect(header(m, 'x-note')).toBe('X-Note: =?UTF-8?Q?d=C3=A9j=C3=A0_vu?=');
      expect(header(m, 'list-unsubscribe')).toBe('');
      expect(header(m, 'precedence')).toBe('');
      expect(m.parsed.replyTo?.text).toBe(`support@${domain.name}`);
      expect(m.parsed.from?.value[0]).toMatchObject({ name: 'Acme', address: `receipts@${domain.name}` });
      expect(m.parsed.text?.trim()).toBe('Thank you for order #1042.');
      // Tracking is off by default: the link as written, no pixel.
      expect(m.parsed.html).toContain('href="https://example.com/orders/1042"');
      expect(m.parsed.html).not.toContain('/t/o/');
      expect(m.mailFrom).toMatch(new RegExp(`^bounces\\+d[0-9a-z]{38}@bounces\\.${domain.name.replace('.', '\\.')}$`));
      expect(m.parsed.messageId).toMatch(new RegExp(`^<dlv_[0-9A-Z]{26}@${domain.name.replace('.', '\\.')}>$`));
      expect(m.parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
        ['reçu-n°1042-très-long-nom-de-fichier.pdf', 'application/pdf', pdf.toString()],
        ['note.txt', 'text/plain', 'hello'],
      ]);
      // RFC 2231 for the name that is not ASCII
      expect(m.raw.toString('latin1')).toMatch(/filename\*0\*=utf-8''re%C3%A7u/);
      const result = await dkimVerify(m.raw, {
        resolver: async (name: string) => (name === publicKey.name ? [[publicKey.value]] : []),
      });
      expect(result.results[0]?.status.result).toBe('pass');
    }

    const email = await get(ws, id);
    expect(email).toMatchObject({
      id,
      from,
      to: ['Ada Lovelace <ada@example.com>', 'bob@example.com'],
      cc: ['carol@example.com'],
      bcc: ['archive@example.com'],
      replyTo: `support@${domain.name}`,
      subject: 'Your receipt #1042',
      status: 'SENT',
      tags: ['receipt', 'shop'],
      templateId: null,
      templateVersion: null,
      tracking: { opens: false, clicks: false },
      headers: { 'X-Order-Id': '1042', 'X-Note': 'déjà vu' },
      html: expect.stringContaining('#1042'),
      text: 'Thank you for order #1042.',
      createdAt: expect.any(String),
    });
    expect(email.attachments).toEqual([
      { filename: 'reçu-n°1042-très-long-nom-de-fichier.pdf', contentType: 'application/pdf', size: pdf.byteLength },
      { filename: 'note.txt', contentType: 'text/plain', size: 5 },
    ]);
    expect(
      email.recipients.map((r: { email: string; type: string; status: string; lastError: string | null }) => [
        r.email,
        r.type,
        r.status,
        r.lastError,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['ada@example.com', 'to', 'SENT', null],
        ['bob@example.com', 'to', 'SENT', null],
        ['carol@example.com', 'cc', 'SENT', null],
        ['archive@example.com', 'bcc', 'SENT', null],
      ]),
    );
    // email.sent events carry emailId (and no broadcastId: there is no broadcast to look up).
    const events = (await h.call(ws.key, 'GET', '/v1/events?type=email.sent')).json().data;
    expect(events).toHaveLength(4);
    for (const e of events) {
      expect(e.data.emailId).toBe(id);
      expect(e.broadcastId).toBeNull();
    }
    // Lists: filters by recipient, status, tag; hidden from the broadcasts API.
    expect(
      (await h.call(ws.key, 'GET', '/v1/emails?recipient=carol@example.com'))
        .json()
        .data.map((e: { id: string }) => e.id),
    ).toEqual([id]);
    expect((await h.call(ws.key, 'GET', '/v1/emails?recipient=nobody@example.com')).json().data).toEqual([]);
    // Search as you type: part of an address, in any case; LIKE's wildcards are only characters.
    for (const part of ['CAROL', 'rol@ex', 'archive'])
      expect(
        (await h.call(ws.key, 'GET', `/v1/emails?recipient=${encodeURIComponent(part)}`)).json().data,
      ).toHaveLength(1);
    for (const part of ['%', '_arol', 'caro1'])
      expect((await h.call(ws.key, 'GET', `/v1/emails?recipient=${encodeURIComponent(part)}`)).json().data).toEqual([]);
    // The email's own events: each recipient's email.sent, newest first, naming its recipient.
    const own = await h.call(ws.key, 'GET', `/v1/emails/${id}/events`);
    expect(own.statusCode).toBe(200);
    expect(own.json().data.map((e: { type: string }) => e.type)).toEqual(Array(4).fill('email.sent'));
    expect(
      own
        .json()
        .data.map((e: { data: { email: string } }) => e.data.email)
        .sort(),
    ).toEqual(['ada@example.com', 'archive@example.com', 'bob@example.com', 'carol@example.com']);
    const ids = own.json().data.map((e: { id: string }) => e.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(
      (await h.call(ws.key, 'GET', '/v1/emails?status=SENT')).json().data.map((e: { id: string }) => e.id),
    ).toEqual([id]);
    expect((await h.call(ws.key, 'GET', '/v1/emails?status=QUEUED')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', '/v1/emails?tag=shop')).json().data).toHaveLength(1);
    expect((await h.call(ws.key, 'GET', '/v1/emails?tag=sho')).json().data).toHaveLength(0);
    expect((await h.call(ws.key, 'GET', '/v1/broadcasts')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${id}`)).statusCode).toBe(404);
  });

  it('tracking when asked; a List-Unsubscribe only when the caller gives one', async () => {
    const { ws, from } = await setup();
    const res = await send(ws, {
      from,
      to: ['dora@example.com'],
      subject: 'Tracked',
      html: '<p><img src="https://example.com/logo.png" alt="Acme"></p><p><a href="https://example.com/x">x</a></p>',
      headers: { 'List-Unsubscribe': '<https://example.com/u/1>' },
      tracking: { opens: true, clicks: true },
    });
    expect(res.statusCode, res.body).toBe(202);
    await sending.drain();
    const m = sending.smtp.received.find((r) => r.parsed.subject === 'Tracked')!;
    expect(m.parsed.html).toContain('https://mail.example.test/t/c/');
    expect(m.parsed.html).toContain('https://mail.example.test/t/o/');
    expect(header(m, 'list-unsubscribe')).toBe('List-Unsubscribe: <https://example.com/u/1>');
    expect(m.parsed.text).toContain('x');
    expect((await get(ws, res.json().id)).tracking).toEqual({ opens: true, clicks: true });
  });

  it("the sender's domain must be this workspace's and VERIFIED: a pending one, or another workspace's verified one, is 422 sender_domain_not_verified and nothing is queued", async () => {
    const { ws } = await setup();
    const pending = `pending${ws.id.slice(-8).toLowerCase()}.test`;
    await h.app.services.domains.add(ws.id, pending);
    const other = await setup();
    for (const from of [`Acme <receipts@${pending}>`, other.from]) {
      const res = await send(ws, { from, to: ['ada@example.com'], subject: 'Hi', text: 'Hello' });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().code).toBe('sender_domain_not_verified');
    }
    expect(await written(ws)).toEqual(NOTHING);
  });

  it('emails of one batch are made together (one render task for several emails): each message carries its own content, headers, files and tracking', async () => {
    const { ws, from } = await setup();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await send(ws, {
        from,
        to: [`batch${i}@example.com`],
        subject: `Batch email ${i}`,
        html: `<p>Body of email ${i}</p><p><a href="https://example.com/e/${i}">link ${i}</a></p>`,
        ...(i === 2 ? { text: 'Text of email 2' } : {}),
        ...(i === 3 ? { headers: { 'X-Order': 'order-3' } } : {}),
        ...(i === 4
          ? { attachments: [{ filename: 'four.txt', content: Buffer.from('file 4').toString('base64') }] }
          : {}),
        ...(i === 5 ? { tracking: { opens: true, clicks: true } } : {}),
      });
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json().id);
    }
    await sending.drain();
    for (let i = 1; i <= 5; i++) {
      const got = sending.smtp.received.filter((m) => m.to === `batch${i}@example.com`);
      expect(got.length, `email ${i}`).toBe(1);
      const m = got[0]!;
      expect(m.parsed.subject).toBe(`Batch email ${i}`);
      expect(m.parsed.html).toContain(`Body of email ${i}`);
      for (let j = 1; j <= 5; j++) if (j !== i) expect(m.parsed.html).not.toContain(`Body of email ${j}`);
      expect(m.parsed.text).toContain(i === 2 ? 'Text of email 2' : `Body of email ${i}`);
      expect(header(m, 'x-order')).toBe(i === 3 ? 'X-Order: order-3' : '');
      expect(m.parsed.attachments.map((a) => a.filename)).toEqual(i === 4 ? ['four.txt'] : []);
      if (i === 5) expect(m.parsed.html).toContain('https://mail.example.test/t/c/');
      else expect(m.parsed.html).toContain(`href="https://example.com/e/${i}"`);
      expect(m.parsed.messageId).toMatch(/^<dlv_/);
      expect((await get(ws, ids[i - 1]!)).status).toBe('SENT');
    }
  });

  it("a batch's emails are read ahead together (prefetchForSending): each gets what a read of its own gives, its files in order; another workspace's email is not read", async () => {
    const { ws, from } = await setup();
    const other = await setup();
    const file = (name: string) => ({ filename: name, content: Buffer.from(`file ${name}`).toString('base64') });
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      const res = await send(ws, {
        from,
        to: [`ahead${i}@example.com`],
        ...(i === 1 ? { cc: ['copy@example.com'] } : {}),
        subject: `Ahead ${i}`,
        html: `<p>Ahead ${i}</p>`,
        ...(i === 2 ? { headers: { 'X-Ahead': 'two' } } : {}),
        ...(i !== 3 ? { attachments: [file(`${i}-z.txt`), file(`${i}-a.txt`)] } : {}),
      });
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json().id);
    }
    const foreign = await send(other.ws, {
      from: other.from,
      to: ['theirs@example.com'],
      subject: 'x',
      html: '<p>x</p>',
    });
    expect(foreign.statusCode).toBe(202);
    // Email 2's files stored in the other order than they were written: they come in the order of their position.
    const k = h.db.kysely;
    const move = (from: number, to: number) =>
      k
        .updateTable('email_attachments')
        .set({ position: to })
        .where('email_id', '=', ids[1]!)
        .where('position', '=', from)
        .execute();
    await move(0, 9);
    await move(1, 0);
    await move(9, 1);
    const store = new SqlDeliveryStore(h.db);
    const alone = await Promise.all(ids.map((id) => store.broadcastForSending(ws.id, id, TEST_SECRET)));
    const memo = new Map<string, Promise<unknown>>();
    // An id twice and another workspace's: each read once, under this workspace.
    store.prefetchForSending(ws.id, [...ids, ids[0]!, foreign.json().id], memo);
    expect(memo.size).toBe(2 * 4);
    for (const [key, value] of memo)
      if (key.endsWith(foreign.json().id)) expect(await value, `${key} read ahead`).toBeUndefined();
    const ahead = await Promise.all(ids.map((id) => store.broadcastForSending(ws.id, id, TEST_SECRET, null, memo)));
    expect(ahead).toEqual(alone);
    expect(ahead.map((b) => b?.transactional?.attachments.map((a) => a.filename))).toEqual([
      ['1-z.txt', '1-a.txt'],
      ['2-a.txt', '2-z.txt'],
      [],
    ]);
    expect(ahead[0]?.transactional?.cc).toEqual(['copy@example.com']);
    expect(ahead[1]?.transactional?.headers).toEqual({ 'X-Ahead': 'two' });
    expect(Buffer.from(ahead[1]!.transactional!.attachments[0]!.content).toString()).toBe('file 2-a.txt');
    // Read ahead under this workspace, the other's email is not found, as a read of its own would not find it.
    expect(await store.broadcastForSending(ws.id, foreign.json().id, TEST_SECRET, null, memo)).toBeUndefined();
    expect(await store.broadcastForSending(ws.id, foreign.json().id, TEST_SECRET)).toBeUndefined();
    // What was read ahead is what broadcastForSending takes: an entry put in its place is what it gives.
    const third = [...memo.keys()].find((key) => key.startsWith('broadcast') && key.endsWith(ids[2]!))!;
    memo.set(third, Promise.resolve(undefined));
    expect(await store.broadcastForSending(ws.id, ids[2]!, TEST_SECRET, null, memo)).toBeUndefined();
    expect(await store.broadcastForSending(ws.id, ids[2]!, TEST_SECRET)).toBeDefined();
    await sending.drain(); // sent, so that the next test's batch is its own
  });

  it('emails are made ten to a render task, and at most 1 MiB of content and files to a task (one larger goes alone)', async () => {
    const { ws, from } = await setup();
    const big = Buffer.alloc(700 * 1024, 7).toString('base64');
    const ids: string[] = [];
    for (let i = 1; i <= 14; i++) {
      const res = await send(ws, {
        from,
        to: [`chunk${i}@example.com`],
        subject: `Chunk ${i}`,
        text: `Email ${i}`,
        // Two of 700 KiB: not in one task together (a task's messages come back in one buffer).
        ...(i === 3 || i === 4 ? { attachments: [{ filename: `big${i}.bin`, content: big }] } : {}),
      });
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json().id);
    }
    const tasks: string[][] = [];
    const inThread = createRenderer(0, pino({ level: 'silent' }));
    const pipeline = sending.build({
      batchSize: 50,
      renderer: {
        threads: 0,
        nice: 0,
        render: (task) => {
          tasks.push(task.items.map((i) => i.message?.broadcast.emailContent.subject ?? '?'));
          return inThread.render(task);
        },
        close: () => inThread.close(),
      },
    });
    expect(await pipeline.sendBatch()).toBe(14);
    await pipeline.close();
    // Fewer tasks than emails; none over ten; the two large ones never together (in the order claimed, e.g. SQLite's:
    // [1, 2, 3], [4 … 13], [14]).
    expect(tasks.flat().sort()).toEqual(ids.map((_, i) => `Chunk ${i + 1}`).sort());
    expect(tasks.length).toBeLessThanOrEqual(4);
    for (const t of tasks) {
      expect(t.length).toBeLessThanOrEqual(10);
      expect(t.includes('Chunk 3') && t.includes('Chunk 4')).toBe(false);
    }
    for (let i = 1; i <= 14; i++) {
      const m = sending.smtp.received.find((r) => r.to === `chunk${i}@example.com`)!;
      expect(m.parsed.subject).toBe(`Chunk ${i}`);
      expect(m.parsed.attachments.map((a) => a.size)).toEqual(i === 3 || i === 4 ? [700 * 1024] : []);
    }
  });

  it('measures a file name in characters as the schema does (200 emoji are 400 UTF-16 units, and fine)', async () => {
    const { ws, from } = await setup();
    const filename = `${'😀'.repeat(200)}.txt`;
    const res = await send(ws, {
      from,
      to: ['ada@example.com'],
      subject: 'Emoji',
      text: 'see attached',
      attachments: [{ filename, content: Buffer.from('hi').toString('base64') }],
    });
    expect(res.statusCode, res.body).toBe(202);
    expect((await get(ws, res.json().id)).attachments).toEqual([{ filename, contentType: 'text/plain', size: 2 }]);
  });

  describe('bad input: a clear 4xx and nothing queued', () => {
    const tooBig = Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64');
    /** Each case changes a good body (`undefined` takes a field out). */
    const cases: { name: string; change: Record<string, unknown>; status: number; code: string; path?: string }[] = [
      ['attachments over 10 MiB', { attachments: [{ filename: 'big.bin', content: tooBig }] }, '/attachments'],
      ['CRLF in a header value', { headers: { 'X-Evil': 'a\r\nBcc: victim@example.com' } }, '/headers/X-Evil'],
      ['a forbidden header (From)', { headers: { From: 'ceo@example.com' } }, '/headers/From'],
      ['a forbidden header (DKIM-Signature)', { headers: { 'dkim-signature': 'v=1' } }, '/headers/dkim-signature'],
      ['a forbidden header (Content-Type)', { headers: { 'Content-Type': 'text/html' } }, '/headers/Content-Type'],
      ['a header name that is not a field name', { headers: { 'X Bad': '1' } }, '/headers/X Bad'],
      ['`to` of 51', { to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }, '/to'],
      ['bad base64', { attachments: [{ filename: 'a.txt', content: 'not base64!' }] }, '/attachments/0/content'],
      [
        'base64 without its padding',
        { attachments: [{ filename: 'a.txt', content: 'aGVsbG8' }] },
        '/attachments/0/content',
      ],
      ['a recipient that is not an address', { to: ['a@example.com', 'nope'] }, '/to/1'],
      ['no content', { text: undefined }, '/html'],
      ['no subject', { subject: undefined }, '/subject'],
      ['an unknown field', { priority: 'high' }, undefined],
    ]
      .map(([name, change, path]) => ({
        name: name as string,
        change: change as Record<string, unknown>,
        status: 422,
        code: 'validation_failed',
        path: path as string | undefined,
      }))
      .concat([
        {
          name: 'an unverified from',
          change: { from: 'x@unverified.example' },
          status: 422,
          code: 'sender_domain_not_verified',
          path: '/from',
        },
        {
          name: 'an unknown template',
          change: { templateId: 'no-such-template', subject: undefined, text: undefined },
          status: 422,
          code: 'invalid_reference',
          path: '/templateId',
        },
      ]);
    it.each(cases)('$name → $status $code', async ({ change, status, code, path }) => {
      const { ws, from } = await setup();
      const res = await send(
        ws,
        JSON.parse(JSON.stringify({ from, to: ['a@example.com'], subject: 's', text: 't', ...change })),
      );
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().code).toBe(code);
      if (path) expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(path);
      expect(await written(ws)).toEqual(NOTHING);
    });

    it('without send:emails: 403; a send:emails key sends and reads', async () => {
      const { ws, from } = await setup();
      const reader = await h.key(ws, ['read:broadcasts']);
      const r = await h.call(reader, 'POST', '/v1/emails', { from, to: ['a@example.com'], subject: 's', text: 't' });
      expect(r.statusCode).toBe(403);
      expect(r.json().detail).toContain('send:emails');
      const sender = await h.key(ws, ['send:emails']);
      const ok = await h.call(sender, 'POST', '/v1/emails', { from, to: ['a@example.com'], subject: 's', text: 't' });
      expect(ok.statusCode, ok.body).toBe(202);
      expect((await h.call(sender, 'GET', `/v1/emails/${ok.json().id}`)).statusCode).toBe(200);
    });
  });

  it('a recipient suppressed for a hard bounce is SUPPRESSED and not mailed; an unsubscribed contact and a MANUAL suppression are still mailed', async () => {
    const { ws, from } = await setup();
    await insertContact(h, ws, { email: 'gone@example.com', status: 'UNSUBSCRIBED' });
    const now = new Date().toISOString();
    for (const [email, reason] of [
      ['bounced@example.com', 'BOUNCED'],
      ['complained@example.com', 'COMPLAINED'],
      ['manual@example.com', 'MANUAL'],
    ] as const)
      await h.db.kysely
        .insertInto('suppressions')
        .values({
          id: newId('sup'),
          workspace_id: ws.id,
          email,
          reason,
          delivery_id: null,
          broadcast_id: null,
          detail: null,
          created_at: now,
        })
        .execute();
    const res = await send(ws, {
      from,
      to: ['gone@example.com', 'bounced@example.com', 'complained@example.com', 'manual@example.com'],
      subject: 'Password reset',
      text: 'Reset it',
    });
    expect(res.statusCode, res.body).toBe(202);
    await sending.drain();
    expect(
      sending.smtp.received
        .filter((m) => m.parsed.subject === 'Password reset')
        .map((m) => m.to)
        .sort(),
    ).toEqual(['gone@example.com', 'manual@example.com']);
    const email = await get(ws, res.json().id);
    const by = Object.fromEntries(email.recipients.map((r: { email: string; status: string }) => [r.email, r.status]));
    expect(by).toEqual({
      'gone@example.com': 'SENT',
      'bounced@example.com': 'SUPPRESSED',
      'complained@example.com': 'SUPPRESSED',
      'manual@example.com': 'SENT',
    });
    expect(email.status).toBe('SENT');
    // Every recipient suppressed: the email is SUPPRESSED.
    const all = await send(ws, { from, to: ['bounced@example.com'], subject: 'x', text: 'y' });
    expect((await get(ws, all.json().id)).status).toBe('SUPPRESSED');
  });

  it('a hard bounce at send time: the recipient BOUNCED, the email BOUNCED, email.bounced with emailId (event and signed webhook), the address suppressed', async () => {
    const { ws, from } = await setup();
    // A real receiver on loopback, subscribed before the send (Standard Webhooks, docs/webhooks.md).
    const bodies: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hooks = new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: true, allowPrivate: true });
    const endpoint = await hooks.create(ws.id, {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      eventTypes: ['email.bounced'],
    });
    sending.smtp.setPolicy((a) =>
      a.startsWith('unknown') ? { code: 550, message: '5.1.1 <unknown@example.com>: User unknown' } : null,
    );
    const res = await send(ws, { from, to: ['unknown@example.com'], subject: 'Welcome', text: 'Hi' });
    const { id } = res.json();
    await sending.drain();
    const email = await get(ws, id);
    expect(email.status).toBe('BOUNCED');
    expect(email.recipients[0]).toMatchObject({
      email: 'unknown@example.com',
      status: 'BOUNCED',
      lastError: expect.stringContaining('5.1.1'),
    });
    const events = (await h.call(ws.key, 'GET', '/v1/events?type=email.bounced')).json().data;
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ emailId: id, email: 'unknown@example.com', bounceClass: 'hard' });
    // The email's own events say so too (the console's detail page reads them).
    const own = (await h.call(ws.key, 'GET', `/v1/emails/${id}/events`)).json().data;
    expect(own.map((e: { type: string }) => e.type)).toEqual(['email.bounced']);
    const dispatcher = new WebhookDispatcher(h.db, {
      workerId: 'emails-test',
      secret: TEST_SECRET,
      allowHttp: true,
      allowPrivate: true,
      clock: () => new Date(),
    });
    try {
      while ((await dispatcher.fanOut()) > 0);
      while ((await dispatcher.dispatch()) > 0);
    } finally {
      await dispatcher.close();
      await new Promise((resolve) => server.close(resolve));
      await h.db.kysely.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
    }
    expect(bodies).toHaveLength(1);
    const verified = new Webhook(endpoint.secret.replace(/^whsec_/, '')).verify(
      bodies[0]!.body,
      bodies[0]!.headers as Record<string, string>,
    ) as { type: string; data: { data: { emailId: string } } };
    expect(verified.type).toBe('email.bounced');
    expect(verified.data.data.emailId).toBe(id);
    const sup = (await h.call(ws.key, 'GET', '/v1/suppressions?reason=BOUNCED')).json().data;
    expect(sup.map((s: { email: string }) => s.email)).toEqual(['unknown@example.com']);
    // The next email to it is SUPPRESSED.
    const again = await send(ws, { from, to: ['unknown@example.com'], subject: 'Welcome', text: 'Hi' });
    expect((await get(ws, again.json().id)).recipients[0].status).toBe('SUPPRESSED');
  });

  it('templates: an alias (unique per workspace, 409 alias_taken; 422 for a bad one) and versions; an email by id or alias renders Liquid over data and records the version', async () => {
    const { ws, from } = await setup();
    const created = await h.call(ws.key, 'POST', '/v1/templates', {
      name: 'Receipt',
      alias: 'order-receipt',
      subject: 'Receipt for order {{ orderId }}',
      html: '<p>Hi {{ data.name }}, your total is {{ total }}.</p>',
      text: 'Hi {{ name }}, your total is {{ total }}.',
    });
    expect(created.statusCode, created.body).toBe(201);
    const t = created.json();
    expect(t).toMatchObject({ alias: 'order-receipt', version: 1 });
    const taken = await h.call(ws.key, 'POST', '/v1/templates', { name: 'Other', alias: 'order-receipt' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().code).toBe('alias_taken');
    const bad = await h.call(ws.key, 'POST', '/v1/templates', { name: 'Other', alias: 'Order Receipt' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/alias');
    // Another workspace may use the same alias.
    const other = await h.workspace();
    expect((await h.call(other.key, 'POST', '/v1/templates', { name: 'R', alias: 'order-receipt' })).statusCode).toBe(
      201,
    );

    const first = await send(ws, {
      from,
      to: ['ada@example.com'],
      templateId: 'order-receipt',
      data: { orderId: '1042', name: '<Ada>', total: '€42' },
    });
    expect(first.statusCode, first.body).toBe(202);
    // A change of the content is version 2; a rename alone is not.
    const renamed = await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { name: 'Receipt (shop)' });
    expect(renamed.json().version).toBe(1);
    const changed = await h.call(ws.key, 'PUT', `/v1/templates/${t.id}`, { subject: 'Your receipt {{ orderId }}' });
    expect(changed.json()).toMatchObject({ version: 2, alias: 'order-receipt' });
    const versions = await h.db.kysely
      .selectFrom('template_versions')
      .select(['version', 'subject'])
      .where('template_id', '=', t.id)
      .orderBy('version')
      .execute();
    expect(versions.map((v) => [Number(v.version), v.subject])).toEqual([
      [1, 'Receipt for order {{ orderId }}'],
      [2, 'Your receipt {{ orderId }}'],
    ]);
    const second = await send(ws, { from, to: ['ada@example.com'], templateId: t.id, data: { orderId: '7' } });
    await sending.drain();
    const a = await get(ws, first.json().id);
    expect(a).toMatchObject({
      subject: 'Receipt for order 1042',
      templateId: t.id,
      templateVersion: 1,
      html: '<p>Hi &lt;Ada&gt;, your total is €42.</p>',
      text: 'Hi <Ada>, your total is €42.',
      status: 'SENT',
    });
    expect(await get(ws, second.json().id)).toMatchObject({ subject: 'Your receipt 7', templateVersion: 2 });
    expect(
      (await h.call(ws.key, 'GET', `/v1/emails?templateId=${t.id}`)).json().data.map((e: { id: string }) => e.id),
    ).toEqual([second.json().id, first.json().id]);
    const m = sending.smtp.received.find((r) => r.parsed.subject === 'Receipt for order 1042')!;
    expect(m.parsed.html).toContain('Hi &lt;Ada&gt;');
    // html beside a template is refused.
    const both = await send(ws, { from, to: ['a@example.com'], templateId: t.id, html: '<p>x</p>' });
    expect(both.statusCode).toBe(422);
  });

  it('Idempotency-Key: a replay answers the first id and queues nothing more; another body is 422', async () => {
    const { ws, from } = await setup();
    const body = { from, to: ['a@example.com'], subject: 'Once', text: 'only once' };
    const first = await send(ws, body, { 'idempotency-key': 'order-1042' });
    const again = await send(ws, body, { 'idempotency-key': 'order-1042' });
    expect(first.statusCode).toBe(202);
    expect(again.statusCode).toBe(202);
    expect(again.json().id).toBe(first.json().id);
    expect((await written(ws)).emails).toBe(1);
    const other = await send(ws, { ...body, text: 'changed' }, { 'idempotency-key': 'order-1042' });
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_key_reused');
    // The service's own key (what SMTP submission passes): the same id, once.
    const a = await h.app.services.emails.sendEmail(ws.id, null, body, { idempotencyKey: 'smtp-1' });
    const b = await h.app.services.emails.sendEmail(ws.id, null, body, { idempotencyKey: 'smtp-1' });
    expect(b.id).toBe(a.id);
    expect((await written(ws)).emails).toBe(2);
  });

  it("another workspace's email is 404, and its lists show nothing of it", async () => {
    const { ws, from } = await setup();
    const { id } = (await send(ws, { from, to: ['a@example.com'], subject: 's', text: 't' })).json();
    const other = await h.workspace();
    expect((await h.call(other.key, 'GET', `/v1/emails/${id}`)).statusCode).toBe(404);
    expect((await h.call(other.key, 'GET', `/v1/emails/${id}/events`)).statusCode).toBe(404);
    expect((await h.call(other.key, 'GET', '/v1/emails')).json().data).toEqual([]);
    expect((await h.call(other.key, 'GET', '/v1/emails?recipient=a@example.com')).json().data).toEqual([]);
    expect((await h.call(ws.key, 'GET', '/v1/emails/em_nothing')).statusCode).toBe(404);
  });

  it("its own lane: with thousands of a broadcast's deliveries queued, an email is claimed in the next round", async () => {
    const { ws, domain, from } = await setup();
    const k = h.db.kysely;
    const now = new Date().toISOString();
    const contacts = Array.from({ length: 3000 }, (_, i) => ({
      id: newId('ct'),
      workspace_id: ws.id,
      email: `reader${i}@example.com`,
      first_name: null,
      last_name: null,
      properties: '{}',
      status: 'SUBSCRIBED' as const,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < contacts.length; i += 500)
      await k
        .insertInto('contacts')
        .values(contacts.slice(i, i + 500))
        .execute();
    const bc = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Big',
      from: `news@${domain.name}`,
      emailContent: { subject: 'News', text: 'News' },
    });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.json().id}/send`)).statusCode).toBe(202);
    while ((await sending.pipeline.materialize()) > 0);
    const backlog = await k
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('broadcast_id', '=', bc.json().id)
      .where('status', '=', 'QUEUED')
      .executeTakeFirstOrThrow();
    expect(Number(backlog.n)).toBe(3000);
    const { id } = (await send(ws, { from, to: ['urgent@example.com'], subject: 'Your code', text: '123456' })).json();
    await sending.pipeline.sendBatch();
    expect((await get(ws, id)).status).toBe('SENT');
    expect(sending.smtp.received.some((m) => m.to === 'urgent@example.com')).toBe(true);
    // The broadcast's backlog is still nearly all there: the email did not wait for it.
    const left = await k
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('broadcast_id', '=', bc.json().id)
      .where('status', '=', 'QUEUED')
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBeGreaterThan(2990);
    // Cancel the broadcast so later tests do not drain it.
    await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.json().id}/cancel`);
  });

  it("the emails loop: sendBatch('transactional') takes only emails, and retries them on their own schedule", async () => {
    const { ws, domain, from } = await setup();
    const k = h.db.kysely;
    for (let i = 0; i < 30; i++) await insertContact(h, ws, { email: `loop${i}@example.com` });
    const bc = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Backlog',
      from: `news@${domain.name}`,
      emailContent: { subject: 'News', text: 'News' },
    });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.json().id}/send`)).statusCode).toBe(202);
    while ((await sending.pipeline.materialize()) > 0);
    // Its retries: 3 attempts, the first retry 40 minutes later, the next at most 50 (the broadcasts' are 2 and 1 ms).
    const pipeline = sending.build({
      emails: { batchSize: 5, maxAttempts: 3, backoffBaseMs: 2_400_000, backoffMaxMs: 3_000_000, pacingWindowMs: 500 },
    });
    sending.smtp.setPolicy((a) => (a === 'later@example.com' ? { code: 451, message: '4.3.0 try later' } : null));
    const ok = (await send(ws, { from, to: ['now@example.com'], subject: 'Code', text: '1' })).json().id as string;
    const later = (await send(ws, { from, to: ['later@example.com'], subject: 'Code', text: '2' })).json().id as string;
    const before = Date.now();
    expect(await pipeline.sendBatch('transactional')).toBe(2);
    expect((await get(ws, ok)).status).toBe('SENT');
    // Nothing of the broadcast was claimed by the emails loop.
    const queued = await k
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('broadcast_id', '=', bc.json().id)
      .where('status', '=', 'QUEUED')
      .where('attempts', '=', 0)
      .executeTakeFirstOrThrow();
    expect(Number(queued.n)).toBe(30);
    const retry = await k
      .selectFrom('deliveries')
      .select(['status', 'attempts', 'next_attempt_at'])
      .where('broadcast_id', '=', later)
      .executeTakeFirstOrThrow();
    expect(retry.status).toBe('QUEUED');
    const wait = Date.parse(String(retry.next_attempt_at)) - before;
    expect(wait).toBeGreaterThanOrEqual(2_400_000 - 1000);
    expect(wait).toBeLessThan(2_400_000 + 60_000);
    // Due again (as if 40 minutes had passed): the second retry waits the longest wait, 50 minutes, not 80.
    await k
      .updateTable('deliveries')
      .set({ next_attempt_at: new Date(0).toISOString() })
      .where('broadcast_id', '=', later)
      .execute();
    const again = Date.now();
    expect(await pipeline.sendBatch('transactional')).toBe(1);
    const second = await k
      .selectFrom('deliveries')
      .select(['status', 'attempts', 'next_attempt_at'])
      .where('broadcast_id', '=', later)
      .executeTakeFirstOrThrow();
    expect([second.status, Number(second.attempts)]).toEqual(['QUEUED', 2]);
    expect(Date.parse(String(second.next_attempt_at)) - again).toBeLessThan(3_000_000 + 60_000);
    expect(Date.parse(String(second.next_attempt_at)) - again).toBeGreaterThanOrEqual(3_000_000 - 1000);
    // The third attempt is the last: the recipient's delivery ends there rather than being queued again.
    await k
      .updateTable('deliveries')
      .set({ next_attempt_at: new Date(0).toISOString() })
      .where('broadcast_id', '=', later)
      .execute();
    expect(await pipeline.sendBatch('transactional')).toBe(1);
    const last = await k
      .selectFrom('deliveries')
      .select(['status', 'attempts'])
      .where('broadcast_id', '=', later)
      .executeTakeFirstOrThrow();
    expect([last.status, Number(last.attempts)]).toEqual(['FAILED', 3]);
    expect((await get(ws, later)).status).toBe('FAILED');
    await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.json().id}/cancel`);
  });

  it('the per-key rate limit: 429 with Retry-After past EMAILS_RATE_LIMIT a minute', async () => {
    const app = await buildApp({
      db: h.db,
      config: { logLevel: 'silent', publicUrl: 'http://localhost:3000', secret: TEST_SECRET, emailsRateLimit: 2 },
      logger: false,
    });
    try {
      await app.ready();
      const { ws, from } = await setup();
      const post = (key = ws.key) =>
        app.inject({
          method: 'POST',
          url: '/v1/emails',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ from, to: ['a@example.com'], subject: 's', text: 't' }),
        });
      expect((await post()).statusCode).toBe(202);
      expect((await post()).statusCode).toBe(202);
      const third = await post();
      expect(third.statusCode).toBe(429);
      expect(third.json().code).toBe('rate_limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      // Another key has its own budget.
      expect((await post(await h.key(ws, ['send:emails']))).statusCode).toBe(202);
    } finally {
      await app.close();
    }
  });
});
