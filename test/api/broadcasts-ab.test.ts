import { afterEach, describe, expect, it, vi } from 'vitest';
import { insertTrackingEvents } from '../../src/outbox/events/events.repository.js';
import { newId } from '../../src/lib/ids.js';
import fc from 'fast-check';
import {
  selectTestShare,
  significance,
  standing,
  testSize,
  variantOf,
  variantSizes,
  type AbSelection,
} from '../../src/sending/broadcasts/broadcasts.ab.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

/** A/B broadcasts (contract §17, docs/ab-tests.md). */

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the clock of this process (the app's and the pipeline's) `ms` ahead; timers keep running. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

const HTML = '<p>Hi {{ contact.firstName | default: "there" }}, <a href="https://shop.example/sale">the sale</a></p>';

const abTest = (over: Record<string, unknown> = {}) => ({
  variants: [
    { id: 'a', subject: 'Subject A' },
    { id: 'b', subject: 'Subject B', previewText: 'Preview B' },
  ],
  testPercent: 50,
  winnerBy: 'OPENS',
  waitMinutes: 30,
  ...over,
});

/** The test share of `ids` chosen by selectTestShare, read in pages of `page` ids. */
function select(broadcastId: string, test: { variants: string[]; testPercent: number }, ids: string[], page = 1000) {
  return selectTestShare(broadcastId, test, async (visit) => {
    for (let i = 0; i < ids.length; i += page) visit(ids.slice(i, i + page));
  });
}

