/**
 * The link report groups clicks by the link as written in the template (docs/tracking.md, "Stats"): a link
 * personalised with Liquid (`vip?email={{ contact.email | url_encode }}`, a name in the path, a `{% if %}` in the
 * query) is one row with every recipient's clicks of it, counted exactly; a link without Liquid is its own row; a URL
 * that no written link makes (a whole href from Liquid) stays its own row. A real broadcast to three contacts, each
 * message's tracked links followed as a person would; the rows are checked against the click events in the database.
 * SQLite and PostgreSQL.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';
import { verifyTrackingToken } from '../../src/sending/tracking/tracking.token.js';

const PUBLIC = 'https://mail.example.test';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

const VIP = 'https://shop.example/vip?email={{ contact.email | url_encode }}';
const PROFILE = 'https://shop.example/u/{{ contact.firstName | downcase }}/profile';
const OFFER = "https://shop.example/p?x=1{% if contact.firstName == 'Ada' %}&ada=1{% endif %}";
const HTML = `<html><body>
<p>Hi {{ contact.firstName }}: <a href="${VIP}">your VIP page</a>, <a href="${PROFILE}">your profile</a>.</p>
<p><a href="${OFFER.replace('&', '&amp;')}">The offer</a> and <a href="https://shop.example/sale">the sale</a>.</p>
<p><a href="{{ contact.properties.site }}">Your site</a> · <a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</body></html>`;

afterEach(() => vi.useRealTimers());

/** Moves the clock of this process ahead (timers keep running): past the scanners' window, the burst rule, the repeat window. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

describeApi('the link report groups personalised links', (h) => {
  const sending = useSending(h, { workerId: 'link-report-test' });

  it('one row per link as written: every recipient of a personalised link together, exact counts', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `links-${h.dbName}.test`);
    for (const name of ['Ada', 'Bob', 'Cy'])
      await insertContact(h, ws, {
        email: `${name.toLowerCase()}@example.com`,
        firstName: name,
        properties: { site: `https://site.example/${name.toLowerCase()}` },
      });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'VIP',
        from: `news@${domain.name}`,
        emailContent: { subject: 'For you', html: HTML },
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    expect(sending.smtp.received).toHaveLength(3);

    // Each recipient's tracked links, by the URL each one leads to.
    const links = new Map<string, Map<string, string>>();
    for (const m of sending.smtp.received) {
      const tracked = [...String(m.parsed.html).matchAll(/href="([^"]+)"/g)]
        .map((x) => x[1]!.replace(/&amp;/g, '&'))
        .filter((u) => u.startsWith(`${PUBLIC}/t/c/`))
        .map((u) => new URL(u).pathname);
      const byUrl = new Map(
        tracked.map((p) => [verifyTrackingToken(TEST_SECRET, p.slice('/t/c/'.length), 'click')!.url, p] as const),
      );
      links.set(m.to, byUrl);
    }
    expect([...links.get('ada@example.com')!.keys()]).toEqual([
      'https://shop.example/vip?email=ada%40example.com',
      'https://shop.example/u/ada/profile',
      'https://shop.example/p?x=1&ada=1',
      'https://shop.example/sale',
      'https://site.example/ada',
    ]);
    expect([...links.get('cy@example.com')!.keys()]).toContain('https://shop.example/p?x=1');

    // A person reads (a minute after sending) and clicks, one link every 6 s (no burst), a repeat after the window.
    advanceClock(60_000);
    const click = async (to: string, url: string) => {
      const res = await h.app.inject({
        method: 'GET',
        url: links.get(to)!.get(url)!,
        headers: { 'user-agent': CHROME },
      });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe(url);
      advanceClock(6_000);
    };
    await click('ada@example.com', 'https://shop.example/vip?email=ada%40example.com');
    await click('bob@example.com', 'https://shop.example/vip?email=bob%40example.com');
    await click('cy@example.com', 'https://shop.example/vip?email=cy%40example.com');
    await click('ada@example.com', 'https://shop.example/u/ada/profile');
    await click('bob@example.com', 'https://shop.example/u/bob/profile');
    await click('ada@example.com', 'https://shop.example/p?x=1&ada=1');
    await click('cy@example.com', 'https://shop.example/p?x=1');
    await click('bob@example.com', 'https://shop.example/sale');
    await click('ada@example.com', 'https://site.example/ada');
    advanceClock(61_000);
    await click('ada@example.com', 'https://shop.example/vip?email=ada%40example.com'); // again, after the window

    const report = await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}/links`);
    expect(report.statusCode).toBe(200);
    expect(report.json()).toEqual({
      data: [
        { url: VIP, clicks: 4, uniqueClicks: 3 },
        { url: OFFER, clicks: 2, uniqueClicks: 2 },
        { url: PROFILE, clicks: 2, uniqueClicks: 2 },
        { url: 'https://shop.example/sale', clicks: 1, uniqueClicks: 1 },
        { url: 'https://site.example/ada', clicks: 1, uniqueClicks: 1 },
      ],
    });

    // The same totals as the click events stored: 10 human clicks over 9 distinct URLs, 8 (URL, recipient) pairs of which the report folds the personalised ones.
    const events = await h.db.kysely
      .selectFrom('events')
      .select(['url', 'delivery_id', 'machine'])
      .where('broadcast_id', '=', b.id)
      .where('type', '=', 'email.clicked')
      .execute();
    expect(events.filter((e) => Number(e.machine) === 0)).toHaveLength(10);
    expect(new Set(events.map((e) => e.url)).size).toBe(9);
    expect(report.json().data.reduce((n: number, r: { clicks: number }) => n + r.clicks, 0)).toBe(10);
    const vipDeliveries = new Set(events.filter((e) => e.url!.includes('/vip?')).map((e) => e.delivery_id));
    expect(vipDeliveries.size).toBe(3);
  });
});
