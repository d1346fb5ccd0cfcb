import Parser from 'rss-parser';
import { expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

/** The public archive (docs/archive.md, contract §19): a workspace's slug, its SENT broadcasts with `archive` on, the feed. */
describeApi('public archive', (h) => {
  const sending = useSending(h, { workerId: 'archive-worker', leaseMs: 5000 });

  async function workspaceWithSlug(name = 'Acme & Co <News>') {
    const ws = await h.workspace(name);
    const slug = `acme-${ws.id.slice(-10).toLowerCase()}`;
    const res = await h.call(ws.key, 'PUT', '/v1/workspace', {
      slug,
      settings: { brandColor: '#0b7a5f', postalAddress: '1 Main Street, Springfield' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().slug).toBe(slug);
    const domain = await verifiedDomain(h, ws, `a${ws.id.slice(-8).toLowerCase()}.test`);
    await insertContact(h, ws, { email: `ada@${domain.name}`, firstName: 'Ada', properties: { plan: 'gold' } });
    return { ws, slug, domain };
  }

  async function broadcast(
    ws: TestWorkspace,
    domain: { name: string },
    opts: { subject: string; archive?: boolean; send?: boolean },
  ): Promise<string> {
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: `B ${opts.subject}`,
      from: `Acme <news@${domain.name}>`,
      ...(opts.archive !== undefined ? { archive: opts.archive } : {}),
      emailContent: {
        subject: opts.subject,
        previewText: `About ${opts.subject}`,
        html: '<html><body><p>Hi {{ contact.firstName | default: "reader" }} {{ contact.email }} {{ contact.properties.plan }}</p><p><a href="https://example.com/x?a=1&amp;b=2">Read</a> <a href="{{ unsubscribe_url }}">Leave</a></p></body></html>',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    if (opts.send !== false) {
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/send`)).statusCode).toBe(202);
      await sending.drain();
    }
    return id;
  }

  it('archive defaults to false, is set at creation and by PUT, and is returned', async () => {
    const { ws, domain } = await workspaceWithSlug();
    const id = await broadcast(ws, domain, { subject: 'Draft', send: false });
    expect((await h.call(ws.key, 'GET', `/v1/broadcasts/${id}`)).json().archive).toBe(false);
    const put = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { archive: true });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().archive).toBe(true);
    const row = await h.db.kysely.selectFrom('broadcasts').select('archive').where('id', '=', id).executeTakeFirst();
    expect(row?.archive).toBe(1);
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { archive: 'yes' })).statusCode).toBe(422);
  });

  it('lists only SENT broadcasts with archive on, newest first, branded, linking the feed', async () => {
    const { ws, slug, domain } = await workspaceWithSlug();
    const first = await broadcast(ws, domain, { subject: 'First <issue>', archive: true });
    await broadcast(ws, domain, { subject: 'Not archived', archive: false });
    await broadcast(ws, domain, { subject: 'Still a draft', archive: true, send: false });
    const second = await broadcast(ws, domain, { subject: 'Second issue', archive: true });

    const res = await h.app.inject({ method: 'GET', url: `/archive/${slug}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    const html = res.body;
    expect(html).toContain('First &lt;issue&gt;');
    expect(html).toContain('Second issue');
    expect(html).not.toContain('Not archived');
    expect(html).not.toContain('Still a draft');
    expect(html.indexOf(second)).toBeLessThan(html.indexOf(first));
    expect(html).toContain('Acme &amp; Co &lt;News&gt;');
    expect(html).toContain('#0b7a5f');
    expect(html).toContain(
      `<link rel="alternate" type="application/atom+xml" title="Acme &amp; Co &lt;News&gt;" href="http://localhost:3000/archive/${slug}/feed.xml">`,
    );
  });

  it('an archived broadcast has no contact data, no unsubscribe token or link, no pixel, links untracked', async () => {
    const { ws, slug, domain } = await workspaceWithSlug();
    const id = await broadcast(ws, domain, { subject: 'Open letter', archive: true });
    const res = await h.app.inject({ method: 'GET', url: `/archive/${slug}/${id}` });
    expect(res.statusCode).toBe(200);
    // Sandboxed (a meta refresh in a workspace's HTML is no redirect from this origin); links still open.
    expect(res.headers['content-security-policy']).toMatch(/; sandbox allow-popups allow-popups-to-escape-sandbox$/);
    const html = res.body;
    expect(html).toContain('Hi reader');
    expect(html).not.toContain('Ada');
    expect(html).not.toContain('ada@');
    expect(html).not.toContain('gold');
    expect(html).not.toContain('/unsubscribe/');
    const tokens = await h.db.kysely
      .selectFrom('deliveries')
      .select('unsubscribe_token')
      .where('broadcast_id', '=', id)
      .execute();
    expect(tokens.length).toBe(1);
    for (const t of tokens) expect(html).not.toContain(t.unsubscribe_token);
    expect(html).not.toContain('/t/o/');
    expect(html).not.toContain('/t/c/');
    expect(html).toContain('href="https://example.com/x?a=1&amp;b=2"');
    expect(html).toContain('1 Main Street, Springfield');
    expect(html).toContain(`href="http://localhost:3000/archive/${slug}/feed.xml"`);
  });

  it('404s: unknown slug, a draft, one not archived, another workspace’s broadcast under this slug', async () => {
    const a = await workspaceWithSlug();
    const b = await workspaceWithSlug('Other');
    const theirs = await broadcast(b.ws, b.domain, { subject: 'Theirs', archive: true });
    const draft = await broadcast(a.ws, a.domain, { subject: 'Draft', archive: true, send: false });
    const hidden = await broadcast(a.ws, a.domain, { subject: 'Hidden', archive: false });
    expect((await h.app.inject({ method: 'GET', url: `/archive/${b.slug}/${theirs}` })).statusCode).toBe(200);
    for (const url of [
      `/archive/no-such-slug`,
      `/archive/no-such-slug/feed.xml`,
      `/archive/${a.slug}/${theirs}`,
      `/archive/${a.slug}/${draft}`,
      `/archive/${a.slug}/${hidden}`,
      `/archive/${a.slug}/bc_nope`,
      `/archive/${a.slug}?page=2`,
      `/archive/NOT_A_SLUG`,
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.body).not.toContain('Theirs');
    }
    // A workspace without a slug has no archive at all.
    const none = await h.workspace('No slug');
    expect((await h.call(none.key, 'GET', '/v1/workspace')).json().slug).toBeNull();
  });

  it('the Atom feed parses, with ids, updated, links, summary and escaped content', async () => {
    const { ws, slug, domain } = await workspaceWithSlug();
    const first = await broadcast(ws, domain, { subject: 'Fish & <Chips> "quoted"', archive: true });
    const second = await broadcast(ws, domain, { subject: 'Second', archive: true });
    await broadcast(ws, domain, { subject: 'Hidden', archive: false });
    const res = await h.app.inject({ method: 'GET', url: `/archive/${slug}/feed.xml` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect(res.body.startsWith('<?xml version="1.0" encoding="utf-8"?>')).toBe(true);
    const feed = await new Parser().parseString(res.body);
    expect(feed.title).toBe('Acme & Co <News>');
    expect(feed.link).toBe(`http://localhost:3000/archive/${slug}`);
    expect(feed.items.map((i) => i.title)).toEqual(['Second', 'Fish & <Chips> "quoted"']);
    const [s, f] = feed.items;
    expect(s!.link).toBe(`http://localhost:3000/archive/${slug}/${second}`);
    expect(f!.link).toBe(`http://localhost:3000/archive/${slug}/${first}`);
    expect(f!.id).toContain(first);
    expect(s!.id).not.toBe(f!.id);
    expect(f!.isoDate).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(f!.summary).toBe('About Fish & <Chips> "quoted"');
    expect(f!.content).toContain('Hi reader');
    expect(f!.content).not.toContain('ada@');
    expect(f!.content).not.toContain('/unsubscribe/');
    expect(res.body).toMatch(/<updated>\d{4}-\d{2}-\d{2}T[^<]+<\/updated>/);
    expect(res.body).toContain('<title type="text">Fish &amp; &lt;Chips&gt; &quot;quoted&quot;</title>');
  });

  it('PUT /v1/broadcasts/{id}/archive puts a SENT broadcast in the archive or takes it out; 404 across workspaces', async () => {
    const { ws, slug, domain } = await workspaceWithSlug();
    const other = await workspaceWithSlug('Other');
    const id = await broadcast(ws, domain, { subject: 'Afterthought', archive: false });
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}`, { archive: true })).statusCode).toBe(409);
    const on = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json()).toMatchObject({ id, status: 'SENT', archive: true });
    expect((await h.app.inject({ method: 'GET', url: `/archive/${slug}/${id}` })).statusCode).toBe(200);
    const off = await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: false });
    expect(off.json().archive).toBe(false);
    expect((await h.app.inject({ method: 'GET', url: `/archive/${slug}/${id}` })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: `/archive/${slug}/feed.xml` })).body).not.toContain(id);
    // Another workspace's key: 404, nothing changed; a read-only key: 403; a bad body: 422.
    expect((await h.call(other.ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: true })).statusCode).toBe(404);
    const reader = await h.key(ws, ['read:broadcasts']);
    expect((await h.call(reader, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: true })).statusCode).toBe(403);
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: 1 })).statusCode).toBe(422);
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, {})).statusCode).toBe(422);
    const row = await h.db.kysely.selectFrom('broadcasts').select('archive').where('id', '=', id).executeTakeFirst();
    expect(row?.archive).toBe(0);
    // The audit log: each change of the switch once (a PUT that changes nothing records nothing), none for refusals.
    expect((await h.call(ws.key, 'PUT', `/v1/broadcasts/${id}/archive`, { archive: false })).statusCode).toBe(200);
    const audit = await h.db.kysely
      .selectFrom('audit_log')
      .select(['action', 'target_id', 'changes'])
      .where('workspace_id', '=', ws.id)
      .where('action', '=', 'broadcast.archive_changed')
      .orderBy('id')
      .execute();
    const changes = (c: unknown) => (typeof c === 'string' ? JSON.parse(c) : c);
    expect(audit.map((a) => [a.target_id, changes(a.changes)])).toEqual([
      [id, { archive: { before: false, after: true } }],
      [id, { archive: { before: true, after: false } }],
    ]);
  });

  it('pages the list when there are many', async () => {
    const { ws, slug } = await workspaceWithSlug();
    const now = new Date().toISOString();
    // Rows written directly: sending 21 broadcasts through the pipeline would only make the test slow.
    for (let i = 0; i < 21; i++)
      await h.db.kysely
        .insertInto('broadcasts')
        .values({
          id: newId('bc'),
          workspace_id: ws.id,
          name: `n${i}`,
          status: 'SENT',
          subject: `Issue number ${i}`,
          created_at: now,
          updated_at: now,
          sent_at: new Date(Date.parse(now) - (21 - i) * 60_000).toISOString(),
          archive: 1,
        } as never)
        .execute();
    const one = await h.app.inject({ method: 'GET', url: `/archive/${slug}` });
    expect(one.body).toContain('Issue number 20');
    expect(one.body).not.toContain('Issue number 0<');
    expect(one.body).toContain(`href="http://localhost:3000/archive/${slug}?page=2"`);
    const two = await h.app.inject({ method: 'GET', url: `/archive/${slug}?page=2` });
    expect(two.statusCode).toBe(200);
    expect(two.body).toContain('Issue number 0<');
    expect(two.body).not.toContain('Issue number 20');
  });

  it('a slug is unique across the installation: taken → 409 slug_taken, nothing changed; bad pattern 422; null clears', async () => {
    const a = await workspaceWithSlug();
    const b = await h.workspace('B');
    const taken = await h.call(b.key, 'PUT', '/v1/workspace', { slug: a.slug, name: 'B renamed' });
    expect(taken.statusCode).toBe(409);
    expect(taken.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(taken.json().code).toBe('slug_taken');
    const after = (await h.call(b.key, 'GET', '/v1/workspace')).json();
    expect(after.slug).toBeNull();
    expect(after.name).toBe('B');
    for (const slug of ['Has Caps', 'a', '-x', 'x--y', 'a'.repeat(101)])
      expect((await h.call(b.key, 'PUT', '/v1/workspace', { slug })).statusCode, slug).toBe(422);
    // The same slug again on its own workspace is fine; null takes the archive down.
    expect((await h.call(a.ws.key, 'PUT', '/v1/workspace', { slug: a.slug })).statusCode).toBe(200);
    expect((await h.call(a.ws.key, 'PUT', '/v1/workspace', { slug: null })).json().slug).toBeNull();
    expect((await h.app.inject({ method: 'GET', url: `/archive/${a.slug}` })).statusCode).toBe(404);
    // Two workspaces saving the same slug at once: one wins, the other is 409 (the unique index decides).
    const [c, d] = [await h.workspace('C'), await h.workspace('D')];
    const race = await Promise.all(
      [c, d].map((w) => h.call(w.key, 'PUT', '/v1/workspace', { slug: `race-${c.id.slice(-8).toLowerCase()}` })),
    );
    expect(race.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    // Once released, another workspace may take it.
    expect((await h.call(b.key, 'PUT', '/v1/workspace', { slug: a.slug })).json().slug).toBe(a.slug);
  });

  // Last in the file: it uses up this visitor's budget of the web version route.
  it('the public pages are rate-limited per visitor: 429, a page', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 125; i++)
      statuses.push((await h.app.inject({ method: 'GET', url: `/w/${'a'.repeat(79)}` })).statusCode);
    expect(statuses.slice(0, 120).every((s) => s === 404)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const limited = await h.app.inject({ method: 'GET', url: '/w/preview' });
    expect(limited.statusCode).toBe(200); // another route, its own budget
    const last = await h.app.inject({ method: 'GET', url: `/w/${'b'.repeat(79)}` });
    expect(last.statusCode).toBe(429);
    expect(last.headers['content-type']).toMatch(/^text\/html/);
    expect(last.body).toContain('Too many requests');
  });
});