/** How many of `ids` each variant (and null: not in the test) gets, asked one contact at a time as the batches do. */
function countsOf(selection: AbSelection, variants: string[], broadcastId: string, ids: readonly string[]) {
  const counts = new Map<string | null, number>();
  for (const id of ids) {
    const v = variantOf(selection, variants, broadcastId, id);
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return counts;
}

const contactIds = (n: number, seed = '') =>
  Array.from({ length: n }, (_, i) => `ct_${seed}${String(i).padStart(26 - seed.length, '0')}`);

describe('the test share (pure)', () => {
  it('is exactly round(N × testPercent / 100), halves up, split evenly; at least one per variant when N ≥ 2 per variant', () => {
    expect(testSize(20, 50, 2)).toBe(10);
    expect(variantSizes(10, 2)).toEqual([5, 5]);
    expect(testSize(1000, 15, 3)).toBe(150);
    expect(variantSizes(150, 4)).toEqual([38, 38, 37, 37]);
    expect(testSize(25, 10, 2)).toBe(3); // 2.5 → 3
    expect(testSize(24, 10, 2)).toBe(2); // 2.4 → 2
    expect(testSize(20, 10, 4)).toBe(4); // 2, raised to one per variant
    expect(testSize(8, 10, 4)).toBe(4); // 0.8 → 1, raised: 8 allow two per variant
    expect(testSize(7, 10, 4)).toBe(1); // 7 do not: 0.7 → 1
    expect(testSize(3, 10, 2)).toBe(0);
    expect(testSize(1, 50, 2)).toBe(1); // 0.5 → 1
    expect(testSize(0, 50, 2)).toBe(0);
  });

  it('20 contacts, 50 %, 2 variants: 10 in the test, 5 and 5, for every broadcast', async () => {
    const ids = contactIds(20);
    for (let b = 0; b < 50; b++) {
      const broadcastId = `bc_${b}`;
      const selection = await select(broadcastId, { variants: ['a', 'b'], testPercent: 50 }, ids, 7);
      expect(selection).toMatchObject({ audience: 20, test: 10 });
      const counts = countsOf(selection, ['a', 'b'], broadcastId, ids);
      expect([counts.get('a'), counts.get('b'), counts.get(null)]).toEqual([5, 5, 10]);
    }
  });

  it('property: exact sizes for any N, testPercent and 2–4 variants; the same whatever the pages; differs by broadcast', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 10, max: 50 }),
        fc.integer({ min: 2, max: 4 }),
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        async (n, testPercent, v, bid, pageA, pageB) => {
          const variants = ['a', 'b', 'c', 'd'].slice(0, v);
          const broadcastId = `bc_${bid}`;
          const ids = contactIds(n);
          const selection = await select(broadcastId, { variants, testPercent }, ids, pageA);
          const k = testSize(n, testPercent, v);
          const rounded = Math.floor((n * testPercent + 50) / 100);
          expect(k === rounded || (rounded < v && k === v && n >= 2 * v)).toBe(true);
          expect(selection).toMatchObject({ audience: n, test: k });
          const counts = countsOf(selection, variants, broadcastId, ids);
          const sizes = variants.map((x) => counts.get(x) ?? 0);
          expect(sizes).toEqual(variantSizes(k, v));
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
          expect(counts.get(null) ?? 0).toBe(n - k);
          // Deterministic: read in other pages, in another order, the same selection, the same answer per contact.
          const again = await select(broadcastId, { variants, testPercent }, [...ids].reverse(), pageB);
          expect(again).toEqual(selection);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hashes that tie at a cut (a 64-bit collision) are ordered by contact id: still exact', async () => {
    // Three hash values for 100 contacts: every cut falls among equal hashes, so the ids decide.
    const ids = contactIds(100);
    const hash = (_: string, id: string) => BigInt(Number(id.slice(-2)) % 3) * 1000n;
    const key = (id: string) => hash('', id).toString(16).padStart(16, '0') + id;
    for (const [testPercent, v] of [
      [50, 2],
      [33, 3],
      [10, 4],
      [25, 4],
    ] as const) {
      const selection = await selectTestShare(
        'bc_tie',
        { variants: ['a', 'b', 'c', 'd'].slice(0, v), testPercent },
        async (visit) => visit(ids),
        hash,
      );
      const sizes = selection.cuts.map(
        (cut, j) => ids.filter((id) => key(id) < cut && (j === 0 || key(id) >= selection.cuts[j - 1]!)).length,
      );
      expect(sizes).toEqual(variantSizes(testSize(100, testPercent, v), v));
    }
  });

  it('is the same for a contact every time, random within the audience, and differs between broadcasts', async () => {
    const t = { variants: ['a', 'b'], testPercent: 50 };
    const ids = Array.from({ length: 200 }, () => newId('ct'));
    const s1 = await select('bc_1', t, ids);
    const once = ids.map((id) => variantOf(s1, t.variants, 'bc_1', id));
    expect(ids.map((id) => variantOf(s1, t.variants, 'bc_1', id))).toEqual(once);
    const s2 = await select('bc_2', t, ids);
    expect(ids.map((id) => variantOf(s2, t.variants, 'bc_2', id))).not.toEqual(once);
    // Not the first or last contacts by id: over 10,000 in id order, each tenth has about its share of the test.
    const many = contactIds(10_000);
    const s = await select('bc_spread', { variants: ['a', 'b', 'c'], testPercent: 30 }, many);
    for (let d = 0; d < 10; d++) {
      const tenth = countsOf(s, ['a', 'b', 'c'], 'bc_spread', many.slice(d * 1000, (d + 1) * 1000));
      expect(Math.abs(1000 - (tenth.get(null) ?? 0) - 300)).toBeLessThan(60);
    }
  });

  it('ranks by rate, ties to the first; a two-proportion z-test', () => {
    const r = [
      { id: 'a', sent: 100, uniqueOpens: 20, uniqueClicks: 5 },
      { id: 'b', sent: 100, uniqueOpens: 30, uniqueClicks: 5 },
    ];
    expect(standing(r, 'OPENS')).toMatchObject({ leader: 'b', runnerUp: 'a', margin: 10 });
    expect(standing(r, 'CLICKS')).toMatchObject({ leader: 'a', runnerUp: 'b', margin: 0 });
    // z = (0.3 − 0.2) / sqrt(0.25 · 0.75 · 0.02) = 1.633; two-sided p ≈ 0.10
    const s = significance({ n: 100, x: 30 }, { n: 100, x: 20 })!;
    expect(s.z).toBeCloseTo(1.633, 2);
    expect(s.pValue).toBeGreaterThan(0.09);
    expect(s.pValue).toBeLessThan(0.11);
    expect(significance({ n: 0, x: 0 }, { n: 10, x: 1 })).toBeNull();
  });
});

