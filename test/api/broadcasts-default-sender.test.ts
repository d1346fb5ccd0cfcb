/**
 * The workspace's default sender (`settings.defaultFrom`, Settings in the console) is a new broadcast's `from` when the
 * create leaves `from` out (docs/api.md §5): the console's "New broadcast" sends only a name. `from: null` means none;
 * a `from` given wins; a default sender whose domain is no longer verified is not used. SQLite and PostgreSQL.
 */
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';

describeApi('a new broadcast takes the default sender', (h) => {
  const stored = (id: string) =>
    h.db.kysely.selectFrom('broadcasts').select('from_address as from').where('id', '=', id).executeTakeFirstOrThrow();

  it('uses settings.defaultFrom when no from is given, and only then', async () => {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, 'acme.test');
    await verifiedDomain(h, ws, 'other.test');

    // No default sender yet: a draft without one.
    const before = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Before' });
    expect(before.statusCode).toBe(201);
    expect(before.json().from).toBeNull();

    const set = await h.call(ws.key, 'PUT', '/v1/workspace', {
      settings: { defaultFrom: 'Acme News <news@acme.test>' },
    });
    expect(set.statusCode, set.body).toBe(200);

    // What the console sends: a name. The draft has the default sender, in the database too.
    const created = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'November' });
    expect(created.statusCode).toBe(201);
    expect(created.json().from).toBe('Acme News <news@acme.test>');
    expect((await stored(created.json().id)).from).toBe('Acme News <news@acme.test>');
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${created.json().id}`)).json().from).toBe(
      'Acme News <news@acme.test>',
    );

    // A from given wins; null means none.
    const given = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Given', from: 'team@other.test' });
    expect(given.json().from).toBe('team@other.test');
    const none = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'None', from: null });
    expect(none.statusCode).toBe(201);
    expect((await stored(none.json().id)).from).toBeNull();

    // The default sender's domain no longer verified: not used (the draft would be refused when sent).
    await h.db.kysely.updateTable('domains').set({ status: 'FAILED' }).where('id', '=', domain.id).execute();
    const stale = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'Stale' });
    expect(stale.statusCode).toBe(201);
    expect(stale.json().from).toBeNull();

    // Another workspace's default sender is its own.
    const other = await h.workspace('Other');
    expect((await h.call(other.key, 'POST', '/v1/broadcasts', { name: 'Theirs' })).json().from).toBeNull();
  });
});
