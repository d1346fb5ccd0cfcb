/**
 * Issue 29, items 3 and 10, on SQLite and PostgreSQL:
 * - the automations' loop guards (docs/automations.md, "Loops and limits"): the cycle detector and its depth limit,
 *   the re-entry cooldown, the per-contact daily cap of automated messages; a guard that stops a run says so in the
 *   run (GET …/runs) and in an `automation.run_stopped` event;
 * - a `webhook` step takes write:webhooks, as POST /v1/webhooks does (an editor session, a key without it, an admin).
 * The engine is driven tick by tick with the clock the test sets (Date faked), and every loop of the test is capped,
 * so that it ends quickly on code without the guards too (where it counts far more messages).
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeAll, expect, it, vi } from 'vitest';
import {
  AutomationEngine,
  DEFAULT_ENGINE,
  type EngineOptions,
} from '../../src/integrations/automations/automations.engine.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { insertContact, insertSegment, insertTopic, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';

const DAY = 86_400_000;
/** The default re-entry cooldown: 10 minutes. */
const COOLDOWN = 600_000;
const FROM = 'News <news@acme.test>';
const send = (id: string, subject: string) => ({
  id,
  type: 'send',
  from: FROM,
  emailContent: { subject, html: `<p>${subject}</p>` },
});
const HOOK_URL = 'https://93.184.215.14/formcast-hook';

