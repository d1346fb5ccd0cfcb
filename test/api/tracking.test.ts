import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterEach, expect, it, vi } from 'vitest';
import { insertTrackingEvents, recordEvents } from '../../src/outbox/events/events.repository.js';
import { newId } from '../../src/lib/ids.js';
import { buildApp } from '../../src/app.js';
import { TrackingService } from '../../src/sending/tracking/tracking.service.js';
import { signClickToken, signOpenToken, verifyTrackingToken } from '../../src/sending/tracking/tracking.token.js';
import { DEFAULT_WRITER_OPTIONS } from '../../src/sending/tracking/tracking.writer.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import type { Received } from '../helpers/smtp.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';

const PUBLIC = 'https://mail.example.test'; // the pipeline's PUBLIC_URL (test/helpers/sending.ts)
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';

// With an image: a short HTML part without one gets no open pixel (docs/tracking.md, "Opens").
const HTML = `<html><body>
<p><img src="https://images.example/logo.png" alt="Shop" width="120" height="40"></p>
<p>Hi {{ contact.firstName }}, <a href="https://shop.example/sale?who={{ contact.firstName }}&amp;x=1">the sale</a></p>
<p><a href="https://blog.example/post">Read the post</a> or <a href="mailto:help@example.com">write to us</a>. <a href="#top">Top</a></p>
<p><a href="https://docs.example/guide">The guide</a></p>
<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</body></html>`;

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the clock of this process (the app's and the pipeline's) `ms` ahead; timers keep running. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

const hrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
const pixelOf = (html: string) =>
  /<img src="([^"]+\/t\/o\/[^"]+)" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">/.exec(
    html,
  )?.[1];
const pathOf = (url: string) => new URL(url).pathname;

