import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { expect, it, onTestFinished } from 'vitest';
import { DEFAULT_PIPELINE_OPTIONS, DeliveryPipeline } from '../../src/sending/deliveries/pipeline.js';
import { createRenderer } from '../../src/sending/deliveries/send-threads.js';
import { SqlDeliveryStore } from '../../src/composition/sql-delivery-store.js';
import { countQueued } from '../../src/sending/deliveries/deliveries.repository.js';
import { OPEN_STATUSES } from '../../src/sending/deliveries/deliveries.state.js';
import { createMailer } from '../../src/mail/transport.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, insertSegment, insertTopic, setTopicChoice, verifiedDomain } from '../helpers/fixtures.js';
import type { Received } from '../helpers/smtp.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';

const silent = pino({ level: 'silent' });

/** A header exactly as it was on the wire (unfolded). */
function header(m: Received, name: string): string {
  return m.parsed.headerLines.find((l) => l.key === name)?.line.replace(/\r?\n\s+/g, ' ') ?? '';
}

describeApi('sending broadcasts', (h) => {
  const sending = useSending(h, { workerId: 'test-worker', leaseMs: 5000, batchSize: 7, materializeBatch: 4 });

  async function setup(extra: Record<string, unknown> = {}) {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
    const from = `Acme <news@${domain.name}>`;
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Launch',
      from,
      replyTo: `help@${domain.name}`,
      emailContent: {
        subject: 'Hi {{ contact.firstName | default: "there" }}',
        html: '<html><body><p>Hello {{ contact.firstName }} ({{ contact.properties.plan }})</p></body></html>',
        previewText: 'Big news',
      },
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return { ws, domain, broadcast: res.json() };
  }

  const status = async (ws: TestWorkspace, id: string) => (await h.call(ws.key, 'GET', `/v1/broadcasts/${id}`)).json();

  // In the pipeline's own thread (SEND_THREADS=0), in a send thread (piscina, the worker file from the sources), and
  // by a real pool whose every task fails (as a thread that crashed would): the chunks are then made in the pipeline's thread.
  const failingPool = () =>
    createRenderer(1, undefined, {
      workerFile: fileURLToPath(new URL('../fixtures/send-thread-fails.mjs', import.meta.url)),
    });
  it.each([
    { threads: 0, where: "in the pipeline's thread" },
    { threads: 1, where: 'in a send thread' },
    { threads: -1, where: 'again after its send thread failed' },
  ])(
    'sends one personalised, DKIM-signed message to every SUBSCRIBED contact, with RFC 8058 headers (made $where)',
    async ({ threads }) => {
      if (threads) {
        const original = sending.pipeline;
        sending.pipeline = sending.build(threads > 0 ? { sendThreads: threads } : { renderer: failingPool() });
        onTestFinished(async () => {
          await sending.pipeline.close();
          sending.pipeline = original;
        });
      }
      const { ws, domain, broadcast } = await setup();
      const emails = Array.from({ length: 10 }, (_, i) => `person${i}@example.com`);
      for (const [i, email] of emails.entries())
        await insertContact(h, ws, { email, firstName: `P${i}`, properties: { plan: i % 2 ? 'pro' : 'free' } });
      await insertContact(h, ws, { email: 'gone@example.com', status: 'UNSUBSCRIBED' });
      await insertContact(h, ws, { email: 'bounced@example.com', status: 'BOUNCED' });
      await insertContact(h, ws, { email: 'complained@example.com', status: 'COMPLAINED' });
      await insertContact(h, ws, { email: 'pending@example.com', status: 'PENDING' });
      const other = await h.workspace();
      await insertContact(h, other, { email: 'stranger@example.com' });

      const sent = await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
      expect(sent.statusCode).toBe(202);
      expect(sent.json().status).toBe('SENDING');
      await sending.drain();

      expect(sending.smtp.received.map((m) => m.to).sort()).toEqual([...emails].sort());
      const publicKey = domain.records.find((r: { name: string }) => r.name.includes('._domainkey.'))!;
      for (const m of sending.smtp.received) {
        const i = Number(m.to.match(/person(\d+)/)![1]);
        expect(m.parsed.subject).toBe(`Hi P${i}`);
        expect(m.parsed.html).toContain(`Hello P${i} (${i % 2 ? 'pro' : 'free'})`);
        expect(m.parsed.html).toMatch(/display:none[^>]*>Big news(&zwnj;&nbsp;)+</);
        expect(m.parsed.text).toContain(`Hello P${i}`);
        expect(m.parsed.from?.value[0]).toMatchObject({ name: 'Acme', address: `news@${domain.name}` });
        expect(m.parsed.replyTo?.text).toBe(`help@${domain.name}`);
        expect(m.parsed.messageId).toMatch(new RegExp(`^<dlv_[0-9A-Z]{26}@${domain.name.replace('.', '\\.')}>$`));
        expect(header(m, 'list-unsubscribe')).toMatch(
          new RegExp(
            `^List-Unsubscribe:\\s*<https://mail\\.example\\.test/unsubscribe/[A-Za-z0-9_-]{32}>,\\s*<mailto:unsubscribe\\+[a-z0-9]{39}@bounces\\.${domain.name.replace('.', '\\.')}\\?subject=unsubscribe>$`,
          ),
        );
        expect(header(m, 'list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
        expect(header(m, 'list-id')).toBe(
          `List-ID: "Test workspace" <all.${ws.id.toLowerCase().replace('_', '-')}.${domain.name}>`,
        );
        expect(header(m, 'feedback-id')).toBe(`Feedback-ID: ${broadcast.id}:${ws.id}:formcast`);
        expect(header(m, 'precedence')).toBe('Precedence: bulk');
        // VERP: the envelope sender names this delivery, at the bounce domain
        expect(m.mailFrom).toMatch(
          new RegExp(`^bounces\\+d[0-9a-z]{38}@bounces\\.${domain.name.replace('.', '\\.')}$`),
        );
        expect(m.parsed.html).toContain('/unsubscribe/'); // the footer, since the template has no unsubscribe_url
        // DKIM: verified against the record the domain publishes, over the headers that matter
        const result = await dkimVerify(m.raw, {
          resolver: async (name: string) => (name === publicKey.name ? [[publicKey.value]] : []),
        });
        expect(result.results[0]?.status.result).toBe('pass');
        const signedHeaders = header(m, 'dkim-signature')
          .replace(/\s+/g, '')
          .match(/;h=([^;]+)/)![1]!
          .toLowerCase()
          .split(':');
        // Oversigned: listed once more than present, so an added From, Subject or Reply-To breaks the signature.
        for (const name of [
          'from',
          'to',
          'subject',
          'date',
          'message-id',
          'list-unsubscribe',
          'list-unsubscribe-post',
          'list-id',
        ]) {
          expect(
            signedHeaders.filter((n) => n === name),
            name,
          ).toHaveLength(2);
        }
        expect(signedHeaders.filter((n) => n === 'reply-to')).toHaveLength(2);
      }
      // each recipient has its own unsubscribe link
      expect(new Set(sending.smtp.received.map((m) => header(m, 'list-unsubscribe'))).size).toBe(10);

      const done = await status(ws, broadcast.id);
      expect(done).toMatchObject({
        status: 'SENT',
        stats: { recipients: 10, queued: 0, sent: 10, failed: 0, bounced: 0, unsubscribed: 0 },
      });
      expect(done.sentAt).toMatch(/Z$/);
      const deliveries = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries?limit=100`)).json();
      expect(deliveries.data).toHaveLength(10);
      for (const d of deliveries.data) expect(d).toMatchObject({ status: 'SENT', attempts: 1, lastError: null });
      // the database holds one delivery per recipient
      const row = await h.db.kysely
        .selectFrom('deliveries')
        .selectAll()
        .where('broadcast_id', '=', broadcast.id)
        .executeTakeFirstOrThrow();
      await expect(
        h.db.kysely
          .insertInto('deliveries')
          .values({ ...row, id: 'dlv_dup', unsubscribe_token: 'x'.repeat(32) })
          .execute(),
      ).rejects.toThrow(/unique|UNIQUE/);
      // a second send is refused; a finished broadcast cannot be canceled or edited
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).json().code).toBe('invalid_state');
      expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${broadcast.id}`, { name: 'x' })).json().code).toBe(
        'broadcast_not_editable',
      );
    },
  );

  it('while sending is busy, the audience is written with pauses (a share of the time); then every recipient once', async () => {
    const pauses: number[] = [];
    const original = sending.pipeline;
    sending.pipeline = sending.build({
      materializeBatch: 20,
      batchSize: 5,
      materializeShare: 0.25,
      pause: async (ms) => void pauses.push(ms),
    });
    onTestFinished(async () => {
      await sending.pipeline.close();
      sending.pipeline = original;
    });
    const { ws, broadcast } = await setup();
    for (let i = 0; i < 90; i++) await insertContact(h, ws, { email: `busy${i}@example.com`, firstName: `B${i}` });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).statusCode).toBe(202);
    // Nothing due yet: the first slices are written back to back.
    expect(await sending.pipeline.materialize(2)).toBe(40);
    expect(pauses).toEqual([]);
    // A claim comes back full (more is due than a batch takes): sending is busy, and each slice with more after it waits.
    expect(await sending.pipeline.sendBatch()).toBe(5);
    expect(await sending.pipeline.materialize(5)).toBe(50);
    expect(pauses).toHaveLength(2); // after the 3rd and 4th slices; the 5th is the last, and the job is done
    for (const ms of pauses) expect(ms).toBeGreaterThanOrEqual(0);
    await sending.drain();
    const got = sending.smtp.received.map((m) => m.to).sort();
    expect(got).toEqual(Array.from({ length: 90 }, (_, i) => `busy${i}@example.com`).sort());
    expect((await status(ws, broadcast.id)).status).toBe('SENT');
  });

  it('while sending is busy, the audience is written no further ahead of sending (any worker) than the lead; then every recipient once', async () => {
    const pauses: number[] = [];
    const original = sending.pipeline;
    sending.pipeline = sending.build({
      materializeBatch: 20,
      batchSize: 5,
      materializeLead: 30,
      leadCountEveryMs: 0,
      pause: async (ms) => void pauses.push(ms),
    });
    onTestFinished(async () => {
      await sending.pipeline.close();
      sending.pipeline = original;
    });
    const { ws, broadcast } = await setup();
    for (let i = 0; i < 90; i++) await insertContact(h, ws, { email: `lead${i}@example.com`, firstName: `L${i}` });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).statusCode).toBe(202);
    const queued = async () =>
      Number(
        (
          await h.db.kysely
            .selectFrom('deliveries')
            .select((e) => e.fn.countAll().as('n'))
            .where('workspace_id', '=', ws.id)
            .where('broadcast_id', '=', broadcast.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    // Nothing due yet: the first slices are written back to back, past the lead.
    expect(await sending.pipeline.materialize(2)).toBe(40);
    expect(pauses).toEqual([]);
    // A full claim: sending is busy, and 35 written beyond what was claimed is past the lead of 30: no slice, waits.
    expect(await sending.pipeline.sendBatch()).toBe(5);
    expect(await sending.pipeline.materialize(3)).toBe(0);
    expect(pauses).toEqual([1000, 1000, 1000]);
    expect(await queued()).toBe(40);
    // The lead as the store counts it: this workspace's QUEUED deliveries of the broadcast, up to the limit; none of another's.
    expect(await countQueued(h.db.kysely, ws.id, broadcast.id, 100)).toBe(35);
    expect(await countQueued(h.db.kysely, ws.id, broadcast.id, 10)).toBe(10);
    expect(await countQueued(h.db.kysely, (await h.workspace()).id, broadcast.id, 100)).toBe(0);
    // Two more batches sent, by another worker: the lead is 25 (counted in the database: this process's own counts
    // would say 35), so one slice is written, and then it waits again.
    const other = sending.build({ batchSize: 5 });
    onTestFinished(() => other.close());
    expect(await other.sendBatch()).toBe(5);
    expect(await other.sendBatch()).toBe(5);
    pauses.length = 0;
    expect(await sending.pipeline.materialize(2)).toBe(20);
    expect(pauses).toEqual([1000]);
    expect(await queued()).toBe(60);
    await sending.drain();
    const got = sending.smtp.received.map((m) => m.to).sort();
    expect(got).toEqual(Array.from({ length: 90 }, (_, i) => `lead${i}@example.com`).sort());
    expect((await status(ws, broadcast.id)).status).toBe('SENT');
  });

  it('send needs a complete broadcast (422 broadcast_incomplete) and changes nothing', async () => {
    const ws = await h.workspace();
    const b = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Empty' })).json();
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('broadcast_incomplete');
    expect((await status(ws, b.id)).status).toBe('DRAFT');
  });

  it('a segment and a topic narrow the audience', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, 'narrow.test');
    const topic = await insertTopic(h, ws, 'OPT_OUT');
    const segment = await insertSegment(h, ws, { field: 'properties.plan', op: 'eq', value: 'pro' });
    const a = await insertContact(h, ws, { email: 'a@example.com', properties: { plan: 'pro' } });
    const b = await insertContact(h, ws, { email: 'b@example.com', properties: { plan: 'pro' } });
    await insertContact(h, ws, { email: 'c@example.com', properties: { plan: 'free' } });
    await setTopicChoice(h, ws, a, topic, true);
    await setTopicChoice(h, ws, b, topic, false);
    const bc = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Pro news',
        from: `news@${domain.name}`,
        topicId: topic,
        segmentId: segment,
        emailContent: { subject: 'S', text: 'T' },
      })
    ).json();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${bc.id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['a@example.com']);
    // a text-only broadcast has no HTML part
    expect(sending.smtp.received[0]!.parsed.html).toBe(false);
  });

  it('4xx replies are retried with backoff; 5xx fails; 5.1.x bounces and marks the contact BOUNCED', async () => {
    const { ws, broadcast } = await setup();
    await insertContact(h, ws, { email: 'flaky@example.com' });
    await insertContact(h, ws, { email: 'rejected@example.com' });
    const unknown = await insertContact(h, ws, { email: 'unknown@example.com' });
    let flaky = 0;
    sending.smtp.setPolicy((address) => {
      if (address === 'flaky@example.com' && flaky++ < 2) return { code: 451, message: '4.3.0 Try again later' };
      if (address === 'rejected@example.com') return { code: 554, message: '5.7.1 Rejected by policy' };
      if (address === 'unknown@example.com') return { code: 550, message: '5.1.1 User unknown' };
      return null;
    });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['flaky@example.com']);
    const rows = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries`)).json().data;
    const by = Object.fromEntries(rows.map((d: { email: string }) => [d.email, d]));
    expect(by['flaky@example.com']).toMatchObject({ status: 'SENT', attempts: 3 });
    expect(by['rejected@example.com']).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(by['rejected@example.com'].lastError).toContain('5.7.1');
    expect(by['unknown@example.com']).toMatchObject({ status: 'BOUNCED' });
    expect(
      (await h.db.kysely.selectFrom('contacts').select('status').where('id', '=', unknown).executeTakeFirstOrThrow())
        .status,
    ).toBe('BOUNCED');
    expect(await status(ws, broadcast.id)).toMatchObject({
      status: 'SENT',
      stats: { recipients: 3, sent: 1, failed: 1, bounced: 1 },
    });
    // a bounced contact is never mailed again
    const again = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      ...broadcast,
      id: undefined,
      status: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      sendAt: undefined,
      sentAt: undefined,
      stats: undefined,
      pausedReason: undefined,
      sendAtLocal: undefined,
      localSendTime: undefined,
      name: 'Again',
    });
    expect(again.statusCode, again.body).toBe(201);
    sending.smtp.setPolicy(() => null);
    sending.smtp.received.length = 0;
    await h.call(ws.key, 'POST', `/v1/broadcasts/${again.json().id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to).sort()).toEqual(['flaky@example.com', 'rejected@example.com']);
  });

  it('temporary failures stop after the attempt limit; a broadcast that reached nobody is FAILED', async () => {
    const { ws, broadcast } = await setup();
    await insertContact(h, ws, { email: 'always-busy@example.com' });
    // Not a throttle ("421" or "4.7.x try later" wait for the destination without using attempts: pacing.test.ts).
    sending.smtp.setPolicy(() => ({ code: 451, message: '4.3.0 Temporary local problem' }));
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.drain();
    const [d] = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries`)).json().data;
    expect(d).toMatchObject({ status: 'FAILED', attempts: DEFAULT_PIPELINE_OPTIONS.maxAttempts });
    expect((await status(ws, broadcast.id)).status).toBe('FAILED');
  });

  it('a finished broadcast is logged once, with its counts (sent, failed, bounced)', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const original = sending.pipeline;
    sending.pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      sending.mailer,
      {
        ...DEFAULT_PIPELINE_OPTIONS,
        secret: TEST_SECRET,
        publicUrl: 'https://mail.example.test',
        backoffBaseMs: 1,
        workerId: 'logging-worker',
        batchSize: 7,
        materializeBatch: 4,
      },
      log as never,
    );
    onTestFinished(() => {
      sending.pipeline = original;
    });
    const { ws, broadcast } = await setup();
    for (const email of ['one@example.com', 'two@example.com', 'gone@example.com'])
      await insertContact(h, ws, { email });
    sending.smtp.setPolicy((rcpt) => (rcpt.startsWith('gone@') ? { code: 550, message: '5.1.1 No such user' } : null));
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.drain();
    await sending.pipeline.sweep();
    const finished = lines.filter((l) => l.broadcastId === broadcast.id && l.status);
    expect(finished).toEqual([
      expect.objectContaining({
        level: 30,
        workspaceId: ws.id,
        status: 'SENT',
        recipients: 3,
        sent: 2,
        failed: 0,
        bounced: 1,
        msg: `broadcast ${broadcast.id} sent: 2 of 3 delivered, 0 failed, 1 bounced`,
      }),
    ]);
  });

  it('a broadcast with nobody to send to ends SENT with zero recipients', async () => {
    const { ws, broadcast } = await setup();
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.drain();
    expect(await status(ws, broadcast.id)).toMatchObject({ status: 'SENT', stats: { recipients: 0 } });
  });

  it('a broadcast is finished only once none of its deliveries is QUEUED, SENDING or PAUSED (the oldest or the newest)', async () => {
    const { ws, broadcast } = await setup();
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) await insertContact(h, ws, { email });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.drain();
    expect((await status(ws, broadcast.id)).status).toBe('SENT');
    const k = h.db.kysely;
    const ids = (
      await k.selectFrom('deliveries').select('id').where('broadcast_id', '=', broadcast.id).orderBy('id').execute()
    ).map((r) => r.id);
    expect(ids).toHaveLength(3);
    const setDelivery = (id: string, to: (typeof OPEN_STATUSES)[number] | 'SENT') =>
      k.updateTable('deliveries').set({ status: to }).where('id', '=', id).execute();
    // Whichever the open one is, the oldest or the newest (the probe looks from the newest down; the count backs it).
    for (const open of OPEN_STATUSES)
      for (const id of [ids[0]!, ids[2]!]) {
        await k
          .updateTable('broadcasts')
          .set({ status: 'SENDING', sent_at: null })
          .where('id', '=', broadcast.id)
          .execute();
        await setDelivery(id, open);
        await sending.pipeline.sweep();
        expect((await status(ws, broadcast.id)).status, `${open} ${id === ids[0] ? 'oldest' : 'newest'}`).toBe(
          'SENDING',
        );
        await setDelivery(id, 'SENT');
        await sending.pipeline.sweep();
        expect((await status(ws, broadcast.id)).status).toBe('SENT');
      }
  });

  /** A broadcast sent to six contacts (`prefix0@example.com` …), its audience written: its deliveries' ids in id order. */
  async function sixQueued(prefix: string) {
    const { ws, broadcast } = await setup();
    for (let i = 0; i < 6; i++) await insertContact(h, ws, { email: `${prefix}${i}@example.com` });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).statusCode).toBe(202);
    while ((await sending.pipeline.materialize()) > 0);
    const k = h.db.kysely;
    const ids = (
      await k.selectFrom('deliveries').select('id').where('broadcast_id', '=', broadcast.id).orderBy('id').execute()
    ).map((r) => r.id);
    expect(ids).toHaveLength(6);
    /** The worker holding the leases dies: they run out, the pipeline takes them over, each recipient gets it once. */
    const finishAfterDeath = async () => {
      await k
        .updateTable('deliveries')
        .set({ lease_expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where('broadcast_id', '=', broadcast.id)
        .where('status', '=', 'SENDING')
        .execute();
      await sending.drain();
      expect((await status(ws, broadcast.id)).status).toBe('SENT');
      expect(sending.smtp.received.filter((m) => m.to.startsWith(prefix)).map((m) => m.to)).toHaveLength(6);
    };
    return { k, ids, finishAfterDeath };
  }

  it("a dead worker's expired leases: claimed first when asked, otherwise only to fill the batch", async () => {
    const { k, ids, finishAfterDeath } = await sixQueued('lease');
    // Two deliveries a worker claimed and then died with: their leases ran out a minute ago.
    const past = new Date(Date.now() - 60_000).toISOString();
    await k
      .updateTable('deliveries')
      .set({ status: 'SENDING', lease_owner: 'dead', lease_expires_at: past })
      .where('id', 'in', ids.slice(0, 2))
      .execute();
    const store = new SqlDeliveryStore(h.db);
    const now = new Date().toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const claim = async (limit: number, lapsed: boolean) =>
      (await store.claimDeliveries('w2', now, until, limit, 'all', { lapsed })).map((d) => d.id).sort();
    // Not asked first: the due deliveries fill the batch, the expired ones wait.
    const first = await claim(2, false);
    expect(first.some((id) => ids.slice(0, 2).includes(id))).toBe(false);
    // Asked first: the expired ones.
    expect(await claim(2, true)).toEqual(ids.slice(0, 2));
    await k.updateTable('deliveries').set({ lease_expires_at: past }).where('id', 'in', ids.slice(0, 2)).execute();
    // Not asked first, but the due ones (two left) do not fill a batch of 10: the expired ones fill it.
    const rest = await claim(10, false);
    expect(rest).toEqual([...ids.slice(0, 2), ...ids.slice(2).filter((id) => !first.includes(id))].sort());
    // Worker w2 dies too: its leases run out, the pipeline takes them over and the broadcast completes.
    await finishAfterDeath();
  });

  it('a claim looks for due deliveries from `from` on, and from the start when nothing is due past it', async () => {
    const { k, ids, finishAfterDeath } = await sixQueued('from');
    // Three due a minute ago (written due behind where the last claim stopped), three due ten seconds ago.
    const early = new Date(Date.now() - 60_000).toISOString();
    const late = new Date(Date.now() - 10_000).toISOString();
    await k.updateTable('deliveries').set({ next_attempt_at: early }).where('id', 'in', ids.slice(0, 3)).execute();
    await k.updateTable('deliveries').set({ next_attempt_at: late }).where('id', 'in', ids.slice(3)).execute();
    const store = new SqlDeliveryStore(h.db);
    const now = new Date().toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    const claim = async (limit: number) =>
      (await store.claimDeliveries('w1', now, until, limit, 'all', { lapsed: false, from: late })).sort((a, b) =>
        a.id.localeCompare(b.id),
      );
    // From `late` on: the early ones wait while deliveries are due past it; each carries its due time.
    const first = await claim(2);
    expect(first.map((d) => d.id).every((id) => ids.slice(3).includes(id))).toBe(true);
    expect(first.map((d) => d.dueAt)).toEqual([late, late]);
    const second = await claim(10);
    expect(second.map((d) => d.id)).toEqual(ids.slice(3).filter((id) => !first.some((d) => d.id === id)));
    // Nothing due past `late`: the same claim looks from the start and takes the early ones.
    const third = await claim(10);
    expect(third.map((d) => d.id)).toEqual(ids.slice(0, 3));
    expect(third.map((d) => d.dueAt)).toEqual([early, early, early]);
    expect(await claim(10)).toEqual([]);
    // A claim without `from` takes from the range's start, as it always did.
    await k.updateTable('deliveries').set({ status: 'QUEUED' }).where('id', 'in', [ids[0]!, ids[5]!]).execute();
    const all = await store.claimDeliveries('w1', now, until, 1, 'all', { lapsed: false });
    expect(all.map((d) => d.id)).toEqual([ids[0]]);
    // Worker w1 dies: the pipeline takes its leases over and the broadcast completes.
    await finishAfterDeath();
  });

  it('the pipeline claims from where its last claim stopped: a delivery written due before it waits until the look from the start', async () => {
    for (const every of [60_000, 0]) {
      const { k, ids, finishAfterDeath } = await sixQueued(`behind${every}`);
      const late = new Date(Date.now() - 10_000).toISOString();
      await k.updateTable('deliveries').set({ next_attempt_at: late }).where('id', 'in', ids).execute();
      const pipeline = sending.build({ batchSize: 2, rangeLookEveryMs: every });
      onTestFinished(() => pipeline.close());
      const statusOf = async (id: string) =>
        (await k.selectFrom('deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
      expect(await pipeline.sendBatch()).toBe(2);
      // One of the four left is written due a minute earlier than where the claims stopped.
      const queued = (
        await k
          .selectFrom('deliveries')
          .select('id')
          .where('id', 'in', ids)
          .where('status', '=', 'QUEUED')
          .orderBy('id')
          .execute()
      ).map((r) => r.id);
      expect(queued).toHaveLength(4);
      const behind = queued[3]!;
      await k
        .updateTable('deliveries')
        .set({ next_attempt_at: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', behind)
        .execute();
      if (every === 0) {
        // Every claim looks from the start: the one due earliest goes first.
        expect(await pipeline.sendBatch()).toBe(2);
        expect(await statusOf(behind)).not.toBe('QUEUED');
      } else {
        // While deliveries are due past where the claims stopped, it waits; when none is, the claim looks from the start.
        expect(await pipeline.sendBatch()).toBe(2);
        expect(await pipeline.sendBatch()).toBe(1);
        expect(await statusOf(behind)).toBe('QUEUED');
        expect(await pipeline.sendBatch()).toBe(1);
        expect(await statusOf(behind)).not.toBe('QUEUED');
      }
      await finishAfterDeath();
    }
  });

  it('contacts who unsubscribe after the audience was taken are skipped', async () => {
    const { ws, broadcast } = await setup();
    await insertContact(h, ws, { email: 'stays@example.com' });
    const leaver = await insertContact(h, ws, { email: 'leaves@example.com' });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.pipeline.materialize();
    await h.db.kysely.updateTable('contacts').set({ status: 'UNSUBSCRIBED' }).where('id', '=', leaver).execute();
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['stays@example.com']);
    const rows = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries?status=SKIPPED`)).json().data;
    expect(rows.map((d: { email: string }) => d.email)).toEqual(['leaves@example.com']);
  });

  it('cancel during SENDING: CANCELED, and nothing is sent after the cancel returns', async () => {
    const { ws, broadcast } = await setup();
    for (let i = 0; i < 30; i++) await insertContact(h, ws, { email: `c${i}@example.com` });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.pipeline.materialize(100);
    await sending.pipeline.sendBatch(); // one batch (7) goes out
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('CANCELED');
    const countAtCancel = sending.smtp.received.length;
    expect(countAtCancel).toBe(7);
    await sending.drain();
    expect(sending.smtp.received.length).toBe(countAtCancel);
    const stats = (await status(ws, broadcast.id)).stats;
    expect(stats).toMatchObject({ recipients: 30, sent: 7, queued: 0 });
    expect(
      (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries?status=CANCELED&limit=100`)).json().data,
    ).toHaveLength(23);
  });

  it('cancel while a batch is being handed to the transport waits for it, then nothing more goes out', async () => {
    const { ws, broadcast } = await setup();
    for (let i = 0; i < 14; i++) await insertContact(h, ws, { email: `w${i}@example.com` });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`);
    await sending.pipeline.materialize(100);
    const batch = sending.pipeline.sendBatch();
    await new Promise((r) => setTimeout(r, 3));
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/cancel`);
    const atReturn = sending.smtp.received.length;
    await batch;
    await sending.drain();
    expect(res.json().status).toBe('CANCELED');
    expect(sending.smtp.received.length).toBe(atReturn);
  });

  it('the scheduler starts a SCHEDULED broadcast once sendAt has passed, also one missed while nothing ran', async () => {
    const { ws, broadcast } = await setup();
    await insertContact(h, ws, { email: 'scheduled@example.com' });
    const at = new Date(Date.now() + 60_000).toISOString();
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${broadcast.id}`, { sendAt: at })).json().status).toBe(
      'SCHEDULED',
    );
    await sending.drain();
    expect(sending.smtp.received).toHaveLength(0);
    // time passes (as if the service was down at sendAt)
    await h.db.kysely
      .updateTable('broadcasts')
      .set({ send_at: new Date(Date.now() - 3_600_000).toISOString() })
      .where('id', '=', broadcast.id)
      .execute();
    const second = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      sending.mailer,
      { ...DEFAULT_PIPELINE_OPTIONS, secret: TEST_SECRET, workerId: 'other', publicUrl: 'https://mail.example.test' },
      silent as never,
    );
    const started = await Promise.all([
      sending.pipeline.runScheduler(),
      second.runScheduler(),
      sending.pipeline.runScheduler(),
    ]);
    expect(started.reduce((a, b) => a + b, 0)).toBe(1); // exactly one starts it
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['scheduled@example.com']);
    expect((await status(ws, broadcast.id)).status).toBe('SENT');
  });

  it('one-click unsubscribe (POST) from the topic of the broadcast, or from everything; GET never unsubscribes', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, 'unsub.test');
    const topic = await insertTopic(h, ws, 'OPT_IN', 'Weekly');
    const a = await insertContact(h, ws, { email: 'a@example.com' });
    const b = await insertContact(h, ws, { email: 'b@example.com' });
    const mk = async (extra: object) =>
      (
        await h.call(ws.key, 'POST', '/v1/broadcasts', {
          name: 'N',
          from: `n@${domain.name}`,
          emailContent: { subject: 'S', html: '<p>x <a href="{{ unsubscribe_url }}">bye</a></p>' },
          ...extra,
        })
      ).json();
    const topical = await mk({ topicId: topic });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${topical.id}/send`);
    await sending.drain();
    const linkOf = (to: string) => {
      const m = sending.smtp.received.find((r) => r.to === to)!;
      expect(m.parsed.html).not.toContain('You receive this email'); // the template placed the link itself
      return new URL(String(m.parsed.html).match(/href="([^"]+unsubscribe[^"]+)"/)![1]!).pathname;
    };
    const pathA = linkOf('a@example.com');
    // GET shows a confirmation page and changes nothing, however often it is fetched
    for (let i = 0; i < 3; i++) {
      const page = await h.app.inject({ method: 'GET', url: pathA });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain('Weekly');
    }
    expect(
      await h.db.kysely.selectFrom('contact_topics').selectAll().where('contact_id', '=', a).execute(),
    ).toHaveLength(0);
    // RFC 8058 one-click: no cookie, no redirect
    const click = await h.app.inject({
      method: 'POST',
      url: pathA,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(click.statusCode).toBe(200);
    expect(click.headers.location).toBeUndefined();
    const choice = await h.db.kysely
      .selectFrom('contact_topics')
      .select('subscribed')
      .where('contact_id', '=', a)
      .where('topic_id', '=', topic)
      .executeTakeFirstOrThrow();
    expect(Number(choice.subscribed)).toBe(0);
    expect(
      (await h.db.kysely.selectFrom('contacts').select('status').where('id', '=', a).executeTakeFirstOrThrow()).status,
    ).toBe('SUBSCRIBED');
    expect((await status(ws, topical.id)).stats.unsubscribed).toBe(1);
    // the next broadcast on that topic skips them; one without a topic still reaches them
    sending.smtp.received.length = 0;
    const next = await mk({ topicId: topic });
    await h.call(ws.key, 'POST', `/v1/broadcasts/${next.id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['b@example.com']);
    sending.smtp.received.length = 0;
    const general = await mk({});
    await h.call(ws.key, 'POST', `/v1/broadcasts/${general.id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to).sort()).toEqual(['a@example.com', 'b@example.com']);
    // one-click on a broadcast without a topic unsubscribes from everything
    const pathB = linkOf('b@example.com');
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: pathB,
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
          payload: '--x--',
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await h.db.kysely.selectFrom('contacts').select('status').where('id', '=', b).executeTakeFirstOrThrow()).status,
    ).toBe('UNSUBSCRIBED');
    sending.smtp.received.length = 0;
    const last = await mk({});
    await h.call(ws.key, 'POST', `/v1/broadcasts/${last.id}/send`);
    await sending.drain();
    expect(sending.smtp.received.map((m) => m.to)).toEqual(['a@example.com']);
    // an unknown token is a 404 page
    expect(
      (await h.app.inject({ method: 'GET', url: '/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).statusCode,
    ).toBe(404);
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
          payload: 'List-Unsubscribe=One-Click',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).statusCode,
    ).toBe(404);
  });

  it("deliveries of another workspace's broadcast are 404", async () => {
    const { broadcast } = await setup();
    const intruder = await h.workspace();
    expect((await h.call(intruder.key, 'GET', `/v1/broadcasts/${broadcast.id}/deliveries`)).statusCode).toBe(404);
    expect((await h.call(intruder.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).statusCode).toBe(404);
  });

  it('says in the stats when messages only went to the outbox (no SMTP_URL)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-'));
    const outbox = createMailer({ smtpUrl: null, outboxDir: dir, maxConnections: 1, rateLimit: 0 });
    const saved = sending.pipeline;
    sending.pipeline = new DeliveryPipeline(
      new SqlDeliveryStore(h.db),
      outbox,
      {
        ...DEFAULT_PIPELINE_OPTIONS,
        secret: TEST_SECRET,
        workerId: 'outbox-worker',
        publicUrl: 'https://mail.example.test',
      },
      silent as never,
    );
    try {
      const { ws, broadcast } = await setup();
      for (const email of ['o1@example.com', 'o2@example.com']) await insertContact(h, ws, { email });
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${broadcast.id}/send`)).statusCode).toBe(202);
      await sending.drain();
      const done = await status(ws, broadcast.id);
      expect(done.status).toBe('SENT');
      expect(done.stats).toMatchObject({ recipients: 2, sent: 2, outbox: 2 });
      expect(readdirSync(dir).filter((f) => f.endsWith('.eml'))).toHaveLength(2);
      expect(sending.smtp.received).toHaveLength(0);
    } finally {
      sending.pipeline = saved;
      await outbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