describeApi('A/B broadcasts', (h) => {
  const sending = useSending(h, { workerId: 'ab-worker' });

  async function setup() {
    const ws = await h.workspace();
    const domain = await verifiedDomain(h, ws, `ab${ws.id.slice(-8).toLowerCase()}.test`);
    return { ws, from: `news@${domain.name}` };
  }

  async function create(ws: TestWorkspace, body: Record<string, unknown>) {
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', { name: 'AB', ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  const row = (id: string) =>
    h.db.kysely.selectFrom('broadcasts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const deliveries = (id: string) =>
    h.db.kysely
      .selectFrom('deliveries')
      .select(['id', 'contact_id', 'email', 'status', 'variant', 'ab_group'])
      .where('broadcast_id', '=', id)
      .execute();
  const events = (id: string, type: string) =>
    h.db.kysely.selectFrom('events').select(['data']).where('broadcast_id', '=', id).where('type', '=', type).execute();
  /** Runs the pipeline until no delivery is open (an A/B broadcast waiting for its winner stays SENDING). */
  const drainOpen = () =>
    sending.drain(async () => {
      const open = await h.db.kysely
        .selectFrom('deliveries')
        .select('id')
        .where('status', 'in', ['QUEUED', 'SENDING'])
        .limit(1)
        .execute();
      const unwritten = await h.db.kysely
        .selectFrom('broadcasts')
        .select('id')
        .where('status', '=', 'SENDING')
        .where('materialized_at', 'is', null)
        .limit(1)
        .execute();
      return !open.length && !unwritten.length;
    });
  /** Human (or machine) opens of these deliveries, as the tracking writer records them. */
  async function opens(h: Harness, ws: TestWorkspace, broadcastId: string, ids: string[], machine = false) {
    const now = new Date().toISOString();
    await insertTrackingEvents(
      h.db.kysely,
      ids.map((deliveryId) => ({
        id: newId('evt'),
        workspaceId: ws.id,
        event: { type: 'email.opened', broadcastId, deliveryId, machine, data: {}, occurredAt: now },
      })),
      now,
    );
  }

  it('stores abTest on create, returns it on get, renders a variant block document, clears it with null', async () => {
    const { ws, from } = await setup();
    const b = await create(ws, {
      from,
      emailContent: { subject: 'Base', html: HTML },
      abTest: abTest({
        variants: [
          { id: 'a', subject: 'A' },
          {
            id: 'b',
            subject: 'B',
            from: `Other <other@${from.split('@')[1]}>`,
            emailContent: {
              editorContent: {
                type: 'formcast/blocks',
                version: 1,
                blocks: [{ type: 'heading', text: 'Variant B' }],
              },
            },
          },
        ],
      }),
    });
    expect(b.abTest.variants[0]).toEqual({ id: 'a', subject: 'A', previewText: null, from: null, emailContent: null });
    expect(b.abTest.variants[1].emailContent.html).toContain('Variant B');
    expect(b.abTest.variants[1].emailContent.text).toContain('Variant B');
    expect(b.abTest).toMatchObject({ testPercent: 50, winnerBy: 'OPENS', waitMinutes: 30 });
    const got = (await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json();
    expect(got.abTest).toEqual(b.abTest);
    const cleared = await h.call(ws.key, 'PUT', `/v1/broadcasts/${b.id}`, { abTest: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().abTest).toBeNull();
    expect((await row(b.id)).ab_test).toBeNull();
    // A broadcast without one says null.
    expect((await create(ws, { from })).abTest).toBeNull();
  });

  it('bad abTest inputs: 422 with pointers, nothing changed', async () => {
    const { ws, from } = await setup();
    const b = await create(ws, { from, emailContent: { subject: 'Base', html: HTML }, abTest: abTest() });
    const before = await row(b.id);
    const cases: [Record<string, unknown>, string, string][] = [
      [abTest({ variants: [{ id: 'a' }, { id: 'b', subject: 'B' }] }), 'validation_failed', '/abTest/variants/0'],
      [
        abTest({ variants: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, subject: id })) }),
        'validation_failed',
        '/abTest/variants',
      ],
      [abTest({ variants: [{ id: 'a', subject: 'A' }] }), 'validation_failed', '/abTest/variants'],
      [abTest({ testPercent: 60 }), 'validation_failed', '/abTest/testPercent'],
      [abTest({ testPercent: 5 }), 'validation_failed', '/abTest/testPercent'],
      [abTest({ waitMinutes: 10 }), 'validation_failed', '/abTest/waitMinutes'],
      [abTest({ waitMinutes: 20_000 }), 'validation_failed', '/abTest/waitMinutes'],
      [abTest({ winnerBy: 'REVENUE' }), 'validation_failed', '/abTest/winnerBy'],
      [
        abTest({
          variants: [
            { id: 'a', subject: 'A' },
            { id: 'a', subject: 'A again' },
          ],
        }),
        'validation_failed',
        '/abTest/variants/1/id',
      ],
      [
        abTest({
          variants: [
            { id: 'a', subject: 'A {{ broken' },
            { id: 'b', subject: 'B' },
          ],
        }),
        'validation_failed',
        '/abTest/variants/0/subject',
      ],
      [
        abTest({
          variants: [
            { id: 'a', subject: 'A', from: 'not an address' },
            { id: 'b', subject: 'B' },
          ],
        }),
        'validation_failed',
        '/abTest/variants/0/from',
      ],
      [
        abTest({
          variants: [
            { id: 'a', subject: 'A' },
            { id: 'b', subject: 'B', from: 'news@unverified.example' },
          ],
        }),
        'sender_domain_not_verified',
        '/abTest/variants/1/from',
      ],
      [
        abTest({
          variants: [
            { id: 'a', subject: 'A' },
            {
              id: 'b',
              subject: 'B',
              emailContent: { editorContent: { type: 'formcast/blocks', version: 1, blocks: [{ type: 'nope' }] } },
            },
          ],
        }),
        'validation_failed',
        '/abTest/variants/1/emailContent/editorContent/blocks/0',
      ],
    ];
    for (const [body, code, path] of cases) {
      for (const [method, url] of [
        ['PUT', `/v1/broadcasts/${b.id}`],
        ['POST', '/v1/broadcasts'],
      ] as const) {
        const res = await h.call(ws.key, method, url, { name: 'AB', from, abTest: body });
        expect(res.statusCode, `${method} ${JSON.stringify(body)}: ${res.body}`).toBe(422);
        expect(res.headers['content-type']).toContain('application/problem+json');
        const problem = res.json();
        expect(problem.code, res.body).toBe(code);
        expect(
          problem.errors.some((e: { path: string }) => e.path.startsWith(path)),
          `${path} in ${res.body}`,
        ).toBe(true);
      }
    }
    expect(await row(b.id)).toEqual(before);
    expect(
      (await h.db.kysely.selectFrom('broadcasts').select('id').where('workspace_id', '=', ws.id).execute()).length,
    ).toBe(1);
  });

  it('a variant that cannot be sent blocks the send (422 broadcast_incomplete); preflight checks each variant', async () => {
    const { ws, from } = await setup();
    const b = await create(ws, {
      from,
      emailContent: { subject: 'Base', html: HTML },
      abTest: abTest({
        variants: [
          { id: 'a', subject: 'A' },
          { id: 'b', subject: 'B', emailContent: { subject: 'ignored' } },
        ],
      }),
    });
    const pre = (await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/preflight`)).json();
    expect(pre.ok).toBe(false);
    expect(pre.checks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'ab_variant_a', status: 'pass' }),
        expect.objectContaining({ id: 'ab_variant_b_body', status: 'fail' }),
      ]),
    );
    const res = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('broadcast_incomplete');
    expect(res.json().errors[0].path).toBe('/abTest/variants/1');
    expect((await row(b.id)).status).toBe('DRAFT');
  });

  async function sendAb(contacts: number, test = abTest()) {
    const { ws, from } = await setup();
    for (let i = 0; i < contacts; i++) await insertContact(h, ws, { email: `r${i}@example.com`, firstName: `R${i}` });
    const b = await create(ws, {
      from,
      emailContent: { subject: 'Base', html: HTML, previewText: 'Base preview' },
      abTest: test,
    });
    const before = sending.smtp.received.length;
    const sent = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`);
    expect(sent.statusCode, sent.body).toBe(202);
    await drainOpen();
    /** What this broadcast's workspace sent since (its own sending domain). */
    const mine = () => sending.smtp.received.slice(before).filter((m) => m.parsed.from?.text.includes(from));
    return { ws, b, from, mine };
  }

  it('end to end: the test share gets its variants, the timer picks the best open rate, the rest gets the winner', async () => {
    const { ws, b, mine } = await sendAb(60);
    const test = await deliveries(b.id);
    // Only the test share is written and sent, exactly 50 % of 60, each delivery with its variant, 15 each; the
    // broadcast waits, SENDING.
    expect(test.length).toBe(30);
    expect(test.filter((d) => d.variant === 'a')).toHaveLength(15);
    expect(test.every((d) => d.ab_group === 'TEST' && (d.variant === 'a' || d.variant === 'b'))).toBe(true);
    expect(test.every((d) => d.status === 'SENT')).toBe(true);
    const got = mine();
    expect(got.length).toBe(test.length);
    for (const m of got) {
      const d = test.find((x) => x.email === m.to)!;
      expect(m.parsed.subject).toBe(d.variant === 'a' ? 'Subject A' : 'Subject B');
      expect(m.parsed.html).toContain(d.variant === 'a' ? 'Base preview' : 'Preview B');
    }
    expect((await row(b.id)).status).toBe('SENDING');
    // The timer does nothing before the wait ends.
    await sending.pipeline.chooseWinners();
    expect((await row(b.id)).ab_winner).toBeNull();

    // b gets human opens from one recipient; a gets machine opens (Apple MPP) from all of its: they do not count.
    const ofA = test.filter((d) => d.variant === 'a').map((d) => d.id);
    const ofB = test.filter((d) => d.variant === 'b').map((d) => d.id);
    await opens(h, ws, b.id, ofA, true);
    await opens(h, ws, b.id, ofB.slice(0, 1));
    const during = (await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json();
    expect(during.stats.variants).toEqual([
      {
        id: 'a',
        recipients: ofA.length,
        sent: ofA.length,
        uniqueOpens: 0,
        uniqueClicks: 0,
        openRate: 0,
        clickRate: 0,
        winner: false,
      },
      expect.objectContaining({ id: 'b', recipients: ofB.length, uniqueOpens: 1, winner: false }),
    ]);
    expect(during.stats.abResult).toMatchObject({ winner: null, leader: 'b', runnerUp: 'a', winnerBy: 'OPENS' });
    expect(during.stats.abResult.significance).toEqual(
      expect.objectContaining({ z: expect.any(Number), pValue: expect.any(Number) }),
    );
    const queuedAt = new Date((await row(b.id)).materialized_at!).getTime();
    expect(Date.parse(during.stats.abResult.decidesAt) - queuedAt).toBe(30 * 60_000);

    advanceClock(31 * 60_000);
    expect(await sending.pipeline.chooseWinners()).toBeGreaterThanOrEqual(1);
    const chosen = await events(b.id, 'broadcast.ab_winner_chosen');
    expect(chosen).toHaveLength(1);
    expect(JSON.parse(String(chosen[0]!.data))).toMatchObject({ variant: 'b', chosenBy: 'timer', winnerBy: 'OPENS' });
    await sending.pipeline.chooseWinners();
    expect(await events(b.id, 'broadcast.ab_winner_chosen')).toHaveLength(1);

    await sending.drain();
    const all = await deliveries(b.id);
    expect(all).toHaveLength(60);
    expect(new Set(all.map((d) => d.contact_id)).size).toBe(60);
    const rest = all.filter((d) => d.ab_group === 'REST');
    expect(rest.length).toBe(60 - test.length);
    expect(rest.every((d) => d.variant === 'b')).toBe(true);
    // Exactly one message each: the test share's variant, the rest the winner.
    const received = mine();
    expect(received).toHaveLength(60);
    expect(new Set(received.map((m) => m.to)).size).toBe(60);
    for (const m of received.filter((m) => rest.some((d) => d.email === m.to)))
      expect(m.parsed.subject).toBe('Subject B');
    const after = (await h.call(ws.key, 'GET', `/v1/broadcasts/${b.id}`)).json();
    expect(after.status).toBe('SENT');
    expect(after.stats.variants.map((v: { winner: boolean }) => v.winner)).toEqual([false, true]);
    expect(after.stats.abResult).toMatchObject({ winner: 'b' });
    expect(after.stats.recipients).toBe(60);
  });

  it('a tie goes to the first variant', async () => {
    const { b } = await sendAb(20, abTest({ winnerBy: 'CLICKS' }));
    advanceClock(31 * 60_000);
    expect(await sending.pipeline.chooseWinners()).toBeGreaterThanOrEqual(1);
    expect((await row(b.id)).ab_winner).toBe('a');
    await sending.drain();
    expect((await row(b.id)).status).toBe('SENT');
    expect((await deliveries(b.id)).filter((d) => d.ab_group === 'REST').every((d) => d.variant === 'a')).toBe(true);
  });

  it('an empty test share does not wait: the first variant goes to everyone', async () => {
    const { ws, from } = await setup();
    // One contact: 10 % of one rounds to nobody in the test share.
    const b = await create(ws, {
      from,
      emailContent: { subject: 'Base', html: HTML },
      abTest: abTest({ testPercent: 10 }),
    });
    await insertContact(h, ws, { email: 'solo@example.com' });
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await drainOpen();
    expect(await deliveries(b.id)).toHaveLength(0);
    expect(JSON.parse(String((await row(b.id)).ab_selection))).toEqual({ audience: 1, test: 0, cuts: [] });
    await sending.pipeline.chooseWinners();
    expect((await row(b.id)).ab_winner).toBe('a');
    await sending.drain();
    expect(await deliveries(b.id)).toEqual([
      expect.objectContaining({ variant: 'a', ab_group: 'REST', status: 'SENT' }),
    ]);
    expect((await row(b.id)).status).toBe('SENT');
  });

  it('20 contacts, testPercent 50, 2 variants: exactly 10 in the test, 5 and 5, every send; then 10 get the winner', async () => {
    for (let run = 0; run < 6; run++) {
      const { ws, b, mine } = await sendAb(20);
      const test = await deliveries(b.id);
      expect(test).toHaveLength(10);
      expect(test.every((d) => d.ab_group === 'TEST')).toBe(true);
      expect(test.filter((d) => d.variant === 'a')).toHaveLength(5);
      expect(test.filter((d) => d.variant === 'b')).toHaveLength(5);
      expect(mine()).toHaveLength(10);
      expect(JSON.parse(String((await row(b.id)).ab_selection))).toMatchObject({ audience: 20, test: 10 });
      if (run > 0) continue;
      // The rest, the other 10, get the winner: one message each.
      expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/ab/winner`, { variant: 'b' })).statusCode).toBe(200);
      await sending.drain();
      const all = await deliveries(b.id);
      expect(all.filter((d) => d.ab_group === 'REST' && d.variant === 'b')).toHaveLength(10);
      expect(new Set(mine().map((m) => m.to)).size).toBe(20);
      expect(mine()).toHaveLength(20);
    }
  });

  it('POST …/ab/winner picks early; 409 once chosen; 422 unknown variant; 409 without a test or before sending; 404 across workspaces', async () => {
    const { ws, b, mine } = await sendAb(20);
    const other = await h.workspace();
    expect((await h.call(other.key, 'POST', `/v1/broadcasts/${b.id}/ab/winner`, { variant: 'b' })).statusCode).toBe(
      404,
    );
    const unknown = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/ab/winner`, { variant: 'z' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/variant' }] });
    expect((await row(b.id)).ab_winner).toBeNull();

    const picked = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/ab/winner`, { variant: 'b' });
    expect(picked.statusCode, picked.body).toBe(200);
    expect(picked.json().stats.abResult).toMatchObject({ winner: 'b', chosenAt: expect.any(String) });
    const chosen = await events(b.id, 'broadcast.ab_winner_chosen');
    expect(chosen).toHaveLength(1);
    expect(JSON.parse(String(chosen[0]!.data))).toMatchObject({ variant: 'b', chosenBy: 'hand' });
    const audit = await h.db.kysely
      .selectFrom('audit_log')
      .select('action')
      .where('workspace_id', '=', ws.id)
      .where('action', '=', 'broadcast.ab_winner_picked')
      .execute();
    expect(audit).toHaveLength(1);

    const again = await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/ab/winner`, { variant: 'a' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'ab_winner_chosen', winner: 'b' });
    // The timer leaves a chosen winner alone.
    advanceClock(31 * 60_000);
    await sending.pipeline.chooseWinners();
    expect(await events(b.id, 'broadcast.ab_winner_chosen')).toHaveLength(1);
    await sending.drain();
    expect(await row(b.id)).toMatchObject({ status: 'SENT', ab_winner: 'b' });
    expect(mine()).toHaveLength(20);

    const plain = await create(ws, {});
    const none = await h.call(ws.key, 'POST', `/v1/broadcasts/${plain.id}/ab/winner`, { variant: 'a' });
    expect(none.statusCode).toBe(409);
    expect(none.json().code).toBe('ab_test_missing');
    const draft = await create(ws, { abTest: abTest() });
    const early = await h.call(ws.key, 'POST', `/v1/broadcasts/${draft.id}/ab/winner`, { variant: 'a' });
    expect(early.statusCode).toBe(409);
    expect(early.json().code).toBe('invalid_state');
    expect((await row(draft.id)).ab_winner).toBeNull();
  });
});
