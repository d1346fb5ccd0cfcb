import { solveChallenge, type Challenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import {
  INTAKE_AFTER,
  INTAKE_MAX_LAG_MS,
  SPIKE_MS,
  dueIntake,
  insertIntake,
  takeIntake,
} from '../../src/forms/submissions/submissions.intake.js';
import { SubmissionsService, purgeSubmissionNetworkData } from '../../src/forms/submissions/submissions.service.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';

/**
 * The intake of a spike (submissions/CONTEXT.md): a public submission stored as it came and answered, then made into its
 * submission, contact, confirmation and events by the intake job, once, in the transaction that removes it.
 */
let slugs = 0;
const silent = pino({ level: 'silent' });

describeApi('submission intake', (h) => {
  // A second app on the same database whose public submissions always go to the intake (SUBMISSION_INTAKE=always).
  let intakeApp: FastifyInstance;
  let now = Date.parse('2026-11-25T10:00:00.000Z');
  const clock = () => now;
  beforeAll(async () => {
    intakeApp = await buildApp({
      db: h.db,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        submissionIntake: 'always',
        proofOfWork: { cost: 10, minCounter: 5, maxCounter: 40 },
      },
      logger: false,
    });
    await intakeApp.ready();
  });
  afterAll(async () => {
    await intakeApp?.close();
  });

  async function publishedForm(ws: TestWorkspace, body: Record<string, unknown> = {}) {
    const slug = `intake-${h.dbName}-${++slugs}`;
    if ((body.settings as { doubleOptIn?: boolean } | undefined)?.doubleOptIn) await verifiedDomain(h, ws);
    const created = await h.call(ws.key, 'POST', '/v1/forms', {
      name: 'Newsletter',
      type: 'SIGN_UP',
      slug,
      fieldMapping: { email: 'email', first_name: 'firstName', plan: 'plan' },
      ...body,
    });
    expect(created.statusCode, created.body).toBe(201);
    const pub = await h.call(ws.key, 'POST', `/v1/forms/${created.json().id}/publish`);
    expect(pub.statusCode, pub.body).toBe(200);
    return { ...pub.json(), slug } as { id: string; slug: string };
  }
  const post = (app: FastifyInstance, slug: string, form: string, ip = '203.0.113.7') =>
    app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      remoteAddress: ip,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Intake/1.0' },
      payload: form,
    });
  const k = () => h.db.kysely;
  const intakeOf = (ws: TestWorkspace) =>
    k().selectFrom('submission_intake').selectAll().where('workspace_id', '=', ws.id).execute();
  const countOf = async (table: 'contacts' | 'submissions' | 'confirmations', ws: TestWorkspace) =>
    Number(
      (
        await k()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('workspace_id', '=', ws.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const eventsOf = async (ws: TestWorkspace) =>
    (
      await k()
        .selectFrom('events')
        .select(['type', 'contact_id', 'data', 'occurred_at'])
        .where('workspace_id', '=', ws.id)
        .orderBy('id')
        .execute()
    ).map((e) => ({ ...e, data: typeof e.data === 'string' ? JSON.parse(e.data) : e.data }));
  /** A processor of its own (as a `formcast worker` would run), with the test's clock. */
  const processor = () => new SubmissionsService(h.db, { clock, protection: intakeApp.services.protection });

  it('a submission taken in is answered at once, then made into the same submission, contact, confirmation and events', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, {
      settings: { doubleOptIn: true, successAction: { type: 'MESSAGE', message: 'Check your inbox' } },
    });
    const res = await post(intakeApp, form.slug, 'email=Ann%40Example.COM&first_name=Ann&plan=pro&ignored=zzz');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Check your inbox');
    // Stored as it came, nothing made yet.
    const [entry, ...more] = await intakeOf(ws);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      form_id: form.id,
      source: 'HOSTED',
      ip: '203.0.113.7',
      user_agent: 'Intake/1.0',
      attempts: 0,
    });
    expect(JSON.parse(entry!.data as string)).toEqual({ email: 'ann@example.com', first_name: 'Ann', plan: 'pro' });
    expect(await countOf('contacts', ws)).toBe(0);
    expect(await countOf('submissions', ws)).toBe(0);

    expect(await processor().processIntake()).toBe(1);
    expect(await intakeOf(ws)).toEqual([]);
    const [sub] = await k().selectFrom('submissions').selectAll().where('workspace_id', '=', ws.id).execute();
    expect(sub).toMatchObject({
      id: entry!.submission_id,
      form_id: form.id,
      source: 'HOSTED',
      status: 'ACCEPTED',
      ip: '203.0.113.7',
      user_agent: 'Intake/1.0',
    });
    // The submission keeps the time the visitor sent it, not the time it was made.
    expect(new Date(sub!.created_at).toISOString()).toBe(new Date(entry!.received_at).toISOString());
    const contact = await k()
      .selectFrom('contacts')
      .selectAll()
      .where('workspace_id', '=', ws.id)
      .executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ email: 'ann@example.com', first_name: 'Ann', status: 'PENDING' });
    expect(sub!.contact_id).toBe(contact.id);
    expect(await countOf('confirmations', ws)).toBe(1);
    expect((await eventsOf(ws)).map((e) => e.type)).toEqual(['contact.created', 'form.submitted']);
    expect((await eventsOf(ws))[1]!.data).toMatchObject({
      submissionId: sub!.id,
      source: 'HOSTED',
      fields: { email: 'ann@example.com', first_name: 'Ann', plan: 'pro' },
    });
    expect((await h.call(ws.key, 'GET', `/v1/forms/${form.id}`)).json().stats).toMatchObject({ submissions: 1 });
    // Nothing left: a second round makes nothing.
    expect(await processor().processIntake()).toBe(0);
  });

  it('what the intake makes is what the request would have made (same contact, submission and events)', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, { settings: { doubleOptIn: false } });
    expect((await post(h.app, form.slug, 'email=direct%40example.com&first_name=Dee&plan=basic')).statusCode).toBe(200);
    expect((await post(intakeApp, form.slug, 'email=queued%40example.com&first_name=Dee&plan=basic')).statusCode).toBe(
      200,
    );
    await processor().processIntake();
    const contacts = await k()
      .selectFrom('contacts')
      .select(['email', 'first_name', 'last_name', 'properties', 'status'])
      .where('workspace_id', '=', ws.id)
      .orderBy('email')
      .execute();
    expect(contacts.map((c) => ({ ...c, email: c.email.split('@')[0] }))).toEqual([
      {
        email: 'direct',
        first_name: 'Dee',
        last_name: null,
        properties: contacts[0]!.properties,
        status: 'SUBSCRIBED',
      },
      {
        email: 'queued',
        first_name: 'Dee',
        last_name: null,
        properties: contacts[0]!.properties,
        status: 'SUBSCRIBED',
      },
    ]);
    const events = await eventsOf(ws);
    const shape = (email: string) => events.filter((e) => JSON.stringify(e.data).includes(email)).map((e) => e.type);
    expect(shape('direct@')).toEqual(shape('queued@'));
    expect(shape('queued@')).toContain('form.submitted');
  });

  it('an invalid submission is refused at once (422) and a filled honeypot stores nothing: neither reaches the intake', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const bad = await post(intakeApp, form.slug, 'email=not-an-address&first_name=X');
    expect(bad.statusCode).toBe(422);
    const bait = await post(intakeApp, form.slug, 'email=bot%40example.com&_fc_hp=gotcha');
    expect(bait.statusCode).toBe(200);
    expect(await intakeOf(ws)).toEqual([]);
  });

  it('a proof of work is spent when the submission is taken in: the same solution again is refused', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, { settings: { protection: { proofOfWork: true } } });
    const challenge = (await intakeApp.inject({ method: 'GET', url: `/f/${form.slug}/challenge` })).json() as Challenge;
    const good = Buffer.from(
      JSON.stringify({ challenge, solution: await solveChallenge({ challenge, deriveKey }) }),
    ).toString('base64');
    expect((await post(intakeApp, form.slug, 'email=nopow%40example.com')).statusCode).toBe(422);
    const ok = await post(intakeApp, form.slug, `email=pow%40example.com&_fc_pow=${encodeURIComponent(good)}`);
    expect(ok.statusCode).toBe(200);
    const replay = await post(intakeApp, form.slug, `email=again%40example.com&_fc_pow=${encodeURIComponent(good)}`);
    expect(replay.statusCode).toBe(422);
    expect(replay.body).toContain('already sent');
    const entries = await intakeOf(ws);
    expect(entries.map((e) => JSON.parse(e.data as string).email)).toEqual(['pow@example.com']);
    await processor().processIntake();
    expect(await countOf('submissions', ws)).toBe(1);
  });

  it('two processes making the queue at once make every entry once', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws, { settings: { doubleOptIn: true } });
    const n = 30;
    // Addresses and networks unlike each other: the sign-up burst rules hold nothing (docs/bot-protection.md).
    const names = ['ann', 'bob', 'cyd', 'dee', 'eve', 'fay'];
    for (let i = 0; i < n; i++) {
      const email = `${names[i % 6]}.${String.fromCharCode(97 + Math.floor(i / 6))}${i * 7919}%40site${i}.example`;
      expect((await post(intakeApp, form.slug, `email=${email}`, `${10 + i}.${i * 3}.1.2`)).statusCode).toBe(200);
    }
    const [a, b] = [processor(), processor()];
    const made = await Promise.all([a.processIntake(), b.processIntake(), a.processIntake(), b.processIntake()]);
    expect(made.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(n);
    while ((await intakeOf(ws)).length) await a.processIntake();
    expect(await countOf('submissions', ws)).toBe(n);
    expect(await countOf('contacts', ws)).toBe(n);
    expect(await countOf('confirmations', ws)).toBe(n);
    const types = (await eventsOf(ws)).map((e) => e.type);
    expect(types.filter((t) => t === 'form.submitted')).toHaveLength(n);
    expect(types.filter((t) => t === 'contact.created')).toHaveLength(n);
  });

  it('SUBMISSION_INTAKE=always on a quiet server: a lone submission taken in is made at once, not held as a spike', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const formRow = await intakeApp.services.submissions.publishedBySlug(form.slug);
    const s = new SubmissionsService(h.db, { clock, intake: 'always' });
    s.attachIntakeJob(() => {}, silent);
    expect(await s.submit(ws.id, formRow, { email: 'lone@example.com' }, 'HOSTED')).toMatchObject({
      ok: true,
      queued: true,
    });
    expect(s.spiking()).toBe(false);
    expect(s.intakePauseMs()).toBe(0);
    expect(await s.processIntake()).toBe(1);
    expect(await countOf('contacts', ws)).toBe(1);
    // A second one within SPIKE_MS of it: a spike, so the two wait (answering first).
    now += 1000;
    await s.submit(ws.id, formRow, { email: 'one@example.com' }, 'HOSTED');
    await s.submit(ws.id, formRow, { email: 'two@example.com' }, 'HOSTED');
    expect(s.spiking()).toBe(true);
    expect(await s.processIntake()).toBe(0);
    now += SPIKE_MS;
    expect(await s.processIntake()).toBe(2);
  });

  it('an entry that cannot be made waits and is tried again later, its error kept; the others are made', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    expect((await post(h.app, form.slug, 'email=first%40example.com')).statusCode).toBe(200);
    const [first] = await k().selectFrom('submissions').select('id').where('workspace_id', '=', ws.id).execute();
    expect((await post(intakeApp, form.slug, 'email=fine%40example.com')).statusCode).toBe(200);
    // An entry no request would store (the id of a submission that exists): making it fails.
    await insertIntake(k(), ws.id, {
      submissionId: first!.id,
      formId: form.id,
      source: 'EMBED',
      values: { email: 'broken@example.com' },
      consented: false,
      ip: null,
      userAgent: null,
      receivedAt: new Date(now).toISOString(),
    });
    const p = processor();
    await p.processIntake();
    expect(await countOf('submissions', ws)).toBe(2);
    expect(await countOf('contacts', ws)).toBe(2);
    const [left] = await intakeOf(ws);
    expect(left).toMatchObject({ submission_id: first!.id, attempts: 1 });
    expect(left!.last_error).toBeTruthy();
    expect(new Date(left!.next_attempt_at!).getTime()).toBe(now + 1000);
    // Not due yet; then due, and failing again, it waits twice as long.
    expect(await p.processIntake()).toBe(0);
    now += 1000;
    expect(await p.processIntake()).toBe(1);
    const [again] = await intakeOf(ws);
    expect(again).toMatchObject({ attempts: 2 });
    expect(new Date(again!.next_attempt_at!).getTime()).toBe(now + 2000);
    await k().deleteFrom('submission_intake').where('workspace_id', '=', ws.id).execute();
  });

  it('an entry still waiting after SUBMISSION_RETENTION_DAYS loses its address and user agent, as a submission would', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    expect((await post(h.app, form.slug, 'email=first%40example.com')).statusCode).toBe(200);
    const [made] = await k().selectFrom('submissions').select('id').where('workspace_id', '=', ws.id).execute();
    const received = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString();
    // One that cannot be made (its submission id is taken), received 200 days ago; one received yesterday.
    await insertIntake(k(), ws.id, {
      submissionId: made!.id,
      formId: form.id,
      source: 'EMBED',
      values: { email: 'stuck@example.com' },
      consented: true,
      ip: '203.0.113.9',
      userAgent: 'Old/1',
      receivedAt: received(200),
    });
    await insertIntake(k(), ws.id, {
      submissionId: 'sub_recent_entry',
      formId: form.id,
      source: 'EMBED',
      values: { email: 'recent@example.com' },
      consented: false,
      ip: '203.0.113.10',
      userAgent: 'New/1',
      receivedAt: received(1),
    });
    expect(await purgeSubmissionNetworkData(h.db, 180, Date.now(), 1)).toBeGreaterThanOrEqual(1);
    const left = (await intakeOf(ws)).sort((a, b) => a.submission_id.localeCompare(b.submission_id));
    expect(left.map((e) => [e.submission_id, e.ip, e.user_agent, JSON.parse(e.data).email])).toEqual([
      [made!.id, null, null, 'stuck@example.com'],
      ['sub_recent_entry', '203.0.113.10', 'New/1', 'recent@example.com'],
    ]);
    // Again: the recent one keeps its own (the count is the whole database's, so not asserted).
    await purgeSubmissionNetworkData(h.db, 180);
    expect((await intakeOf(ws)).find((e) => e.submission_id === 'sub_recent_entry')).toMatchObject({
      ip: '203.0.113.10',
      user_agent: 'New/1',
    });
    await k().deleteFrom('submission_intake').where('workspace_id', '=', ws.id).execute();
  });

  it('an entry is taken by its key and its submission id: a key given again to a new entry is not the old one', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const entry = {
      formId: form.id,
      source: 'EMBED' as const,
      values: { email: 'first@example.com' },
      consented: false,
      ip: null,
      userAgent: null,
      receivedAt: new Date(now).toISOString(),
    };
    await insertIntake(k(), ws.id, { ...entry, submissionId: 'sub_reuse_old' });
    const [old] = (await dueIntake(k(), new Date(now).toISOString(), 1000)).filter((e) => e.workspaceId === ws.id);
    // Made by someone else meanwhile, and its key given to a new entry (SQLite reuses the largest rowid once deleted).
    await k().deleteFrom('submission_intake').where('id', '=', old!.id).execute();
    await k()
      .insertInto('submission_intake')
      .values({
        id: old!.id,
        submission_id: 'sub_reuse_new',
        workspace_id: ws.id,
        form_id: form.id,
        source: 'EMBED',
        data: '{"email":"second@example.com"}',
        consented: 0,
        ip: null,
        user_agent: null,
        received_at: new Date(now).toISOString(),
        next_attempt_at: null,
        last_error: null,
      } as never)
      .execute();
    expect(await takeIntake(k(), ws.id, old!)).toBe(false);
    expect(await takeIntake(k(), ws.id, { id: old!.id, submissionId: 'sub_reuse_new' })).toBe(true);
  });

  it('each entry is made in its own workspace', async () => {
    const [wa, wb] = [await h.workspace('A'), await h.workspace('B')];
    const [fa, fb] = [await publishedForm(wa), await publishedForm(wb)];
    await post(intakeApp, fa.slug, 'email=same%40example.com&first_name=A');
    await post(intakeApp, fb.slug, 'email=same%40example.com&first_name=B');
    await processor().processIntake();
    const a = await k().selectFrom('contacts').select(['first_name']).where('workspace_id', '=', wa.id).execute();
    const b = await k().selectFrom('contacts').select(['first_name']).where('workspace_id', '=', wb.id).execute();
    expect(a).toEqual([{ first_name: 'A' }]);
    expect(b).toEqual([{ first_name: 'B' }]);
    // Neither workspace's API shows the other's submission.
    expect((await h.call(wa.key, 'GET', `/v1/forms/${fb.id}/submissions`)).statusCode).toBe(404);
  });

  it('auto: only where an intake job runs, once INTAKE_AFTER sign-ups are being written, and until its entries are made', async () => {
    const ws = await h.workspace();
    const form = await publishedForm(ws);
    const formRow = await intakeApp.services.submissions.publishedBySlug(form.slug);
    const submitMany = (s: SubmissionsService, n: number, tag: string) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          s.submit(ws.id, formRow, { email: `${tag}${i}@example.com` }, 'EMBED', { ip: `192.0.2.${i + 1}` }),
        ),
      );
    // No intake job in this process: every sign-up is written by its request.
    const alone = new SubmissionsService(h.db, { clock });
    expect((await submitMany(alone, 3 * INTAKE_AFTER, 'alone')).filter((o) => o.ok && o.queued)).toHaveLength(0);

    const s = new SubmissionsService(h.db, { clock });
    s.attachIntakeJob(() => {}, silent);
    const burst = await submitMany(s, 3 * INTAKE_AFTER, 'burst');
    const queued = burst.filter((o) => o.ok && o.queued).length;
    // The first INTAKE_AFTER are written by their requests; the rest wait for the job.
    expect(queued).toBe(2 * INTAKE_AFTER);
    expect(await intakeOf(ws)).toHaveLength(queued);
    // While they wait, even a lone submission goes to the intake (a visitor's later submission is never made first).
    expect(await s.submit(ws.id, formRow, { email: 'later@example.com' }, 'EMBED')).toMatchObject({
      ok: true,
      queued: true,
    });
    // A spike (an entry taken in within SPIKE_MS): answering comes first, nothing is made, the job pauses between looks.
    expect(s.intakePauseMs()).toBeGreaterThan(0);
    expect(await s.processIntake()).toBe(0);
    expect(await intakeOf(ws)).toHaveLength(queued + 1);
    // Over: made at full speed.
    now += SPIKE_MS;
    expect(s.intakePauseMs()).toBe(0);
    while (await s.processIntake()) {
      /* drain */
    }
    expect(await intakeOf(ws)).toEqual([]);
    // Made: a lone submission is written by its request again.
    expect(s.spiking()).toBe(false);
    const quiet = await s.submit(ws.id, formRow, { email: 'quiet@example.com' }, 'EMBED');
    expect(quiet).toMatchObject({ ok: true });
    expect(quiet).not.toHaveProperty('queued');
    expect(await countOf('contacts', ws)).toBe(3 * INTAKE_AFTER * 2 + 2);
    // A spike that lasts: once the oldest entry has waited INTAKE_MAX_LAG_MS, it is made during the spike too.
    await submitMany(s, 2 * INTAKE_AFTER, 'long');
    expect(await s.processIntake()).toBe(0);
    now += INTAKE_MAX_LAG_MS;
    await submitMany(s, 2, 'still');
    expect(s.spiking()).toBe(true);
    expect(await s.processIntake()).toBe(INTAKE_AFTER + 2);
    expect(await intakeOf(ws)).toEqual([]);
    // The API's submissions are never taken in.
    const always = new SubmissionsService(h.db, { clock, intake: 'always' });
    expect(await always.submit(ws.id, formRow, { email: 'api@example.com' }, 'API')).not.toHaveProperty('queued');
  });
});