describeApi('automation loop guards', (h) => {
  let webhooks: WebhooksService;
  beforeAll(() => {
    webhooks = new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: true, allowPrivate: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function engine(opts: Partial<EngineOptions> = {}): AutomationEngine {
    return new AutomationEngine(h.db, webhooks, {
      ...DEFAULT_ENGINE,
      workerId: `guards-${Math.random()}`,
      clock: () => Date.now(),
      ...opts,
    });
  }

  /** At most `ticks` rounds of intake and runs (stops early once neither has anything to do). */
  async function drive(e: AutomationEngine, ticks = 60): Promise<number> {
    let n = 0;
    for (; n < ticks; n++) if (!((await e.intake()) + (await e.runDue()))) break;
    return n;
  }

  async function setup(): Promise<TestWorkspace> {
    // Date only, moving on with the real clock; the tests jump it.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(Date.parse('2026-06-01T09:00:00.000Z'));
    const ws = await h.workspace();
    await verifiedDomain(h, ws);
    return ws;
  }

  async function automation(key: string, name: string, trigger: unknown, steps: unknown[]): Promise<string> {
    const created = await h.call(key, 'POST', '/v1/automations', { name, trigger, steps });
    expect(created.statusCode, created.body).toBe(201);
    const activated = await h.call(key, 'POST', `/v1/automations/${created.json().id}/activate`);
    expect(activated.statusCode, activated.body).toBe(200);
    return created.json().id as string;
  }

  const messagesTo = async (contactId: string) =>
    Number(
      (
        await h.db.kysely
          .selectFrom('deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('contact_id', '=', contactId)
          .where('automation_run_id', 'is not', null)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const runsOf = async (ws: TestWorkspace, id: string) =>
    (await h.call(ws.key, 'GET', `/v1/automations/${id}/runs`)).json().data as {
      id: string;
      status: string;
      exitReason: string | null;
      contactId: string;
    }[];
  const stops = async (ws: TestWorkspace) =>
    (
      await h.db.kysely
        .selectFrom('events')
        .select(['data', 'contact_id'])
        .where('workspace_id', '=', ws.id)
        .where('type', '=', 'automation.run_stopped')
        .execute()
    ).map(
      (r) =>
        ({ contactId: r.contact_id, ...(JSON.parse(r.data) as Record<string, unknown>) }) as Record<string, unknown>,
    );

  it('two segment.entered automations that flip a property do not ping-pong: the cycle guard stops the second round', async () => {
    const ws = await setup();
    // The editor's scopes: nothing more is needed to build the loop.
    const editor = await h.key(ws, ['write:broadcasts', 'write:contacts']);
    const sideA = await insertSegment(h, ws, { field: 'properties.side', op: 'eq', value: 'a' }, 'Side A');
    const sideB = await insertSegment(h, ws, { field: 'properties.side', op: 'eq', value: 'b' }, 'Side B');
    const ping = await automation(editor, 'Ping', { type: 'segment.entered', segmentId: sideA }, [
      send('ping', 'Ping'),
      { id: 'flip', type: 'update', properties: { side: 'b' } },
    ]);
    const pong = await automation(editor, 'Pong', { type: 'segment.entered', segmentId: sideB }, [
      send('pong', 'Pong'),
      { id: 'flop', type: 'update', properties: { side: 'a' } },
    ]);
    const c = await insertContact(h, ws, { email: 'ball@example.test', properties: { side: 'none' } });
    expect((await h.call(editor, 'PUT', `/v1/contacts/${c}`, { properties: { side: 'a' } })).statusCode).toBe(200);

    const e = engine({ reentryCooldownMs: 0 }); // the cycle detector alone
    await drive(e, 60);
    // Ping, then Pong; Pong's flip would start Ping again, whose run started Pong: refused.
    expect(await messagesTo(c)).toBe(2);
    const pingRuns = await runsOf(ws, ping);
    expect(pingRuns.map((r) => r.status).sort()).toEqual(['COMPLETED', 'EXITED']);
    const refused = pingRuns.find((r) => r.status === 'EXITED')!;
    expect(refused.exitReason).toMatch(/^guard: cycle: /);
    expect(refused.exitReason).toContain(`${ping} → ${pong} → ${ping}`);
    expect((await runsOf(ws, pong)).map((r) => r.status)).toEqual(['COMPLETED']);
    expect(await stops(ws)).toEqual([
      expect.objectContaining({ contactId: c, automationId: ping, guard: 'cycle', chain: [ping, pong] }),
    ]);
    // The events of the runs' changes name the run that made them (what the intake follows).
    const updates = await h.db.kysely
      .selectFrom('events')
      .select('data')
      .where('workspace_id', '=', ws.id)
      .where('type', '=', 'contact.updated')
      .where('contact_id', '=', c)
      .execute();
    expect(updates.map((u) => JSON.parse(u.data).source).sort()).toEqual(['api', 'automation', 'automation']);

    // A person changing the contact later starts Ping again as usual (no chain; this engine has no cooldown), and again
    // the round stops at Pong's flip.
    vi.setSystemTime(Date.now() + 60_000);
    await h.call(editor, 'PUT', `/v1/contacts/${c}`, { properties: { side: 'none' } });
    await drive(e, 60); // the intake sees the contact leave (it reads the contact as it is when it looks)
    await h.call(editor, 'PUT', `/v1/contacts/${c}`, { properties: { side: 'a' } });
    await drive(e, 60);
    expect(await messagesTo(c)).toBe(4);
  });

  it('the same ping-pong with the default settings stays bounded for every contact in it', async () => {
    const ws = await setup();
    const editor = await h.key(ws, ['write:broadcasts', 'write:contacts']);
    const sideA = await insertSegment(h, ws, { field: 'properties.side', op: 'eq', value: 'a' }, 'Side A');
    const sideB = await insertSegment(h, ws, { field: 'properties.side', op: 'eq', value: 'b' }, 'Side B');
    await automation(editor, 'Ping', { type: 'segment.entered', segmentId: sideA }, [
      send('ping', 'Ping'),
      { id: 'flip', type: 'update', properties: { side: 'b' } },
    ]);
    await automation(editor, 'Pong', { type: 'segment.entered', segmentId: sideB }, [
      send('pong', 'Pong'),
      { id: 'flop', type: 'update', properties: { side: 'a' } },
    ]);
    const contacts = [];
    for (let i = 0; i < 3; i++)
      contacts.push(await insertContact(h, ws, { email: `ball${i}@example.test`, properties: { side: 'none' } }));
    for (const c of contacts) await h.call(editor, 'PUT', `/v1/contacts/${c}`, { properties: { side: 'a' } });
    await drive(engine(), 100);
    for (const c of contacts) expect(await messagesTo(c)).toBe(2);
  });

  it('the cycle guard follows topic steps too (contact.subscribed triggers)', async () => {
    const ws = await setup();
    // OPT_OUT: nobody is subscribed until they subscribe.
    const t1 = await insertTopic(h, ws, 'OPT_OUT', 'One');
    const t2 = await insertTopic(h, ws, 'OPT_OUT', 'Two');
    const one = await automation(ws.key, 'One', { type: 'contact.subscribed', topicId: t1 }, [
      send('one', 'One'),
      { id: 'to2', type: 'topic', topicId: t1, subscribed: false },
      { id: 'on2', type: 'topic', topicId: t2, subscribed: true },
    ]);
    const two = await automation(ws.key, 'Two', { type: 'contact.subscribed', topicId: t2 }, [
      send('two', 'Two'),
      { id: 'to1', type: 'topic', topicId: t2, subscribed: false },
      { id: 'on1', type: 'topic', topicId: t1, subscribed: true },
    ]);
    const c = await insertContact(h, ws, { email: 'topics@example.test' });
    expect(
      (await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { topics: [{ id: t1, subscribed: true }] })).statusCode,
    ).toBe(200);
    await drive(engine({ reentryCooldownMs: 0 }), 60);
    expect(await messagesTo(c)).toBe(2);
    expect((await runsOf(ws, one)).map((r) => r.exitReason ?? r.status).sort()).toEqual([
      'COMPLETED',
      expect.stringMatching(/^guard: cycle: /),
    ]);
    expect((await runsOf(ws, two)).map((r) => r.status)).toEqual(['COMPLETED']);
    const subscribed = await h.db.kysely
      .selectFrom('events')
      .select('data')
      .where('workspace_id', '=', ws.id)
      .where('type', '=', 'contact.subscribed')
      .where('contact_id', '=', c)
      .execute();
    expect(
      subscribed
        .map((e) => JSON.parse(e.data) as { source: string; automationId?: string })
        .filter((d) => d.source === 'automation')
        .map((d) => d.automationId)
        .sort(),
    ).toEqual([one, two].sort());
  });

  it('a chain of automations each starting the next stops past the depth limit', async () => {
    const ws = await setup();
    const ids: string[] = [];
    // Seven automations, each entered at step i and moving the contact to step i + 1: no cycle, a long chain.
    for (let i = 1; i <= 7; i++) {
      const seg = await insertSegment(h, ws, { field: 'properties.step', op: 'eq', value: i }, `Step ${i}`);
      ids.push(
        await automation(ws.key, `Step ${i}`, { type: 'segment.entered', segmentId: seg }, [
          { id: `next${i}`, type: 'update', properties: { step: i + 1 } },
        ]),
      );
    }
    const c = await insertContact(h, ws, { email: 'chain@example.test', properties: { step: 0 } });
    await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { properties: { step: 1 } });
    await drive(engine(), 60);
    // Step 1 was started by a person; steps 2-6 by the run before (a chain of at most 5); step 7's would be the 6th.
    for (const id of ids.slice(0, 6)) expect((await runsOf(ws, id)).map((r) => r.status)).toEqual(['COMPLETED']);
    const last = await runsOf(ws, ids[6]!);
    expect(last).toEqual([expect.objectContaining({ status: 'EXITED', contactId: c })]);
    expect(last[0]!.exitReason).toMatch(/^guard: depth: more than 5 automations/);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/${c}`)).json().properties.step).toBe(7);
    expect(await stops(ws)).toEqual([
      expect.objectContaining({ automationId: ids[6], guard: 'depth', chain: ids.slice(0, 6) }),
    ]);
  });

  it('re-entry cooldown: a contact whose run ended does not enter the same automation again before it is over', async () => {
    const ws = await setup();
    const t0 = Date.now();
    const vip = await insertSegment(h, ws, { field: 'properties.vip', op: 'eq', value: true }, 'VIP');
    const welcome = await automation(ws.key, 'VIP welcome', { type: 'segment.entered', segmentId: vip }, [
      send('vip', 'Welcome, VIP'),
    ]);
    const api = await automation(ws.key, 'On demand', { type: 'api' }, [
      { id: 'mark', type: 'update', properties: { asked: true } },
    ]);
    const c = await insertContact(h, ws, { email: 'flapper@example.test', properties: { vip: false } });
    const e = engine();
    expect(DEFAULT_ENGINE.reentryCooldownMs).toBe(COOLDOWN);
    // Something outside (a webhook's receiver, a script) flips the contact in and out 10 times: one welcome, and the
    // refusals recorded once (one EXITED run, one event), not once per flip.
    for (let i = 0; i < 10; i++) {
      await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { properties: { vip: true } });
      await drive(e, 10);
      await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { properties: { vip: false } });
      await drive(e, 10);
    }
    expect(await messagesTo(c)).toBe(1);
    const welcomeRuns = await runsOf(ws, welcome);
    expect(welcomeRuns.map((r) => r.status).sort()).toEqual(['COMPLETED', 'EXITED']);
    expect(welcomeRuns.find((r) => r.status === 'EXITED')!.exitReason).toMatch(/^guard: cooldown: /);
    expect(await stops(ws)).toEqual([
      expect.objectContaining({
        contactId: c,
        automationId: welcome,
        guard: 'cooldown',
        cooldownSeconds: COOLDOWN / 1000,
      }),
    ]);
    // The api trigger: once, then 409 until the cooldown (10 minutes by default) has passed; the 409 writes nothing.
    const first = await h.call(ws.key, 'POST', `/v1/automations/${api}/trigger`, { contactId: c });
    expect(first.statusCode).toBe(202);
    await drive(e, 10);
    const again = await h.call(ws.key, 'POST', `/v1/automations/${api}/trigger`, { contactId: c });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'invalid_state' });
    expect(again.json().detail).toContain('cooldown');
    expect((await runsOf(ws, api)).map((r) => r.status)).toEqual(['COMPLETED']);
    vi.setSystemTime(t0 + COOLDOWN + 60_000);
    expect((await h.call(ws.key, 'POST', `/v1/automations/${api}/trigger`, { contactId: c })).statusCode).toBe(202);
    // And entering the segment once more starts the welcome again (the refused run does not extend the cooldown).
    await h.call(ws.key, 'PUT', `/v1/contacts/${c}`, { properties: { vip: true } });
    await drive(e, 10);
    expect(await messagesTo(c)).toBe(2);
  });

  it('re-entry cooldown: a second real event trigger after it starts a new run; one within it shows as a run and an event, once per window', async () => {
    const ws = await setup();
    const t0 = Date.now();
    const receipt = await automation(ws.key, 'Receipt', { type: 'event', name: 'order.placed' }, [
      send('receipt', 'Your receipt'),
    ]);
    const c = await insertContact(h, ws, { email: 'buyer@example.test' });
    const e = engine(); // the default cooldown
    const order = async (n: number) =>
      expect(
        (
          await h.call(ws.key, 'POST', '/v1/events/track', {
            contactId: c,
            name: 'order.placed',
            properties: { order: n },
          })
        ).statusCode,
      ).toBe(202);

    await order(1);
    await drive(e, 10);
    expect(await messagesTo(c)).toBe(1);
    // A second order an hour later (the same day): a second receipt.
    vi.setSystemTime(t0 + 60 * 60_000);
    await order(2);
    await drive(e, 10);
    expect(await messagesTo(c)).toBe(2);
    expect((await runsOf(ws, receipt)).map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED']);
    expect(await stops(ws)).toEqual([]);

    // Three more within the cooldown: refused, and said so by one EXITED run and one event (not three).
    vi.setSystemTime(t0 + 60 * 60_000 + 60_000);
    for (let n = 3; n <= 5; n++) await order(n);
    await drive(e, 10);
    expect(await messagesTo(c)).toBe(2);
    const runs = await runsOf(ws, receipt);
    expect(runs.map((r) => r.status).sort()).toEqual(['COMPLETED', 'COMPLETED', 'EXITED']);
    expect(runs.find((r) => r.status === 'EXITED')).toMatchObject({
      contactId: c,
      exitReason: expect.stringMatching(/^guard: cooldown: .*600 s/),
    });
    const stopped = await stops(ws);
    expect(stopped).toEqual([
      expect.objectContaining({
        contactId: c,
        automationId: receipt,
        guard: 'cooldown',
        reason: expect.stringMatching(/^guard: cooldown: /),
      }),
    ]);
    const listed = await h.call(ws.key, 'GET', '/v1/events?type=automation.run_stopped');
    expect(listed.json().data).toEqual([
      expect.objectContaining({
        type: 'automation.run_stopped',
        data: expect.objectContaining({ guard: 'cooldown', runId: runs.find((r) => r.status === 'EXITED')!.id }),
      }),
    ]);

    // Once the cooldown of the last real run is over, the next order gets its receipt: the refusal did not extend it.
    vi.setSystemTime(t0 + 60 * 60_000 + COOLDOWN + 30_000);
    await order(6);
    await drive(e, 10);
    expect(await messagesTo(c)).toBe(3);
    expect(await stops(ws)).toHaveLength(1);
  });

  it('daily cap: a send step past the cap of automated messages to a contact stops its run, across automations', async () => {
    const ws = await setup();
    const t0 = Date.now();
    const c = await insertContact(h, ws, { email: 'capped@example.test' });
    const long = await automation(
      ws.key,
      'Five messages',
      { type: 'api' },
      [1, 2, 3, 4, 5].map((i) => send(`m${i}`, `Message ${i}`)),
    );
    const other = await automation(ws.key, 'Another', { type: 'api' }, [send('o1', 'Other')]);
    const e = engine({ maxMessagesPerContactPerDay: 3 });
    await h.call(ws.key, 'POST', `/v1/automations/${long}/trigger`, { contactId: c });
    await drive(e, 20);
    expect(await messagesTo(c)).toBe(3);
    const [run] = await runsOf(ws, long);
    expect(run).toMatchObject({
      status: 'EXITED',
      exitReason: 'guard: daily cap: 3 automated messages to this contact in 24 hours',
    });
    await h.call(ws.key, 'POST', `/v1/automations/${other}/trigger`, { contactId: c });
    await drive(e, 20);
    expect(await messagesTo(c)).toBe(3);
    expect((await runsOf(ws, other))[0]).toMatchObject({
      status: 'EXITED',
      exitReason: expect.stringMatching(/^guard: daily cap/),
    });
    expect((await stops(ws)).map((s) => [s.automationId, s.guard, s.stepId, s.limit])).toEqual(
      expect.arrayContaining([
        [long, 'daily_cap', 'm4', 3],
        [other, 'daily_cap', 'o1', 3],
      ]),
    );
    // The event is in the stream (GET /v1/events), as any other.
    const listed = await h.call(ws.key, 'GET', '/v1/events?type=automation.run_stopped');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toHaveLength(2);
    // A day later the contact may get messages again.
    vi.setSystemTime(t0 + DAY + 60_000);
    expect((await h.call(ws.key, 'POST', `/v1/automations/${other}/trigger`, { contactId: c })).statusCode).toBe(202);
    await drive(e, 20);
    expect(await messagesTo(c)).toBe(4);
  });

  it('daily cap: runs of one contact walked at once cannot both pass it', async () => {
    const ws = await setup();
    const c = await insertContact(h, ws, { email: 'race@example.test' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(await automation(ws.key, `Race ${i}`, { type: 'api' }, [send(`r${i}`, `Race ${i}`)]));
    for (const id of ids)
      expect((await h.call(ws.key, 'POST', `/v1/automations/${id}/trigger`, { contactId: c })).statusCode).toBe(202);
    // PostgreSQL walks the claimed runs in parallel lanes (and two engines claim at once); SQLite one at a time.
    const a = engine({ maxMessagesPerContactPerDay: 2, batchSize: 3 });
    const b = engine({ maxMessagesPerContactPerDay: 2, batchSize: 3 });
    await Promise.all([a.runDue(), b.runDue()]);
    await drive(a, 10);
    expect(await messagesTo(c)).toBe(2);
    const statuses = (await Promise.all(ids.map((id) => runsOf(ws, id)))).map((r) => r[0]!.status);
    expect(statuses.filter((s) => s === 'COMPLETED')).toHaveLength(2);
    expect(statuses.filter((s) => s === 'EXITED')).toHaveLength(4);
  });
});

describeApi('automation webhook steps need write:webhooks', (h) => {
  const PASSWORD = 'correct horse battery';

  /** A console session of a person of the workspace with this role: its cookie and CSRF token. */
  async function session(ws: TestWorkspace, role: 'editor' | 'admin'): Promise<{ cookie: string; csrf: string }> {
    const email = `${role}.${Math.random().toString(36).slice(2)}@people.example`;
    await h.app.services.users.create(ws.id, { email, role, password: PASSWORD });
    const login = await h.app.inject({
      method: 'POST',
      url: '/app/login',
      remoteAddress: '127.0.0.1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
    });
    expect(login.statusCode, login.body).toBe(303);
    const setCookie = ([] as string[]).concat(login.headers['set-cookie'] ?? []);
    const cookie = setCookie.map((c) => c.split(';')[0]!).find((c) => /session/i.test(c.split('=')[0]!))!;
    expect(cookie).toBeDefined();
    const info = await h.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie } });
    expect(info.statusCode, info.body).toBe(200);
    return { cookie, csrf: info.json().csrfToken };
  }

  type Caller = string | { cookie: string; csrf: string };
  function call(
    who: Caller,
    method: 'POST' | 'PUT' | 'GET',
    url: string,
    body?: unknown,
  ): Promise<LightMyRequestResponse> {
    if (typeof who === 'string') return h.call(who, method, url, body);
    return h.app.inject({
      method,
      url,
      headers: {
        cookie: who.cookie,
        'x-csrf-token': who.csrf,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  }

  const endpoints = async (ws: TestWorkspace) =>
    (await h.db.kysely.selectFrom('webhook_endpoints').select('url').where('workspace_id', '=', ws.id).execute()).map(
      (r) => r.url,
    );
  const automations = async (ws: TestWorkspace) =>
    (await h.db.kysely.selectFrom('automations').select('id').where('workspace_id', '=', ws.id).execute()).length;
  function refused(res: LightMyRequestResponse): void {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('insufficient_scope');
    expect(res.json().detail).toContain('write:webhooks');
  }

  it('an editor session and a key without write:webhooks cannot create, add or activate a webhook step; an admin can', async () => {
    const ws = await h.workspace();
    await verifiedDomain(h, ws);
    const editor = await session(ws, 'editor');
    const admin = await session(ws, 'admin');
    const broadcaster = await h.key(ws, ['write:broadcasts', 'read:webhooks']);
    const hook = { id: 'hook', type: 'webhook', url: HOOK_URL };
    const body = { name: 'Exfiltrate', trigger: { type: 'contact.created' }, steps: [hook] };

    // POST /v1/webhooks is 403 for them, and so is the same endpoint through an automation.
    for (const who of [editor, broadcaster]) {
      refused(await call(who, 'POST', '/v1/webhooks', { url: HOOK_URL, eventTypes: ['contact.created'] }));
      refused(await call(who, 'POST', '/v1/automations', body));
      refused(
        await call(who, 'POST', '/v1/automations', {
          ...body,
          steps: [send('s', 'Hi'), { id: 'b', type: 'branch', filter: { all: [] }, then: [hook], else: [] }],
        }),
      );
    }
    expect(await automations(ws)).toBe(0);

    // Nor by PUT onto a draft of their own (or a new version of an active one).
    for (const who of [editor, broadcaster]) {
      const draft = await call(who, 'POST', '/v1/automations', {
        name: 'Mine',
        trigger: { type: 'api' },
        steps: [send('s', 'Hi')],
      });
      expect(draft.statusCode).toBe(201);
      refused(await call(who, 'PUT', `/v1/automations/${draft.json().id}`, { steps: [send('s', 'Hi'), hook] }));
      expect((await call(who, 'POST', `/v1/automations/${draft.json().id}/activate`)).statusCode).toBe(200);
      refused(await call(who, 'PUT', `/v1/automations/${draft.json().id}`, { steps: [send('s', 'Hi'), hook] }));
      expect((await call(who, 'GET', `/v1/automations/${draft.json().id}`)).json()).toMatchObject({
        version: 1,
        steps: [expect.objectContaining({ type: 'send' })],
      });
    }

    // An admin's draft with a webhook step: an editor cannot activate it (it would register the endpoint).
    const adminDraft = await call(admin, 'POST', '/v1/automations', { ...body, name: 'Admin hook' });
    expect(adminDraft.statusCode, adminDraft.body).toBe(201);
    refused(await call(editor, 'POST', `/v1/automations/${adminDraft.json().id}/activate`));
    refused(await call(broadcaster, 'POST', `/v1/automations/${adminDraft.json().id}/activate`));
    expect((await call(admin, 'GET', `/v1/automations/${adminDraft.json().id}`)).json().status).toBe('DRAFT');
    expect(await endpoints(ws)).toEqual([]);

    // The admin activates it: the endpoint is registered (and listed by GET /v1/webhooks).
    expect((await call(admin, 'POST', `/v1/automations/${adminDraft.json().id}/activate`)).statusCode).toBe(200);
    expect(await endpoints(ws)).toEqual([HOOK_URL]);
    // The editor may still edit the rest of it, keeping the admin's webhook step as it is; not point it elsewhere.
    const kept = await call(editor, 'PUT', `/v1/automations/${adminDraft.json().id}`, {
      steps: [send('s', 'Hello'), hook],
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().version).toBe(2);
    refused(
      await call(editor, 'PUT', `/v1/automations/${adminDraft.json().id}`, {
        steps: [send('s', 'Hello'), { ...hook, url: 'https://93.184.215.14/elsewhere' }],
      }),
    );
    expect(await endpoints(ws)).toEqual([HOOK_URL]);

    // An admin key (and a key with write:webhooks) can.
    const hooksKey = await h.key(ws, ['write:broadcasts', 'write:webhooks']);
    const other = await call(hooksKey, 'POST', '/v1/automations', {
      ...body,
      steps: [{ ...hook, url: 'https://93.184.215.14/other' }],
    });
    expect(other.statusCode, other.body).toBe(201);
    expect((await call(hooksKey, 'POST', `/v1/automations/${other.json().id}/activate`)).statusCode).toBe(200);
    expect((await call(ws.key, 'POST', '/v1/automations', body)).statusCode).toBe(201);
    expect((await endpoints(ws)).sort()).toEqual([HOOK_URL, 'https://93.184.215.14/other']);
  });
});
