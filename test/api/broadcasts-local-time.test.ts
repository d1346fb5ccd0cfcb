import { afterEach, expect, it, vi } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';
import { recordEvents } from '../../src/outbox/index.js';

/**
 * Local-time sending (issue 34, contract §19; docs/sending.md "Local-time sending"), on the controlled clock across
 * Europe's DST change of 2027-03-28 (01:00 UTC: Berlin goes from +01:00 to +02:00). 09:00 local that day is:
 * Asia/Tokyo 00:00Z, Europe/Berlin 07:00Z (not 08:00Z: summer time began at 01:00Z), America/New_York (the
 * workspace's zone, already on summer time since 03-14) 13:00Z, America/Los_Angeles 16:00Z.
 */
const TURNS = {
  'Asia/Tokyo': '2027-03-28T00:00:00.000Z',
  'Europe/Berlin': '2027-03-28T07:00:00.000Z',
  'America/New_York': '2027-03-28T13:00:00.000Z',
  'America/Los_Angeles': '2027-03-28T16:00:00.000Z',
};

afterEach(() => {
  vi.useRealTimers();
});

function clockAt(iso: string): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(iso));
}

describeApi('local-time sending', (h) => {
  const sending = useSending(h, { workerId: 'tz-worker', leaseMs: 5000, batchSize: 10, materializeBatch: 2 });

  /** The workers run until nothing is left to do now (deliveries due later stay queued). */
  async function settle(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const busy =
        (await sending.pipeline.runScheduler()) +
        (await sending.pipeline.materialize()) +
        (await sending.pipeline.sendBatch());
      if (!busy) return;
    }
    throw new Error('the pipeline did not settle');
  }

  const received = () => sending.smtp.received.map((m) => m.to).sort();

  async function setup(zones: (string | null)[]) {
    const ws = await h.workspace();
    await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { timezone: 'America/New_York' } });
    const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
    for (const [i, timezone] of zones.entries()) {
      const res = await h.call(ws.key, 'POST', '/v1/contacts', {
        email: `${(timezone ?? 'none').replace('/', '-').toLowerCase()}-${i}@example.com`,
        ...(timezone ? { timezone } : {}),
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const b = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Sunday letter',
      from: `News <news@${domain.name}>`,
      emailContent: { subject: 'Good morning', html: '<p>Hello</p>' },
    });
    expect(b.statusCode, b.body).toBe(201);
    return { ws, id: b.json().id as string };
  }

  const get = async (ws: TestWorkspace, id: string) => (await h.call(ws.key, 'GET', `/v1/broadcasts/${id}`)).json();

  it('each zone is released at 09:00 in that zone, not before, across a DST change; SENDING until the last zone', async () => {
    clockAt('2027-03-27T12:00:00.000Z');
    const { ws, id } = await setup(['Asia/Tokyo', 'Europe/Berlin', 'America/Los_Angeles', null]);
    // 09:00 in the workspace's zone (New York), given with its offset
    const put = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      sendAt: '2027-03-28T09:00:00-04:00',
      sendAtLocal: true,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      status: 'SCHEDULED',
      sendAt: '2027-03-28T13:00:00.000Z',
      sendAtLocal: true,
      localSendTime: '2027-03-28T09:00:00',
    });
    // Another workspace cannot see or touch it
    const stranger = await h.workspace();
    expect((await h.call(stranger.key, 'GET', `/v1/broadcasts/${id}`)).statusCode).toBe(404);
    expect(
      (await h.call(stranger.key, 'PUT', `/v1/broadcasts/${id}`, { sendAt: null, sendAtLocal: false })).statusCode,
    ).toBe(404);

    const expectAt = async (iso: string, status: string, emails: string[]) => {
      clockAt(iso);
      await settle();
      expect((await get(ws, id)).status, iso).toBe(status);
      expect(received(), iso).toEqual(emails.sort());
    };
    const tokyo = 'asia-tokyo-0@example.com';
    const berlin = 'europe-berlin-1@example.com';
    const la = 'america-los_angeles-2@example.com';
    const ny = 'none-3@example.com';
    await expectAt('2027-03-27T23:59:59.000Z', 'SCHEDULED', []);
    await expectAt(TURNS['Asia/Tokyo'], 'SENDING', [tokyo]);
    // 08:00Z would be 09:00 in Berlin on winter time: it is summer time by then
    await expectAt('2027-03-28T06:59:59.000Z', 'SENDING', [tokyo]);
    await expectAt(TURNS['Europe/Berlin'], 'SENDING', [tokyo, berlin]);
    await expectAt('2027-03-28T12:59:59.000Z', 'SENDING', [tokyo, berlin]);
    // a contact without a zone: the workspace's (New York)
    await expectAt(TURNS['America/New_York'], 'SENDING', [tokyo, berlin, ny]);
    const during = await get(ws, id);
    expect(during.stats.zones).toEqual([
      { timezone: 'Asia/Tokyo', recipients: 1, sent: 1, sendAt: TURNS['Asia/Tokyo'] },
      { timezone: 'Europe/Berlin', recipients: 1, sent: 1, sendAt: TURNS['Europe/Berlin'] },
      { timezone: 'America/New_York', recipients: 1, sent: 1, sendAt: TURNS['America/New_York'] },
      { timezone: 'America/Los_Angeles', recipients: 1, sent: 0, sendAt: TURNS['America/Los_Angeles'] },
    ]);
    expect(during.stats).toMatchObject({ recipients: 4, sent: 3, queued: 1 });
    await expectAt('2027-03-28T15:59:59.000Z', 'SENDING', [tokyo, berlin, ny]);
    await expectAt(TURNS['America/Los_Angeles'], 'SENT', [tokyo, berlin, ny, la]);
    // each delivery was due at its zone's turn
    const rows = await h.db.kysely
      .selectFrom('deliveries')
      .select(['email', 'local_zone', 'sent_at'])
      .where('broadcast_id', '=', id)
      .execute();
    expect(Object.fromEntries(rows.map((r) => [r.local_zone, r.email]))).toEqual({
      'Asia/Tokyo': tokyo,
      'Europe/Berlin': berlin,
      'America/Los_Angeles': la,
      'America/New_York': ny,
    });
  });

  it('zones whose time has passed when it starts get it at once; the others wait for their turn', async () => {
    clockAt('2027-03-28T10:00:00.000Z'); // after Tokyo's and Berlin's 09:00, before New York's and LA's
    const { ws, id } = await setup(['Asia/Tokyo', 'Europe/Berlin', 'America/Los_Angeles']);
    const put = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      sendAt: '2027-03-28T09:00:00-04:00',
      sendAtLocal: true,
    });
    expect(put.json().status).toBe('SCHEDULED');
    await settle();
    expect((await get(ws, id)).status).toBe('SENDING');
    expect(received()).toEqual(['asia-tokyo-0@example.com', 'europe-berlin-1@example.com']);
    clockAt(TURNS['America/Los_Angeles']);
    await settle();
    expect((await get(ws, id)).status).toBe('SENT');
    expect(received()).toHaveLength(3);
  });

  it('a time past in every zone of the audience is 422 and changes nothing; without sendAtLocal a past sendAt is 422 too', async () => {
    clockAt('2027-03-28T16:30:00.000Z'); // 09:00 has passed in LA, the audience's last zone
    const { ws, id } = await setup(['Asia/Tokyo', 'America/Los_Angeles', null]);
    const res = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      sendAt: '2027-03-28T09:00:00-04:00',
      sendAtLocal: true,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('/sendAt');
    const after = await get(ws, id);
    expect(after).toMatchObject({ status: 'DRAFT', sendAt: null, sendAtLocal: false, localSendTime: null });
    // the same time read as one instant (not local) is past too
    expect(
      (await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { sendAt: '2027-03-28T09:00:00-04:00' })).statusCode,
    ).toBe(422);
    // a contact far west makes it future somewhere: accepted
    await h.call(ws.key, 'POST', '/v1/contacts', { email: 'honolulu@example.com', timezone: 'Pacific/Honolulu' });
    const ok = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      sendAt: '2027-03-28T09:00:00-04:00',
      sendAtLocal: true,
    });
    expect(ok.statusCode, ok.body).toBe(200);
    // sendAtLocal without a sendAt is 422; sendAt null unschedules and clears it
    const draft = await setup([]);
    const none = await h.call(draft.ws.key, 'PUT', `/v1/broadcasts/${draft.id}`, { sendAtLocal: true });
    expect(none.statusCode).toBe(422);
    expect(none.json().errors[0].path).toBe('/sendAtLocal');
    const cleared = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { sendAt: null });
    expect(cleared.json()).toMatchObject({ status: 'DRAFT', sendAtLocal: false, localSendTime: null });
  });

  it("a resend at local time plans the zones of its own audience (the original's non-openers), not its segment's", async () => {
    clockAt('2027-03-27T12:00:00.000Z');
    const { ws, id } = await setup(['Asia/Tokyo', 'America/Los_Angeles']);
    await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { tracking: { opens: true, clicks: false } });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/send`)).statusCode).toBe(202);
    await settle();
    expect(received()).toHaveLength(2);
    // Tokyo's reader opened it (a person): the non-openers are Los Angeles only.
    const tokyo = await h.db.kysely
      .selectFrom('deliveries')
      .select(['contact_id'])
      .where('broadcast_id', '=', id)
      .where('email', 'like', 'asia-tokyo%')
      .executeTakeFirstOrThrow();
    await recordEvents(
      h.db.kysely,
      ws.id,
      [{ type: 'email.opened', contactId: tokyo.contact_id, broadcastId: id }],
      new Date().toISOString(),
    );
    const resend = await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/resend`, { to: 'NON_OPENERS' });
    expect(resend.statusCode, resend.body).toBe(201);
    const scheduled = await h.call(ws.key, 'PUT', `/v1/broadcasts/${resend.json().id}`, {
      sendAt: '2027-03-28T09:00:00-04:00',
      sendAtLocal: true,
    });
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    const row = await h.db.kysely
      .selectFrom('broadcasts')
      .select('local_start_at')
      .where('id', '=', resend.json().id)
      .executeTakeFirstOrThrow();
    // It starts at Los Angeles' turn: Tokyo's reader is not in its audience.
    expect(new Date(row.local_start_at!).toISOString()).toBe(TURNS['America/Los_Angeles']);
  });

  it('an A/B test is not sent at local time: 422 either way round, nothing changed', async () => {
    clockAt('2027-03-27T12:00:00.000Z');
    const { ws, id } = await setup(['Asia/Tokyo', null]);
    const abTest = {
      variants: [
        { id: 'a', subject: 'A' },
        { id: 'b', subject: 'B' },
      ],
      testPercent: 20,
      winnerBy: 'OPENS',
      waitMinutes: 60,
    };
    const both = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      abTest,
      sendAt: '2027-03-28T09:00:00Z',
      sendAtLocal: true,
    });
    expect(both.statusCode).toBe(422);
    expect(both.json().errors[0].path).toBe('/abTest');
    expect(await get(ws, id)).toMatchObject({ status: 'DRAFT', abTest: null, sendAtLocal: false });
    // Scheduled at local time first, then a test added: refused too.
    const local = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, {
      sendAt: '2027-03-28T09:00:00Z',
      sendAtLocal: true,
    });
    expect(local.statusCode, local.body).toBe(200);
    const later = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { abTest });
    expect(later.statusCode).toBe(422);
    expect(await get(ws, id)).toMatchObject({ status: 'SCHEDULED', abTest: null, sendAtLocal: true });
  });
});
