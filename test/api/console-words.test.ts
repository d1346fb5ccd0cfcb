/**
 * Issue 33 items 5, 6, 18 on the API side: each `errors[]` item names what was violated (`keyword`, `params`) so the
 * console can word it; the send of an empty draft lists what is missing; the report's timeline buckets by the
 * reader's zone (`?tz=`), a send at 8:51 in the 8:00 hour, with the controlled clock.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Sets this process's clock (the app's and the pipeline's); timers keep running. */
function setClock(iso: string): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(iso));
}

describeApi('console words: error keywords, send checklist, timeline zones', (h) => {
  const sending = useSending(h, { workerId: 'words-worker' });

  it('validation errors carry the schema keyword and its figures, the contract shape kept', async () => {
    const ws = await h.workspace();
    const empty = await h.call(ws.key, 'POST', '/v1/topics', { name: '', defaultSubscription: 'OPT_IN' });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().errors).toEqual([
      { path: '/name', message: expect.any(String), keyword: 'minLength', params: { limit: 1 } },
    ]);
    const long = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x'.repeat(256) });
    expect(long.json().errors).toEqual([
      {
        path: '/name',
        message: 'must NOT have more than 255 characters',
        keyword: 'maxLength',
        params: { limit: 255 },
      },
    ]);
    const email = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'not-an-address' });
    expect(email.statusCode).toBe(422);
    expect(email.json().errors[0]).toMatchObject({ path: '/email', keyword: 'format', params: { format: 'email' } });
    const missing = await h.call(ws.key, 'POST', '/v1/broadcasts', {});
    expect(missing.json().errors).toEqual([{ path: '/name', message: 'is required', keyword: 'required' }]);
    const readOnly = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x', status: 'SENT' });
    expect(readOnly.json().errors).toEqual([
      { path: '/status', message: 'is read-only', keyword: 'additionalProperties', params: { readOnly: true } },
    ]);
    // Rules of the service name themselves too: a past send time is `future`.
    const b = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'x' })).json();
    const past = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { sendAt: '2020-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(422);
    expect(past.json().errors).toEqual([{ path: '/sendAt', message: expect.any(String), keyword: 'future' }]);
    // Nothing changed.
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json()).toMatchObject({
      status: 'DRAFT',
      sendAt: null,
    });
  });

  it('an empty draft cannot be sent: 422 broadcast_incomplete lists each missing part by its preflight check', async () => {
    const ws = await h.workspace();
    const b = (await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Empty' })).json();
    const send = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    expect(send.statusCode).toBe(422);
    expect(send.json().code).toBe('broadcast_incomplete');
    expect(send.json().errors.map((e: { keyword: string }) => e.keyword)).toEqual([
      'preflight_from',
      'preflight_subject',
      'preflight_body',
    ]);
    const pre = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preflight`)).json();
    expect(pre.ok).toBe(false);
    expect(pre.checks.filter((c: { status: string }) => c.status === 'fail').map((c: { id: string }) => c.id)).toEqual([
      'from',
      'subject',
      'body',
    ]);
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json().status).toBe('DRAFT');
  });

  it("the timeline's buckets are the reader's hours and days: a send at 08:51 is in the 08:00 hour", async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `z${ws.id.slice(-8).toLowerCase()}.test`);
    for (let i = 0; i < 3; i++) await insertContact(h, ws, { email: `zone${i}@example.com` });
    const b = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Zones',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', html: '<p>Hello there, a message long enough to carry a pixel.</p>' },
      })
    ).json();
    setClock('2026-11-29T08:51:00.000Z');
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    const sentAt = await h.db.kysely
      .selectFrom('events')
      .select('occurred_at')
      .where('broadcast_id', '=', b.id)
      .where('type', '=', 'email.sent')
      .execute();
    expect(sentAt).toHaveLength(3);
    const timeline = async (query: string) =>
      (await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}/timeline${query}`)).json();

    const utc = await timeline('');
    expect(utc).toMatchObject({ bucket: 'hour', timeZone: 'UTC' });
    expect(utc.data).toEqual([{ at: '2026-11-29T08:00:00.000Z', sent: 3, opens: 0, clicks: 0, bounces: 0 }]);
    // 08:51Z is 14:21 in Kolkata (UTC+05:30): its 14:00 hour starts at 08:30Z.
    expect((await timeline('?tz=Asia/Kolkata')).data).toEqual([
      { at: '2026-11-29T08:30:00.000Z', sent: 3, opens: 0, clicks: 0, bounces: 0 },
    ]);
    // 08:51 in Paris (UTC+1 in November) is 07:51Z: the 08:00 hour there starts at 07:00Z.
    setClock('2026-11-29T07:51:00.000Z');
    const paris = (
      await h.call(ws.key, 'POST', '/v1/broadcasts', {
        name: 'Paris',
        from: `news@${domain.name}`,
        emailContent: { subject: 'Hi', text: 'Hello' },
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${paris.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    const inParis = (await h.call(ws.key, 'GET', `/v1/broadcasts/${paris.id}/timeline?tz=Europe/Paris`)).json();
    expect(inParis.data.map((p: { at: string }) => p.at)).toEqual(['2026-11-29T07:00:00.000Z']);
    // Days: 08:51Z is still the 29th in New York (03:51 EST), a day that starts at 05:00Z; in UTC at 00:00Z.
    expect((await timeline('?bucket=day&tz=America/New_York')).data.map((p: { at: string }) => p.at)).toEqual([
      '2026-11-29T05:00:00.000Z',
    ]);
    expect((await timeline('?bucket=day')).data.map((p: { at: string }) => p.at)).toEqual(['2026-11-29T00:00:00.000Z']);

    const bad = await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}/timeline?tz=Mars/Olympus`);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([
      { path: '/query/tz', message: expect.any(String), keyword: 'format', params: { format: 'time-zone' } },
    ]);
    const other = await h.workspace('Other');
    expect((await h.call(other.key, 'GET', `/v1/broadcasts/${b.id}/timeline?tz=Europe/Paris`)).statusCode).toBe(404);
  });
});
