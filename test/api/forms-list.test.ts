/**
 * The forms list carries each form's stats (docs/api.md §4): views (hosted page views), submissions, confirmations
 * and the conversion, for every form of the page, read with the page in one query (no query per form). Through
 * app.inject on SQLite and PostgreSQL, the numbers checked against the counters' table.
 */
import { expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { listForms } from '../../src/forms/forms/forms.repository.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';

let slugs = 0;

describeApi('the forms list with stats', (h) => {
  async function publishedForm(ws: TestWorkspace, name: string) {
    const slug = `stats-${h.dbName}-${++slugs}`;
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name,
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`)).statusCode).toBe(200);
    return { id: created.json().id as string, slug };
  }
  const view = (slug: string) => h.app.inject({ method: 'GET', url: `/f/${slug}` });
  const submit = (slug: string, email: string) =>
    h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=${encodeURIComponent(email)}`,
    });

  it('gives every form of the page its views, submissions, confirmations and conversion, as GET one does', async () => {
    const ws = await h.workspace();
    const busy = await publishedForm(ws, 'Busy');
    const quiet = await publishedForm(ws, 'Quiet');
    const draft = (await h.call(ws.key, 'POST', '/v1/forms', { name: 'Draft', type: 'SURVEY' })).json();
    for (let i = 0; i < 8; i++) expect((await view(busy.slug)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await submit(busy.slug, `p${i}@example.com`)).statusCode).toBe(200);
    expect((await view(quiet.slug)).statusCode).toBe(200);
    // The console's live preview is not a visitor: no view.
    expect((await h.app.inject({ method: 'GET', url: `/f/${busy.slug}?preview=1` })).statusCode).toBe(200);

    const list = await h.call(ws.key, 'GET', '/v1/forms');
    expect(list.statusCode).toBe(200);
    const byId = new Map(list.json().data.map((f: any) => [f.id, f]));
    expect((byId.get(busy.id) as any).stats).toEqual({ views: 8, submissions: 3, confirmations: 0, conversion: 0.375 });
    expect((byId.get(quiet.id) as any).stats).toEqual({ views: 1, submissions: 0, confirmations: 0, conversion: 0 });
    expect((byId.get(draft.id) as any).stats).toEqual({
      views: 0,
      submissions: 0,
      confirmations: 0,
      conversion: null,
    });
    // The same numbers as the counters' table and as GET /v1/forms/{id}.
    const rows = await h.db.kysely
      .selectFrom('form_counters')
      .select(['form_id', 'views', 'submissions', 'confirmations'])
      .where('workspace_id', '=', ws.id)
      .execute();
    for (const r of rows) {
      const listed = (byId.get(r.form_id) as any).stats;
      expect({ views: listed.views, submissions: listed.submissions, confirmations: listed.confirmations }).toEqual({
        views: Number(r.views),
        submissions: Number(r.submissions),
        confirmations: Number(r.confirmations),
      });
      expect((await h.call(ws.key, 'GET', `/v1/forms/${r.form_id}`)).json().stats).toEqual(listed);
    }
    // Filtered and paged lists carry them too; another workspace's counters never leak in.
    const published = (await h.call(ws.key, 'GET', '/v1/forms?status=PUBLISHED&limit=1')).json();
    expect(published.data).toHaveLength(1);
    expect(published.data[0].stats).toBeDefined();
    const other = await h.workspace('Other');
    expect((await h.call(other.key, 'GET', '/v1/forms')).json().data).toEqual([]);
  });

  it('reads a page of 25 forms and their counters in one query', async () => {
    const ws = await h.workspace();
    for (let i = 0; i < 25; i++) await h.call(ws.key, 'POST', '/v1/forms', { name: `Form ${i}`, type: 'SURVEY' });
    let queries = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    };
    const forms = await listForms(h.db.kysely.withPlugin(counter), ws.id, { limit: 26 });
    expect(forms).toHaveLength(25);
    expect(forms.every((f) => f.stats?.views === 0 && f.stats.conversion === null)).toBe(true);
    expect(queries).toBe(1);
  });
});