describeApi('engagement tracking', (h) => {
  const sending = useSending(h, { workerId: 'tracking-worker' });

  async function sendBroadcast(
    opts: { tracking?: { opens: boolean; clicks: boolean }; contacts?: number; ws?: TestWorkspace } = {},
  ) {
    const ws = opts.ws ?? (await h.workspace());
    const domain = await verifiedDomain(h, ws, `t${ws.id.slice(-8).toLowerCase()}.test`);
    for (let i = 0; i < (opts.contacts ?? 2); i++)
      await insertContact(h, ws, { email: `reader${i}@example.com`, firstName: `R${i}` });
    const created = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'News',
      from: `news@${domain.name}`,
      emailContent: { subject: 'News', html: HTML, previewText: 'Hello' },
      ...(opts.tracking ? { tracking: opts.tracking } : {}),
    });
    expect(created.statusCode, created.body).toBe(201);
    const b = created.json();
    const before = sending.smtp.received.length;
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    const received = sending.smtp.received.slice(before);
    return { ws, broadcast: b, received };
  }

  const events = (broadcastId: string, type: string) =>
    h.db.kysely
      .selectFrom('events')
      .select(['type', 'machine', 'url', 'data', 'delivery_id', 'contact_id', 'workspace_id', 'occurred_at'])
      .where('broadcast_id', '=', broadcastId)
      .where('type', '=', type)
      .orderBy('id')
      .execute();

  const get = (url: string, ua?: string, method: 'GET' | 'HEAD' = 'GET', remoteAddress?: string) =>
    h.app.inject({ method, url, headers: ua ? { 'user-agent': ua } : {}, ...(remoteAddress ? { remoteAddress } : {}) });

  function linksOf(m: Received) {
    const html = String(m.parsed.html);
    return { html, hrefs: hrefs(html), pixel: pixelOf(html) };
  }

  it('rewrites the http(s) links of the template and adds the pixel; the unsubscribe link, mailto:, anchors, the footer and the text part stay', async () => {
    const { ws, broadcast, received } = await sendBroadcast();
    expect(broadcast.tracking).toEqual({ opens: true, clicks: true });
    expect(received).toHaveLength(2);
    for (const m of received) {
      // The HTML part of the raw MIME as received (mailparser decodes it): tracked links only.
      const { html, hrefs: links, pixel } = linksOf(m);
      expect(html).not.toContain('shop.example');
      const tracked = links.filter((l) => l.startsWith(`${PUBLIC}/t/c/`));
      expect(tracked).toHaveLength(3);
      const refs = tracked.map((l) => verifyTrackingToken(TEST_SECRET, l.slice(`${PUBLIC}/t/c/`.length), 'click')!);
      const first = m.to === 'reader0@example.com' ? 'R0' : 'R1';
      expect(refs.map((r) => r.url)).toEqual([
        `https://shop.example/sale?who=${first}&x=1`,
        'https://blog.example/post',
        'https://docs.example/guide',
      ]);
      expect(refs.map((r) => [r.linkIndex, r.linkCount])).toEqual([
        [0, 3],
        [1, 3],
        [2, 3],
      ]);
      expect(refs[0]!.workspaceId).toBe(ws.id);
      expect(refs[0]!.broadcastId).toBe(broadcast.id);
      expect(Math.abs(refs[0]!.sentAt - Date.now() / 1000)).toBeLessThan(60);
      expect(links).toContain('mailto:help@example.com');
      expect(links).toContain('#top');
      expect(links.some((l) => l.startsWith(`${PUBLIC}/unsubscribe/`))).toBe(true);
      expect(pixel).toBeDefined();
      expect(html.indexOf(pixel!)).toBeGreaterThan(html.indexOf('Unsubscribe'));
      expect(verifyTrackingToken(TEST_SECRET, pixel!.slice(`${PUBLIC}/t/o/`.length), 'open')).toMatchObject({
        workspaceId: ws.id,
        broadcastId: broadcast.id,
        deliveryId: refs[0]!.deliveryId,
      });
      const text = String(m.parsed.text);
      expect(text).toContain('https://blog.example/post');
      expect(text).not.toContain('/t/c/');
    }
  });

  it('the pixel: a 43-byte GIF, never cached, an open recorded with its user agent; a bad token records nothing', async () => {
    const { broadcast, received } = await sendBroadcast({ contacts: 1 });
    const pixel = pathOf(linksOf(received[0]!).pixel!);
    const res = await get(pixel, GMAIL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/gif');
    expect(res.headers['cache-control']).toBe('no-store, max-age=0');
    expect(res.rawPayload).toHaveLength(43);
    expect(res.rawPayload.subarray(0, 6).toString()).toBe('GIF89a');
    const opened = await events(broadcast.id, 'email.opened');
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ machine: 0 });
    expect(JSON.parse(opened[0]!.data)).toEqual({ userAgent: GMAIL, machine: false });

    for (const bad of [
      `${pixel.slice(0, -3)}${pixel.endsWith('AAA') ? 'BBB' : 'AAA'}`,
      '/t/o/nonsense',
      '/t/o/',
      `${pixel}/x`,
    ]) {
      const r = await get(bad, CHROME);
      expect(r.statusCode, bad).toBe(200);
      expect(r.rawPayload).toHaveLength(43);
    }
    expect(await events(broadcast.id, 'email.opened')).toHaveLength(1);

    const head = await get(pixel, CHROME, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('image/gif');
    expect(head.rawPayload).toHaveLength(0);
  });

  it('Apple Mail Privacy Protection and scanners open as machines; their opens are counted apart', async () => {
    const { ws, broadcast, received } = await sendBroadcast({ contacts: 2 });
    const [a, b] = received.map((m) => pathOf(linksOf(m).pixel!));
    // Each a minute apart: a repeat within the window would be the same hit (docs/tracking.md, "Replays and floods").
    for (const [ua, ip] of [['Mozilla/5.0'], [CHROME, '17.58.1.2'], ['Barracuda Sentinel (EE)'], [CHROME], [GMAIL]] as [
      string,
      string?,
    ][]) {
      await get(a!, ua, 'GET', ip);
      advanceClock(61_000);
    }
    await get(b!, 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)');
    const opened = await events(broadcast.id, 'email.opened');
    expect(opened.map((e) => [e.machine, JSON.parse(e.data).reason ?? null])).toEqual([
      [1, 'apple_mpp'],
      [1, 'apple_mpp'],
      [1, 'scanner'],
      [0, null],
      [0, null],
      [0, null],
    ]);
    const stats = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}`)).json().stats;
    expect(stats).toMatchObject({ opened: 3, uniqueOpens: 2, machineOpens: 3, clicked: 0, uniqueClicks: 0 });
  });

  it('a click: 302 to the URL the token carries; a changed or foreign token is 404 and never redirects', async () => {
    const { broadcast, received } = await sendBroadcast({ contacts: 1 });
    const link = linksOf(received[0]!).hrefs.find((l) => l.startsWith(`${PUBLIC}/t/c/`))!;
    advanceClock(60_000);
    const res = await get(pathOf(link), CHROME);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('https://shop.example/sale?who=R0&x=1');
    expect(res.headers['cache-control']).toContain('no-store');
    const clicked = await events(broadcast.id, 'email.clicked');
    expect(clicked).toHaveLength(1);
    expect(clicked[0]).toMatchObject({ machine: 0, url: 'https://shop.example/sale?who=R0&x=1' });
    expect(JSON.parse(clicked[0]!.data)).toEqual({ url: 'https://shop.example/sale?who=R0&x=1', machine: false });

    const token = pathOf(link).slice('/t/c/'.length);
    const bytes = Buffer.from(token, 'base64url');
    const tampered = Buffer.from(bytes);
    tampered[bytes.length - 30]! ^= 0x20; // a byte of the URL
    const ref = verifyTrackingToken(TEST_SECRET, token, 'click')!;
    const foreign = signClickToken(crypto.randomBytes(32), ref, {
      linkIndex: 0,
      linkCount: 1,
      url: 'https://evil.example/',
    });
    for (const bad of [tampered.toString('base64url'), foreign, `${token}x`, 'AAAA', signOpenToken(TEST_SECRET, ref)]) {
      const r = await get(`/t/c/${bad}`, CHROME);
      expect(r.statusCode).toBe(404);
      expect(r.headers.location).toBeUndefined();
      expect(r.headers['content-type']).toContain('text/html');
    }
    expect(await events(broadcast.id, 'email.clicked')).toHaveLength(1);
  });

  it('clicks before the message could have been read, by scanners, and every link within seconds are machines', async () => {
    const { ws, broadcast, received } = await sendBroadcast({ contacts: 2 });
    const [one, two] = received.map((m) =>
      linksOf(m)
        .hrefs.filter((l) => l.startsWith(`${PUBLIC}/t/c/`))
        .map(pathOf),
    );
    // Right after sending: before it could have been read.
    expect((await get(one![0]!, CHROME)).statusCode).toBe(302);
    advanceClock(60_000);
    expect((await get(one![1]!, 'Mozilla/5.0 (compatible; BingPreview/1.0b)')).statusCode).toBe(302);
    // The second recipient: three links within a second; the earlier two become machine clicks too.
    for (const l of two!) expect((await get(l, CHROME)).statusCode).toBe(302);
    advanceClock(120_000);
    // A person, later, on the first message.
    expect((await get(one![2]!, CHROME)).statusCode).toBe(302);

    const clicked = await events(broadcast.id, 'email.clicked');
    const oneId = verifyTrackingToken(TEST_SECRET, one![0]!.slice(5), 'click')!.deliveryId;
    const mine = clicked
      .filter((e) => e.delivery_id === oneId)
      .map((e) => [e.machine, JSON.parse(e.data).reason ?? null]);
    expect(mine).toEqual([
      [1, 'before_read'],
      [1, 'scanner'],
      [0, null],
    ]);
    const theirs = clicked.filter((e) => e.delivery_id !== oneId);
    expect(theirs.map((e) => [e.machine, JSON.parse(e.data).machine, JSON.parse(e.data).reason])).toEqual([
      [1, true, 'burst'],
      [1, true, 'burst'],
      [1, true, 'burst'],
    ]);
    // The contacts' engagement summary (the segments' conditions without a broadcast) follows the writer: both were
    // sent to; the first's latest human click is the person's; the second's clicks, written then found a burst, are none.
    const summary = await h.db.kysely
      .selectFrom('deliveries')
      .innerJoin('contacts', 'contacts.id', 'deliveries.contact_id')
      .select(['deliveries.id', 'contacts.last_sent_at', 'contacts.last_opened_at', 'contacts.last_clicked_at'])
      .where('deliveries.broadcast_id', '=', broadcast.id)
      .execute();
    const human = clicked.find((e) => e.delivery_id === oneId && e.machine === 0)!;
    const mineSummary = summary.find((r) => r.id === oneId)!;
    const theirSummary = summary.find((r) => r.id !== oneId)!;
    expect(mineSummary.last_sent_at).not.toBeNull();
    expect(theirSummary.last_sent_at).not.toBeNull();
    expect(new Date(mineSummary.last_clicked_at!).getTime()).toBe(new Date(human.occurred_at).getTime());
    expect(theirSummary.last_clicked_at).toBeNull();
    expect(mineSummary.last_opened_at).toBeNull();

    const stats = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}`)).json().stats;
    expect(stats).toMatchObject({ clicked: 1, uniqueClicks: 1 });
    const links = await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/links`);
    expect(links.statusCode).toBe(200);
    expect(links.json()).toEqual({ data: [{ url: 'https://docs.example/guide', clicks: 1, uniqueClicks: 1 }] });
  });

  it("a burst whose earlier clicks still wait in the writer's queue marks them there, as it marks written ones", async () => {
    const { broadcast, received } = await sendBroadcast({ contacts: 1 });
    const links = linksOf(received[0]!)
      .hrefs.filter((l) => l.startsWith(`${PUBLIC}/t/c/`))
      .map(pathOf);
    expect(links).toHaveLength(3);
    advanceClock(60_000);
    // At once: the three are queued together, the third finding the burst before any is written.
    const answers = await Promise.all(links.map((l) => get(l, CHROME)));
    expect(answers.map((r) => r.statusCode)).toEqual([302, 302, 302]);
    const clicked = await events(broadcast.id, 'email.clicked');
    expect(clicked.map((e) => [e.machine, JSON.parse(e.data)])).toEqual(
      links.map(() => [1, { url: expect.any(String), machine: true, reason: 'burst' }]),
    );
    const contact = await h.db.kysely.selectFrom('contacts').select('last_clicked_at').executeTakeFirstOrThrow();
    expect(contact.last_clicked_at).toBeNull();
  });

  it("stats, links and timeline count people's opens and clicks; another workspace gets 404", async () => {
    const { ws, broadcast, received } = await sendBroadcast({ contacts: 3 });
    advanceClock(60_000);
    const msgs = received.map((m) => ({
      pixel: pathOf(linksOf(m).pixel!),
      links: linksOf(m)
        .hrefs.filter((l) => l.startsWith(`${PUBLIC}/t/c/`))
        .map(pathOf),
    }));
    await get(msgs[0]!.pixel, CHROME);
    await get(msgs[0]!.pixel, CHROME); // a repeat within the window: the same open
    advanceClock(61_000);
    await get(msgs[0]!.pixel, CHROME); // the message opened again
    await get(msgs[1]!.pixel, GMAIL);
    await get(msgs[2]!.pixel, 'Mozilla/5.0');
    await get(msgs[0]!.links[1]!, CHROME);
    advanceClock(61_000);
    await get(msgs[0]!.links[1]!, CHROME);
    advanceClock(10_000);
    await get(msgs[1]!.links[1]!, CHROME);
    advanceClock(10_000);
    await get(msgs[1]!.links[2]!, CHROME);

    const b = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}`)).json();
    expect(b.stats).toMatchObject({
      recipients: 3,
      sent: 3,
      opened: 3,
      uniqueOpens: 2,
      machineOpens: 1,
      clicked: 4,
      uniqueClicks: 2,
    });
    const list = (await h.call(ws.key, 'GET', '/v1/broadcasts')).json();
    expect(list.data.find((x: { id: string }) => x.id === broadcast.id).stats).toEqual(b.stats);

    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/links`)).json()).toEqual({
      data: [
        { url: 'https://blog.example/post', clicks: 3, uniqueClicks: 2 },
        { url: 'https://docs.example/guide', clicks: 1, uniqueClicks: 1 },
      ],
    });

    // The lead's email.sent events, and a bounce recorded directly, in the same hour.
    await recordEvents(
      h.db.kysely,
      ws.id,
      [{ type: 'email.bounced', broadcastId: broadcast.id, deliveryId: 'dlv_x', data: {} }],
      new Date().toISOString(),
    );
    const hour = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/timeline`)).json();
    expect(hour.bucket).toBe('hour');
    const total = (
      k: 'sent' | 'opens' | 'clicks' | 'bounces',
      d: { sent: number; opens: number; clicks: number; bounces: number }[],
    ) => d.reduce((n, p) => n + p[k], 0);
    expect({
      sent: total('sent', hour.data),
      opens: total('opens', hour.data),
      clicks: total('clicks', hour.data),
      bounces: total('bounces', hour.data),
    }).toEqual({ sent: 3, opens: 3, clicks: 4, bounces: 1 });
    for (const p of hour.data) expect(p.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);

    const other = await h.workspace('Other');
    for (const path of ['links', 'timeline', 'timeline?bucket=day']) {
      expect((await h.call(other.key, 'GET', `/v1/broadcasts/${broadcast.id}/${path}`)).statusCode).toBe(404);
    }
    const readOnly = await h.key(ws, ['read:broadcasts']);
    expect((await h.call(readOnly, 'GET', `/v1/broadcasts/${broadcast.id}/links`)).statusCode).toBe(200);
    expect(
      (await h.call(await h.key(ws, ['read:forms']), 'GET', `/v1/broadcasts/${broadcast.id}/links`)).statusCode,
    ).toBe(403);
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/timeline?bucket=week`)).statusCode).toBe(422);
  });

  // Issue 29, item 5: one pixel flooded for 15 s stored 95,540 events; 300 replays of a click counted 300 clicks.
  it('replays: 300 hits of one click within the window are one click, answered every time; after the window a second click counts; other tokens are all recorded', async () => {
    const { ws, broadcast, received } = await sendBroadcast({ contacts: 2 });
    received.sort((a, b) => a.to.localeCompare(b.to)); // reader0 first
    const [one, two] = received.map((m) => ({
      pixel: pathOf(linksOf(m).pixel!),
      links: linksOf(m)
        .hrefs.filter((l) => l.startsWith(`${PUBLIC}/t/c/`))
        .map(pathOf),
    }));
    advanceClock(60_000);
    for (let i = 0; i < 300; i++) {
      const res = await get(one!.links[0]!, CHROME);
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('https://shop.example/sale?who=R0&x=1');
    }
    for (let i = 0; i < 300; i++) {
      const res = await get(one!.pixel, CHROME);
      expect(res.statusCode).toBe(200);
      expect(res.rawPayload).toHaveLength(43);
    }
    expect(await events(broadcast.id, 'email.clicked')).toHaveLength(1);
    expect(await events(broadcast.id, 'email.opened')).toHaveLength(1);
    // Other tokens: the other recipient's pixel and link, and another link of the first message, each recorded.
    await get(two!.pixel, GMAIL);
    await get(two!.links[1]!, CHROME);
    await get(one!.links[1]!, CHROME);
    const stats = async () => (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}`)).json().stats;
    expect(await stats()).toMatchObject({ opened: 2, uniqueOpens: 2, clicked: 3, uniqueClicks: 2 });
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}/links`)).json().data).toEqual([
      { url: 'https://blog.example/post', clicks: 2, uniqueClicks: 2 },
      // The link as the template writes it (personalised: one row for every recipient's own URL of it).
      { url: 'https://shop.example/sale?who={{ contact.firstName }}&x=1', clicks: 1, uniqueClicks: 1 },
    ]);
    // A scanner's hit does not hide the person's that follows it within the window (and the other way round).
    await get(two!.links[2]!, 'Mozilla/5.0 (compatible; BingPreview/1.0b)');
    await get(two!.links[2]!, CHROME);
    expect(
      (await events(broadcast.id, 'email.clicked'))
        .filter((e) => e.url === 'https://docs.example/guide')
        .map((e) => e.machine),
    ).toEqual([1, 0]);

    // After the window: the reader clicked again, and opened the message again.
    advanceClock(61_000);
    expect((await get(one!.links[0]!, CHROME)).statusCode).toBe(302);
    expect((await get(one!.pixel, CHROME)).statusCode).toBe(200);
    expect(await stats()).toMatchObject({ opened: 3, uniqueOpens: 2, clicked: 5, uniqueClicks: 2 });
  });

  it('floods: at most 50 opens and 50 clicks are stored per delivery, counted in the database (another process, a restart); later hits are answered, not stored', async () => {
    const { ws, broadcast, received } = await sendBroadcast({ contacts: 2 });
    const pixel = pathOf(linksOf(received[0]!).pixel!);
    advanceClock(60_000);
    for (let i = 0; i < 55; i++) {
      expect((await get(pixel, CHROME)).statusCode).toBe(200);
      advanceClock(61_000); // each one past the window: a new open
    }
    expect(await events(broadcast.id, 'email.opened')).toHaveLength(50);
    // Another process (or this one restarted): nothing in memory, the cap still holds. No repeat window there, so
    // every hit reaches its writer: 60 clicks of one link, 50 stored.
    const other = new TrackingService(h.db, TEST_SECRET, h.app.log, DEFAULT_WRITER_OPTIONS, {
      repeatWindowSeconds: 0,
      maxHitsPerDelivery: 50,
      perIpPerMinute: 0,
    });
    try {
      const openRef = other.verifyOpen(pixel.slice('/t/o/'.length))!;
      const clickRef = other.verifyClick(
        linksOf(received[0]!)
          .hrefs.find((l) => l.startsWith(`${PUBLIC}/t/c/`))!
          .slice(`${PUBLIC}/t/c/`.length),
      )!;
      await Promise.all(
        Array.from({ length: 10 }, () => other.open(openRef, { userAgent: CHROME, ip: '198.51.100.7', method: 'GET' })),
      );
      await Promise.all(
        Array.from({ length: 60 }, () =>
          other.click(clickRef, { userAgent: CHROME, ip: '198.51.100.7', method: 'GET' }),
        ),
      );
    } finally {
      await other.close();
    }
    expect(await events(broadcast.id, 'email.opened')).toHaveLength(50);
    expect(await events(broadcast.id, 'email.clicked')).toHaveLength(50);
    // The other recipient's delivery has its own counts.
    expect((await get(pathOf(linksOf(received[1]!).pixel!), CHROME)).statusCode).toBe(200);
    const stats = (await h.call(ws.key, 'GET', `/v1/broadcasts/${broadcast.id}`)).json().stats;
    expect(stats).toMatchObject({ opened: 51, uniqueOpens: 2, clicked: 50, uniqueClicks: 1 });
  });

  it("per address: over TRACKING_RATE_LIMIT_PER_IP hits a minute are answered (GIF, redirect) and not recorded, but for the first hit of each message's pixel and link; other addresses are", async () => {
    const { broadcast, received } = await sendBroadcast({ contacts: 4 });
    const limited = await buildApp({
      db: h.db,
      logger: false,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        tracking: { repeatWindowSeconds: 60, maxHitsPerDelivery: 50, perIpPerMinute: 3 },
      },
    });
    try {
      advanceClock(60_000);
      const hit = (url: string, remoteAddress: string) =>
        limited.inject({ method: 'GET', url, headers: { 'user-agent': CHROME }, remoteAddress });
      const pixels = received.map((m) => pathOf(linksOf(m).pixel!));
      const links = received.map((m) => pathOf(linksOf(m).hrefs.find((l) => l.startsWith(`${PUBLIC}/t/c/`))!));
      for (const p of pixels) expect((await hit(p, '203.0.113.9')).statusCode).toBe(200);
      for (const l of links) {
        const res = await hit(l, '203.0.113.9');
        expect(res.statusCode).toBe(302);
        expect(res.headers.location).toMatch(/^https:\/\/shop\.example\/sale\?who=R\d&x=1$/);
      }
      // The first hit of each message's pixel and link is recorded whatever the address (an image proxy or a gateway
      // fetches for many readers): 4 opens and 4 clicks, though the address is over its limit of 3 after the third.
      expect(await events(broadcast.id, 'email.opened')).toHaveLength(4);
      expect(await events(broadcast.id, 'email.clicked')).toHaveLength(4);
      // Out of the repeat window but within the minute: a hit again of a recorded pixel or link is held back.
      advanceClock(0);
      const later = await buildApp({
        db: h.db,
        logger: false,
        config: {
          logLevel: 'silent',
          publicUrl: 'http://localhost:3000',
          secret: TEST_SECRET,
          tracking: { repeatWindowSeconds: 0, maxHitsPerDelivery: 50, perIpPerMinute: 3 },
        },
      });
      try {
        for (const l of links)
          await later.inject({
            method: 'GET',
            url: l,
            headers: { 'user-agent': CHROME },
            remoteAddress: '203.0.113.9',
          });
        for (const l of links)
          expect(
            (
              await later.inject({
                method: 'GET',
                url: l,
                headers: { 'user-agent': CHROME },
                remoteAddress: '203.0.113.9',
              })
            ).statusCode,
          ).toBe(302);
        // 4 first clicks in that process, then 4 repeats of which none is within the limit of 3 (the first clicks used it).
        expect(await events(broadcast.id, 'email.clicked')).toHaveLength(8);
        // Another address (an IPv6 /64 counts as one), and the same address a minute later.
        expect(
          (
            await later.inject({
              method: 'GET',
              url: links[0]!,
              headers: { 'user-agent': CHROME },
              remoteAddress: '2001:db8:1:2::1',
            })
          ).statusCode,
        ).toBe(302);
        expect(
          (
            await later.inject({
              method: 'GET',
              url: links[1]!,
              headers: { 'user-agent': CHROME },
              remoteAddress: '2001:db8:1:2::2',
            })
          ).statusCode,
        ).toBe(302);
        expect(await events(broadcast.id, 'email.clicked')).toHaveLength(10);
        for (const l of [links[2]!, links[3]!])
          expect(
            (
              await later.inject({
                method: 'GET',
                url: l,
                headers: { 'user-agent': CHROME },
                remoteAddress: '2001:db8:1:2::3',
              })
            ).statusCode,
          ).toBe(302);
        expect(await events(broadcast.id, 'email.clicked')).toHaveLength(11);
        advanceClock(61_000);
        expect(
          (
            await later.inject({
              method: 'GET',
              url: links[2]!,
              headers: { 'user-agent': CHROME },
              remoteAddress: '203.0.113.9',
            })
          ).statusCode,
        ).toBe(302);
        expect(await events(broadcast.id, 'email.clicked')).toHaveLength(12);
      } finally {
        await later.close();
      }
    } finally {
      await limited.close();
    }
  });

  it('sweep (fast-check): replays, floods and broken tokens from several addresses and agents, at random times: never a 5xx, every hit answered, at most 2 stored hits of a token a minute and 50 of each kind per delivery', async () => {
    const { broadcast, received } = await sendBroadcast({ contacts: 2 });
    const tokens = received.flatMap((m) => [
      pathOf(linksOf(m).pixel!),
      ...linksOf(m)
        .hrefs.filter((l) => l.startsWith(`${PUBLIC}/t/c/`))
        .map(pathOf),
    ]);
    const agents = [CHROME, GMAIL, 'Mozilla/5.0', 'curl/8.0', undefined, 'Mozilla/5.0 (compatible; BingPreview/1.0b)'];
    const hitArb = fc.record({
      token: fc.nat(tokens.length - 1),
      broken: fc.constantFrom(false, false, false, true),
      cut: fc.nat(40),
      agent: fc.nat(agents.length - 1),
      ip: fc.constantFrom('203.0.113.1', '203.0.113.2', '2001:db8::1', '17.1.2.3'),
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
      advanceMs: fc.constantFrom(0, 0, 0, 500, 5_000, 59_999, 60_000, 61_000, 3_600_000),
    });
    let answered = 0;
    advanceClock(60_000);
    await fc.assert(
      fc.asyncProperty(fc.array(hitArb, { minLength: 20, maxLength: 60 }), async (hits) => {
        for (const x of hits) {
          advanceClock(x.advanceMs);
          // Broken: one inner character changed (the last one may carry only padding bits, which decode to the same token).
          const t = tokens[x.token]!;
          const at = t.length - 2 - x.cut;
          const path = x.broken ? t.slice(0, at) + (t[at] === 'A' ? 'B' : 'A') + t.slice(at + 1) : t;
          const res = await get(path, agents[x.agent], x.method as 'GET' | 'HEAD', x.ip);
          answered++;
          if (path.startsWith('/t/o/')) {
            expect(res.statusCode, path).toBe(200);
            expect(res.headers['content-type']).toBe('image/gif');
          } else if (x.broken) {
            expect(res.statusCode, path).toBe(404);
            expect(res.headers.location).toBeUndefined();
          } else {
            expect(res.statusCode, path).toBe(302);
            expect(res.headers.location).toMatch(/^https:\/\/(shop|blog|docs)\.example\//);
          }
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 15) },
    );
    const stored = await h.db.kysely
      .selectFrom('events')
      .select(['type', 'delivery_id', 'url', 'occurred_at'])
      .where('broadcast_id', '=', broadcast.id)
      .where('type', 'in', ['email.opened', 'email.clicked'])
      .execute();
    const byToken = new Map<string, number[]>();
    const byDelivery = new Map<string, number>();
    for (const e of stored) {
      const t = `${e.type} ${e.delivery_id} ${e.url ?? ''}`;
      byToken.set(t, [...(byToken.get(t) ?? []), new Date(e.occurred_at).getTime()]);
      byDelivery.set(`${e.type} ${e.delivery_id}`, (byDelivery.get(`${e.type} ${e.delivery_id}`) ?? 0) + 1);
    }
    for (const [t, times] of byToken) {
      times.sort((a, b) => a - b);
      // A person's hit and a machine's: two keys, each stored at most once a window, so any three are a minute apart.
      for (let i = 0; i + 2 < times.length; i++) expect(times[i + 2]! - times[i]!, t).toBeGreaterThanOrEqual(60_000);
    }
    for (const [d, count] of byDelivery) expect(count, d).toBeLessThanOrEqual(50);
    console.info(`tracking sweep [${h.dbName}]: ${answered} hits answered, ${stored.length} stored`);
  }, 120_000);

  it("the tracking writer's insert writes what recordEvents writes, for several workspaces, under the ids given", async () => {
    const [a, b] = [await h.workspace(), await h.workspace('Other')];
    const now = new Date().toISOString();
    const rows = Array.from({ length: 71 }, (_, i) => ({
      id: newId('evt'),
      workspaceId: i % 3 ? a.id : b.id,
      event:
        i % 2
          ? {
              type: 'email.clicked' as const,
              contactId: `ct_${i}`,
              broadcastId: 'bc_x',
              deliveryId: `dlv_${i}`,
              url: `https://x.example/${i}`,
              machine: i % 5 === 0,
              occurredAt: `2030-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
              data: { url: `https://x.example/${i}`, machine: i % 5 === 0 },
            }
          : {
              type: 'email.opened' as const,
              contactId: null,
              broadcastId: 'bc_x',
              deliveryId: `dlv_${i}`,
              data: { userAgent: null, machine: false },
            },
    }));
    // Workspace a has an enabled webhook endpoint; b none, so its events are written dispatched (nothing for the
    // fan-out to take; on PostgreSQL under the listeners lock, src/db/listeners-lock.ts).
    await h.db.kysely
      .insertInto('webhook_endpoints')
      .values({
        id: newId('wh'),
        workspace_id: a.id,
        url: 'https://hooks.example/x',
        event_types: '["email.opened"]',
        enabled: 1,
        secret: 'sealed',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await h.db.kysely.transaction().execute((trx) => insertTrackingEvents(trx, rows, now));
    const stored = await h.db.kysely
      .selectFrom('events')
      .selectAll()
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('id')
      .execute();
    expect(
      stored.map((r) => ({
        id: r.id,
        workspaceId: r.workspace_id,
        type: r.type,
        occurredAt: new Date(r.occurred_at as unknown as string).toISOString(),
        contactId: r.contact_id,
        broadcastId: r.broadcast_id,
        deliveryId: r.delivery_id,
        data: JSON.parse(r.data),
        machine: Number(r.machine),
        url: r.url,
        dispatched: Number(r.dispatched),
      })),
    ).toEqual(
      rows.map(({ id, workspaceId, event: e }) => ({
        id,
        workspaceId,
        type: e.type,
        occurredAt: 'occurredAt' in e ? e.occurredAt : now,
        contactId: e.contactId,
        broadcastId: 'bc_x',
        deliveryId: e.deliveryId,
        data: e.data,
        machine: e.machine ? 1 : 0,
        url: 'url' in e ? e.url : null,
        dispatched: workspaceId === b.id ? 1 : 0,
      })),
    );
  });

  it('the timeline buckets by hour and by day in the database (UTC)', async () => {
    const ws = await h.workspace();
    const created = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'T' })).json();
    const bc = created.id;
    const at = (iso: string) => iso;
    await recordEvents(
      h.db.kysely,
      ws.id,
      [
        { type: 'email.sent', broadcastId: bc, deliveryId: 'dlv_a', occurredAt: at('2030-03-01T10:15:00.000Z') },
        { type: 'email.sent', broadcastId: bc, deliveryId: 'dlv_b', occurredAt: at('2030-03-01T10:59:59.999Z') },
        { type: 'email.opened', broadcastId: bc, deliveryId: 'dlv_a', occurredAt: at('2030-03-01T11:00:00.000Z') },
        {
          type: 'email.opened',
          broadcastId: bc,
          deliveryId: 'dlv_a',
          machine: true,
          occurredAt: at('2030-03-01T11:00:01.000Z'),
        },
        {
          type: 'email.clicked',
          broadcastId: bc,
          deliveryId: 'dlv_a',
          url: 'https://a.example/',
          occurredAt: at('2030-03-02T09:00:00.000Z'),
        },
        { type: 'email.bounced', broadcastId: bc, deliveryId: 'dlv_b', occurredAt: at('2030-03-01T10:20:00.000Z') },
        { type: 'contact.updated', broadcastId: bc, occurredAt: at('2030-03-01T12:00:00.000Z') },
      ],
      new Date().toISOString(),
    );
    const hour = (await h.call(ws.key, 'GET', `/v1/broadcasts/${bc}/timeline?bucket=hour`)).json();
    expect(hour).toEqual({
      bucket: 'hour',
      timeZone: 'UTC',
      data: [
        { at: '2030-03-01T10:00:00.000Z', sent: 2, opens: 0, clicks: 0, bounces: 1 },
        { at: '2030-03-01T11:00:00.000Z', sent: 0, opens: 1, clicks: 0, bounces: 0 },
        { at: '2030-03-02T09:00:00.000Z', sent: 0, opens: 0, clicks: 1, bounces: 0 },
      ],
    });
    const day = (await h.call(ws.key, 'GET', `/v1/broadcasts/${bc}/timeline?bucket=day`)).json();
    expect(day).toEqual({
      bucket: 'day',
      timeZone: 'UTC',
      data: [
        { at: '2030-03-01T00:00:00.000Z', sent: 2, opens: 1, clicks: 0, bounces: 1 },
        { at: '2030-03-02T00:00:00.000Z', sent: 0, opens: 0, clicks: 1, bounces: 0 },
      ],
    });
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${bc}/links`)).json()).toEqual({
      data: [{ url: 'https://a.example/', clicks: 1, uniqueClicks: 1 }],
    });
  });

  it('tracking off: no rewritten link, no pixel', async () => {
    const { broadcast, received } = await sendBroadcast({ tracking: { opens: false, clicks: false }, contacts: 1 });
    expect(broadcast.tracking).toEqual({ opens: false, clicks: false });
    const { hrefs: links, pixel, html } = linksOf(received[0]!);
    expect(pixel).toBeUndefined();
    expect(html).not.toContain('/t/');
    expect(links).toContain('https://blog.example/post');

    const opensOnly = await sendBroadcast({ tracking: { opens: true, clicks: false }, contacts: 1 });
    const m = linksOf(opensOnly.received[0]!);
    expect(m.pixel).toBeDefined();
    expect(m.hrefs.some((l) => l.includes('/t/c/'))).toBe(false);
  });

  it('the workspace default applies to new broadcasts; a broadcast may say otherwise and change it while a draft', async () => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'GET', '/v1/workspace')).json().settings.tracking).toEqual({
      opens: true,
      clicks: true,
    });
    expect((await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'A' })).json().tracking).toEqual({
      opens: true,
      clicks: true,
    });
    const put = await h.call(ws.key, 'PUT', '/v1/workspace', {
      settings: { tracking: { opens: false, clicks: true } },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().settings.tracking).toEqual({ opens: false, clicks: true });
    const b = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'B' })).json();
    expect(b.tracking).toEqual({ opens: false, clicks: true });
    expect(
      (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'C', tracking: { opens: true, clicks: false } })).json()
        .tracking,
    ).toEqual({ opens: true, clicks: false });
    const updated = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { tracking: { opens: true, clicks: true } });
    expect(updated.json().tracking).toEqual({ opens: true, clicks: true });
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json().tracking).toEqual({
      opens: true,
      clicks: true,
    });
    // Other settings are kept when tracking changes; both switches are required.
    expect((await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { tracking: { opens: true } } })).statusCode).toBe(
      422,
    );
    expect(
      (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'D', tracking: { opens: 'yes', clicks: true } }))
        .statusCode,
    ).toBe(422);
    // Another workspace keeps its own default.
    const other = await h.workspace();
    expect((await h.call(other.key, 'POST', '/v1/broadcasts', { name: 'E' })).json().tracking).toEqual({
      opens: true,
      clicks: true,
    });
  });

  it('test sends and previews are not tracked', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `p${ws.id.slice(-8).toLowerCase()}.test`);
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'P',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Preview', html: HTML },
      })
    ).json();
    const preview = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preview`, {})).json();
    expect(preview.html).toContain('https://blog.example/post');
    expect(preview.html).not.toContain('/t/');
  });
});
