import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/** Contacts' and workspaces' time zones (issue 34, contract §19; docs/contacts.md "Time zone"). */
describeApi('contact and workspace time zones', (h) => {
  const zoneOf = async (ws: TestWorkspace, email: string) =>
    (
      await h.db.kysely
        .selectFrom('contacts')
        .select('timezone')
        .where('workspace_id', '=', ws.id)
        .where('email', '=', email)
        .executeTakeFirst()
    )?.timezone;

  function importFile(hh: Harness, ws: TestWorkspace, body: string, contentType: string) {
    return hh.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': contentType },
      payload: body,
    });
  }

  it('is set on create and update, shown by get and list, spelt as Intl spells it, and cleared by null', async () => {
    const ws = await h.workspace();
    const created = await h.call(ws.key, 'POST', '/v1/contacts', {
      email: 'ada@example.com',
      timezone: 'europe/berlin',
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().timezone).toBe('Europe/Berlin');
    const id = created.json().id as string;
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${id}`)).json().timezone).toBe('Europe/Berlin');
    expect((await h.call(ws.key, 'GET', '/v1/contacts')).json().data[0].timezone).toBe('Europe/Berlin');
    // Without a zone: null (the workspace's stands in)
    const other = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'grace@example.com' });
    expect(other.json().timezone).toBeNull();
    // An upsert that omits it leaves it; one that gives it replaces it
    await h.call(ws.key, 'POST', '/v1/contacts', { email: 'ada@example.com', firstName: 'Ada' });
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Europe/Berlin');
    await h.call(ws.key, 'POST', '/v1/contacts', { email: 'ada@example.com', timezone: 'Asia/Tokyo' });
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Asia/Tokyo');
    const put = await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { timezone: 'America/New_York' });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().timezone).toBe('America/New_York');
    expect((await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { lastName: 'L' })).json().timezone).toBe(
      'America/New_York',
    );
    expect((await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { timezone: null })).json().timezone).toBeNull();
    // Another workspace sees nothing of it
    const stranger = await h.workspace();
    expect((await h.call(stranger.key, 'GET', `/v1/contacts/${id}`)).statusCode).toBe(404);
    expect((await h.call(stranger.key, 'PUT', `/v1/contacts/${id}`, { timezone: 'Europe/Paris' })).statusCode).toBe(
      404,
    );
    expect(await zoneOf(ws, 'ada@example.com')).toBeNull();
  });

  it('a name that is no IANA zone is 422 at /timezone, and nothing changes', async () => {
    const ws = await h.workspace();
    const created = await h.call(ws.key, 'POST', '/v1/contacts', {
      email: 'ada@example.com',
      timezone: 'Europe/Paris',
    });
    const id = created.json().id as string;
    for (const bad of ['Mars/Olympus_Mons', 'GMT+25', 'Europe/Berlin ', '']) {
      const res = await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'ada@example.com',
        firstName: 'Changed',
        timezone: bad,
      });
      expect(res.statusCode, bad).toBe(422);
      expect(res.json().errors[0].path).toBe('/timezone');
      const put = await h.call(ws.key, 'PUT', `/v1/contacts/${id}`, { firstName: 'Changed', timezone: bad });
      expect(put.statusCode, bad).toBe(422);
      expect(put.json().errors[0].path).toBe('/timezone');
    }
    const after = (await h.call(ws.key, 'GET', `/v1/contacts/${id}`)).json();
    expect(after.firstName).toBeNull();
    expect(after.timezone).toBe('Europe/Paris');
    // nor is a new contact created
    const res = await h.call(ws.key, 'POST', '/v1/contacts', { email: 'new@example.com', timezone: 'Nowhere/City' });
    expect(res.statusCode).toBe(422);
    expect(await zoneOf(ws, 'new@example.com')).toBeUndefined();
  });

  it('imports read a time zone column (CSV "Time zone", NDJSON timezone); a row with an unknown zone is rejected', async () => {
    const ws = await h.workspace();
    const csv =
      'Email Address,First Name,Time zone\nada@example.com,Ada,Europe/Berlin\nbob@example.com,Bob,\neve@example.com,Eve,Atlantis/Capital\n';
    const res = await importFile(h, ws, csv, 'text/csv');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ total: 3, created: 2, skipped: 1 });
    expect(res.json().errors).toEqual([{ line: 4, reason: expect.stringContaining('timezone') }]);
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Europe/Berlin');
    expect(await zoneOf(ws, 'bob@example.com')).toBeNull();
    expect(await zoneOf(ws, 'eve@example.com')).toBeUndefined();
    const ndjson = [
      JSON.stringify({ email: 'bob@example.com', timezone: 'america/los_angeles' }),
      JSON.stringify({ email: 'ada@example.com', firstName: 'Ada L.' }),
      JSON.stringify({ email: 'zed@example.com', timezone: 'Not/AZone' }),
    ].join('\n');
    const res2 = await importFile(h, ws, ndjson, 'application/x-ndjson');
    expect(res2.statusCode, res2.body).toBe(201);
    expect(res2.json()).toMatchObject({ total: 3, created: 0, updated: 2, skipped: 1 });
    expect(await zoneOf(ws, 'bob@example.com')).toBe('America/Los_Angeles');
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Europe/Berlin'); // omitted: unchanged
    // ?columns= may name the column too
    const mapped = await h.app.inject({
      method: 'POST',
      url: `/v1/contacts/imports?columns=${encodeURIComponent(JSON.stringify({ Zone: 'timezone' }))}`,
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: 'email,Zone\nada@example.com,Asia/Tokyo\n',
    });
    expect(mapped.statusCode, mapped.body).toBe(201);
    expect(await zoneOf(ws, 'ada@example.com')).toBe('Asia/Tokyo');
  });

  it("the workspace's settings.timezone: UTC by default, set to an IANA zone, 422 for another (nothing changed)", async () => {
    const ws = await h.workspace();
    expect((await h.call(ws.key, 'GET', '/v1/workspace')).json().settings.timezone).toBe('UTC');
    const set = await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { timezone: 'europe/berlin' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().settings.timezone).toBe('Europe/Berlin');
    const bad = await h.call(ws.key, 'PUT', '/v1/workspace', {
      name: 'Renamed',
      settings: { timezone: 'Europe/Atlantis' },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/settings/timezone');
    const after = (await h.call(ws.key, 'GET', '/v1/workspace')).json();
    expect(after.settings.timezone).toBe('Europe/Berlin');
    expect(after.name).not.toBe('Renamed');
    // another workspace keeps its own
    const other = await h.workspace();
    expect((await h.call(other.key, 'GET', '/v1/workspace')).json().settings.timezone).toBe('UTC');
  });
});
