/**
 * GET /v1/stats/contacts: contacts created per UTC hour over the last days, for the console's dashboard. Counted
 * by the database; only the workspace's own contacts; read:contacts; the window is whole hours.
 */
import { encodeTime } from 'ulid';
import { expect, it } from 'vitest';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

let serial = 0;

describeApi('contacts per hour (GET /v1/stats/contacts)', (h) => {
  /** A contact created at `t` (its id a ULID of that time, as the features make them). */
  async function contactAt(ws: TestWorkspace, t: number) {
    const n = ++serial;
    const at = new Date(t).toISOString();
    await h.db.kysely
      .insertInto('contacts')
      .values({
        id: `ct_${encodeTime(t, 10)}${String(n).padStart(16, '0')}`,
        workspace_id: ws.id,
        email: `p${n}@example.test`,
        first_name: null,
        last_name: null,
        properties: '{}',
        status: 'SUBSCRIBED',
        created_at: at,
        updated_at: at,
      })
      .execute();
  }

  it('counts contacts per UTC hour in the window, oldest first, leaving empty hours out', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const now = Date.now();
    const hour = (t: number) => `${new Date(Math.floor(t / 3_600_000) * 3_600_000).toISOString()}`;
    // Ten minutes into an hour two days ago: the three contacts share their hour.
    const twoDaysAgo = Math.floor((now - 2 * 86_400_000) / 3_600_000) * 3_600_000 + 600_000;
    for (let i = 0; i < 3; i++) await contactAt(ws, twoDaysAgo + i * 1000);
    await contactAt(ws, now - 60_000);
    await contactAt(ws, now - 40 * 86_400_000); // outside 30 days
    await contactAt(other, now - 60_000); // another workspace

    const res = await h.call(ws.key, 'GET', '/v1/stats/contacts?days=30');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.total).toBe(4);
    expect(body.hours).toEqual([
      { hour: hour(twoDaysAgo), created: 3 },
      { hour: hour(now - 60_000), created: 1 },
    ]);
    expect(body.since).toBe(
      new Date(Math.floor((Date.parse(body.until) - 30 * 86_400_000) / 3_600_000) * 3_600_000).toISOString(),
    );

    // The window: 45 days takes the old one in; the default is 30.
    expect((await h.call(ws.key, 'GET', '/v1/stats/contacts?days=45')).json().total).toBe(5);
    expect((await h.call(ws.key, 'GET', '/v1/stats/contacts')).json().total).toBe(4);
    expect((await h.app.services.contacts.growth(ws.id, 1)).total).toBe(1);
  });

  it('validates the window and needs read:contacts', async () => {
    const ws = await h.workspace();
    for (const days of ['0', '91', 'x'])
      expect((await h.call(ws.key, 'GET', `/v1/stats/contacts?days=${days}`)).statusCode, days).toBe(422);
    const forms = await h.key(ws, ['read:forms']);
    expect((await h.call(forms, 'GET', '/v1/stats/contacts')).statusCode).toBe(403);
    const readers = await h.key(ws, ['read:contacts']);
    expect((await h.call(readers, 'GET', '/v1/stats/contacts')).json()).toMatchObject({ total: 0, hours: [] });
  });
});
