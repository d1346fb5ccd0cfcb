/**
 * Generated inputs for the automations' guards (issue 29 items 3 and 10), on SQLite and PostgreSQL:
 * - random sets of segment.entered automations whose update steps move a contact between segments (cycles, chains and
 *   fan-out alike): the engine always comes to rest, and no contact gets more than the daily cap;
 * - random step trees with or without webhook steps, nested in branches and splits: a key without write:webhooks gets
 *   403 exactly when the tree has one, and never registers an endpoint.
 * SWEEP_REPORT=1 prints the figures of a run.
 */
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { AutomationEngine, DEFAULT_ENGINE } from '../../src/integrations/automations/automations.engine.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, insertSegment, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';

const FROM = 'News <news@acme.test>';
const VALUES = ['a', 'b', 'c', 'd'] as const;
const report = (line: string) => {
  if (process.env.SWEEP_REPORT) console.info(line);
};

describeApi('automation guards: generated inputs', (h) => {
  let webhooks: WebhooksService;
  beforeAll(() => {
    webhooks = new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: true, allowPrivate: true });
  });

  it('any set of automations moving contacts between segments comes to rest, within the daily cap', async () => {
    const automationSet = fc.array(
      fc.record({
        on: fc.constantFrom(...VALUES),
        to: fc.constantFrom(...VALUES),
        sends: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: 1, maxLength: 6 },
    );
    const figures = { cases: 0, automations: 0, runs: 0, refused: 0, messages: 0, maxPerContact: 0, maxTicks: 0 };
    await fc.assert(
      fc.asyncProperty(automationSet, fc.constantFrom(...VALUES), fc.boolean(), async (set, start, cooldown) => {
        const ws = await h.workspace();
        await verifiedDomain(h, ws);
        const segments = new Map<string, string>();
        for (const v of VALUES)
          segments.set(v, await insertSegment(h, ws, { field: 'properties.v', op: 'eq', value: v }, `v=${v}`));
        for (const [i, a] of set.entries()) {
          const steps = [
            ...Array.from({ length: a.sends }, (_, n) => ({
              type: 'send',
              from: FROM,
              emailContent: { subject: `A${i} ${n}`, html: '<p>x</p>' },
            })),
            { type: 'update', properties: { v: a.to } },
          ];
          const created = await h.call(ws.key, 'POST', '/v1/automations', {
            name: `A${i}`,
            trigger: { type: 'segment.entered', segmentId: segments.get(a.on) },
            steps,
          });
          expect(created.statusCode, created.body).toBe(201);
          expect((await h.call(ws.key, 'POST', `/v1/automations/${created.json().id}/activate`)).statusCode).toBe(200);
        }
        const contacts = [
          await insertContact(h, ws, { email: 'p1@example.test', properties: { v: 'z' } }),
          await insertContact(h, ws, { email: 'p2@example.test', properties: { v: 'z' } }),
        ];
        for (const c of contacts) await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { properties: { v: start } });
        const engine = new AutomationEngine(h.db, webhooks, {
          ...DEFAULT_ENGINE,
          workerId: `sweep-${Math.random()}`,
          clock: () => Date.now(),
          reentryCooldownMs: cooldown ? DEFAULT_ENGINE.reentryCooldownMs : 0,
        });
        let ticks = 0;
        for (; ticks < 150; ticks++) if (!((await engine.intake()) + (await engine.runDue()))) break;
        // At rest: without the guards a cycle keeps it busy for every tick.
        expect(ticks).toBeLessThan(150);
        for (const c of contacts) {
          const n = Number(
            (
              await h.db.kysely
                .selectFrom('deliveries')
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .where('contact_id', '=', c)
                .executeTakeFirstOrThrow()
            ).n,
          );
          expect(n).toBeLessThanOrEqual(10); // the default cap
          figures.messages += n;
          figures.maxPerContact = Math.max(figures.maxPerContact, n);
        }
        const runs = await h.db.kysely
          .selectFrom('automation_runs')
          .select('exit_reason')
          .where('workspace_id', '=', ws.id)
          .execute();
        figures.cases++;
        figures.automations += set.length;
        figures.runs += runs.length;
        figures.refused += runs.filter((r) => r.exit_reason?.startsWith('guard:')).length;
        figures.maxTicks = Math.max(figures.maxTicks, ticks);
      }),
      { numRuns: 25 },
    );
    report(`[${h.dbName}] loop sweep: ${JSON.stringify(figures)}`);
  }, 300_000);

  it('a key without write:webhooks gets 403 for exactly the step trees that hold a webhook step, and registers nothing', async () => {
    const ws = await h.workspace();
    await verifiedDomain(h, ws);
    const editor = await h.key(ws, ['write:broadcasts', 'write:contacts', 'read:webhooks']);
    const leaf = fc.oneof(
      fc.constant({ type: 'send', from: FROM, emailContent: { subject: 'Hi', html: '<p>x</p>' } }),
      fc.constant({ type: 'wait', duration: 'PT1H' }),
      fc.constant({ type: 'update', properties: { x: 1 } }),
      fc.constant({ type: 'exit' }),
      fc.stringMatching(/^[a-z0-9/]{0,12}$/).map((p) => ({ type: 'webhook', url: `https://93.184.215.14/${p}` })),
    );
    const tree = fc.letrec<{ steps: unknown[]; step: unknown }>((tie) => ({
      steps: fc.array(tie('step'), { maxLength: 3 }),
      step: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.record({
          type: fc.constant('branch'),
          filter: fc.constant({ all: [] }),
          then: tie('steps'),
          else: tie('steps'),
        }),
        fc.tuple(tie('steps'), tie('steps')).map(([x, y]) => ({
          type: 'split',
          arms: [
            { percent: 50, steps: x },
            { percent: 50, steps: y },
          ],
        })),
      ),
    })).steps;
    const hasWebhook = (steps: unknown): boolean => JSON.stringify(steps).includes('"type":"webhook"');
    const endpoints = async () =>
      (await h.db.kysely.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', ws.id).execute())
        .length;
    const figures = { cases: 0, withWebhook: 0, refused: 0, invalid: 0, created: 0, putRefused: 0 };
    // A tree past the limits (100 steps, 6 levels) is 422 validation_failed whatever holds it: its shape is checked first.
    const invalid = (res: { statusCode: number; json(): { code: string } }) =>
      res.statusCode === 422 && res.json().code === 'validation_failed';
    await fc.assert(
      fc.asyncProperty(tree, tree, async (first, second) => {
        const before = await endpoints();
        const res = await h.call(editor, 'POST', '/v1/automations', {
          name: 'Generated',
          trigger: { type: 'api' },
          steps: first,
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        figures.cases++;
        if (invalid(res)) figures.invalid++;
        else if (hasWebhook(first)) {
          figures.withWebhook++;
          expect(res.statusCode).toBe(403);
          expect(res.json()).toMatchObject({
            code: 'insufficient_scope',
            detail: expect.stringContaining('write:webhooks'),
          });
          figures.refused++;
        } else {
          expect(res.statusCode, res.body).toBe(201);
          figures.created++;
          // Then a PUT of another tree: 403 exactly when it brings a webhook step; activation registers nothing.
          const put = await h.call(editor, 'PUT', `/v1/automations/${res.json().id}`, { steps: second });
          if (!invalid(put)) expect(put.statusCode, put.body).toBe(hasWebhook(second) ? 403 : 200);
          if (put.statusCode === 403) figures.putRefused++;
          const act = await h.call(editor, 'POST', `/v1/automations/${res.json().id}/activate`);
          expect(act.statusCode, act.body).toBeLessThan(500);
        }
        expect(await endpoints()).toBe(before);
      }),
      { numRuns: 150 },
    );
    expect(figures.refused).toBeGreaterThan(10);
    expect(figures.putRefused).toBeGreaterThan(0);
    report(`[${h.dbName}] webhook-permission sweep: ${JSON.stringify(figures)}`);
  }, 300_000);
});
