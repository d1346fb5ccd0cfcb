import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

/**
 * Concurrent publishes. On PostgreSQL the requests run on separate pooled connections, so they truly
 * race; whatever the interleaving, a group ends with exactly one PUBLISHED version.
 */
describeApi('forms: concurrent publishing', (h) => {
  async function setup() {
    const ws = await h.workspace();
    const call = (method: 'POST' | 'GET', url: string) => h.call(ws.key, method, url);
    const v1 = (await h.call(ws.key, 'POST', '/v1/forms', { name: 'Race', type: 'SURVEY' })).json();
    await call('POST', `/v1/forms/${v1.id}/publish`);
    const v2 = (await call('POST', `/v1/forms/${v1.id}/versions`)).json();
    await call('POST', `/v1/forms/${v2.id}/publish`); // v1 ARCHIVED, v2 PUBLISHED
    const v3 = (await call('POST', `/v1/forms/${v2.id}/versions`)).json(); // v3 DRAFT
    return { ws, call, v1, v2, v3 };
  }

  const publishedCount = async (groupId: string) =>
    (
      await h.db.kysely
        .selectFrom('forms')
        .select('id')
        .where('form_group_id', '=', groupId)
        .where('status', '=', 'PUBLISHED')
        .execute()
    ).length;

  it('the same draft published 12 times at once: one 200, the rest 409 form_already_published', async () => {
    const { call, v3 } = await setup();
    const results = await Promise.all(Array.from({ length: 12 }, () => call('POST', `/v1/forms/${v3.id}/publish`)));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) {
      expect(r.statusCode).toBe(409);
      expect(['form_already_published', 'invalid_state']).toContain(r.json().code);
    }
    expect(await publishedCount(v3.formGroupId)).toBe(1);
  });

  it('a draft and a rollback published at once, many rounds: always exactly one PUBLISHED', async () => {
    const { call, v1, v3 } = await setup();
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all([
        call('POST', `/v1/forms/${v3.id}/publish`),
        call('POST', `/v1/forms/${v1.id}/publish`),
        call('POST', `/v1/forms/${v3.id}/publish`),
        call('POST', `/v1/forms/${v1.id}/publish`),
      ]);
      for (const r of results) expect([200, 409]).toContain(r.statusCode);
      expect(await publishedCount(v1.formGroupId)).toBe(1);
      const statuses = (await call('GET', `/v1/forms/${v1.id}/versions`))
        .json()
        .data.map((f: { status: string }) => f.status);
      expect(statuses.filter((s: string) => s === 'PUBLISHED')).toHaveLength(1);
      expect(statuses.filter((s: string) => s === 'DRAFT')).toHaveLength(0);
    }
  });

  it('new versions requested at once: one 201, the rest 409 draft_version_exists', async () => {
    const { call, v3 } = await setup();
    await call('POST', `/v1/forms/${v3.id}/publish`);
    const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/v1/forms/${v3.id}/versions`)));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 201)) expect(r.json().code).toBe('draft_version_exists');
    const drafts = await h.db.kysely
      .selectFrom('forms')
      .select('id')
      .where('form_group_id', '=', v3.formGroupId)
      .where('status', '=', 'DRAFT')
      .execute();
    expect(drafts).toHaveLength(1);
  });
});
