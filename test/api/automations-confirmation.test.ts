/**
 * A run waiting for a double opt-in confirmation is woken by the confirmation (docs/automations.md): the person signs
 * up through a double opt-in form, the welcome's send step waits (the contact is PENDING), the person follows the
 * link in the real confirmation email, and the welcome goes out at the next round of the automation jobs, not at the
 * 5-minute recheck. The clock is the test's (Date is faked): the recheck never comes due within the test, so only the
 * wake can send the welcome; a run at a `wait` step is not woken. SQLite and PostgreSQL, through app.inject.
 */
import { pino } from 'pino';
import { afterEach, beforeAll, expect, it, vi } from 'vitest';
import {
  AutomationEngine,
  DEFAULT_ENGINE,
  PENDING_RECHECK_MS,
} from '../../src/integrations/automations/automations.engine.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { useSending } from '../helpers/sending.js';

const FROM = 'News <news@acme.test>';

describeApi('a double opt-in confirmation wakes the automation run waiting for it', (h) => {
  const sending = useSending(h, { workerId: 'confirmation-wake-test' });
  let engine: AutomationEngine;
  beforeAll(() => {
    const webhooks = new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: false, allowPrivate: false });
    engine = new AutomationEngine(h.db, webhooks, {
      ...DEFAULT_ENGINE,
      workerId: 'wake-test',
      clock: () => Date.now(),
    });
  });
  afterEach(() => {
    vi.useRealTimers();
    sending.pipeline = sending.build();
  });

  /** The automation jobs until neither has anything to do at the clock's time, then the delivery pipeline. */
  async function settle(): Promise<void> {
    for (let i = 0; i < 1000; i++) if (!((await engine.intake()) + (await engine.runDue()))) break;
    await sending.drain();
  }

  const runOf = (automationId: string) =>
    h.db.kysely
      .selectFrom('automation_runs')
      .select(['status', 'step_id', 'due_at', 'step_started_at'])
      .where('automation_id', '=', automationId)
      .executeTakeFirstOrThrow();
  const dueMs = async (automationId: string) => Date.parse(String((await runOf(automationId)).due_at));

  async function automation(ws: TestWorkspace, body: Record<string, unknown>): Promise<string> {
    const created = await h.call(ws.key, 'POST', '/v1/automations', body);
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const activated = await h.call(ws.key, 'POST', `/v1/automations/${id}/activate`);
    expect(activated.statusCode, activated.body).toBe(200);
    return id;
  }

  it('the welcome goes out at the next round after the click, not at the 5-minute recheck', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    sending.pipeline = sending.build();
    const ws = await h.workspace('Acme');
    await verifiedDomain(h, ws);
    const slug = `welcome-doi-${h.dbName}`;
    const form = (
      await h.call(ws.key, 'POST', '/v1/forms', {
        name: 'Newsletter',
        type: 'SIGN_UP',
        slug,
        fieldMapping: { email: 'email', first_name: 'firstName' },
        settings: { doubleOptIn: true },
      })
    ).json();
    expect((await h.call(ws.key, 'POST', `/v1/forms/${form.id}/publish`)).statusCode).toBe(200);
    const welcome = await automation(ws, {
      name: 'Welcome',
      trigger: { type: 'form.submitted', formGroupId: form.formGroupId },
      steps: [
        {
          id: 'hi',
          type: 'send',
          from: FROM,
          emailContent: { subject: 'Welcome, {{ contact.firstName }}', html: '<p>Hi</p>' },
        },
      ],
    });
    // A second automation whose run sits at a `wait` step: a confirmation does not cut its wait short.
    const later = await automation(ws, {
      name: 'Later',
      trigger: { type: 'api' },
      steps: [
        { id: 'pause', type: 'wait', duration: 'P1D' },
        { id: 'tomorrow', type: 'send', from: FROM, emailContent: { subject: 'A day later', html: '<p>…</p>' } },
      ],
    });

    // The sign-up, through the hosted page: the contact is PENDING, the welcome waits for the confirmation.
    const signUp = await h.app.inject({
      method: 'POST',
      url: `/f/${slug}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=lin%40example.com&first_name=Lin',
    });
    expect(signUp.statusCode).toBe(200);
    const contact = await h.db.kysely
      .selectFrom('contacts')
      .select(['id', 'status'])
      .where('workspace_id', '=', ws.id)
      .where('email', '=', 'lin@example.com')
      .executeTakeFirstOrThrow();
    expect(contact.status).toBe('PENDING');
    expect(
      (await h.call(ws.key, 'POST', `/v1/automations/${later}/trigger`, { contactId: contact.id })).statusCode,
    ).toBe(202);
    await settle();
    expect(sending.smtp.received).toHaveLength(0);
    expect(await runOf(welcome)).toMatchObject({ status: 'WAITING', step_id: 'hi', step_started_at: null });
    expect(await dueMs(welcome)).toBeGreaterThan(Date.now() + PENDING_RECHECK_MS - 60_000);
    const laterDue = await dueMs(later);
    expect(laterDue).toBeGreaterThan(Date.now() + 86_400_000 - 60_000);

    // The confirmation email (the real one, through the sender job) and its link, followed.
    const sender = new ConfirmationSender(
      h.db,
      sending.mailer,
      'https://forms.example.test',
      pino({ level: 'silent' }) as never,
      TEST_SECRET,
    );
    await sender.sendDue();
    const mail = sending.smtp.received.find((m) => m.to === 'lin@example.com');
    expect(mail, 'the confirmation email').toBeDefined();
    const link = String(mail!.parsed.html).match(
      /href="https:\/\/forms\.example\.test(\/confirm\/[A-Za-z0-9_-]+)"/,
    )![1]!;
    sending.smtp.received.length = 0;
    const clicked = Date.now();
    expect((await h.app.inject({ method: 'POST', url: link })).statusCode).toBe(200);

    // One round of the intake: the run is due now (it was due in 5 minutes); the wait step's run is not touched.
    await engine.intake();
    expect(await dueMs(welcome)).toBeLessThanOrEqual(Date.now());
    expect(await dueMs(later)).toBe(laterDue);

    await settle();
    expect(sending.smtp.received.map((m) => [m.to, m.parsed.subject])).toEqual([['lin@example.com', 'Welcome, Lin']]);
    expect(await runOf(welcome)).toMatchObject({ status: 'COMPLETED' });
    // Well within the recheck: the confirmation sent it, not the 5-minute timer (which never came due).
    expect(Date.now() - clicked).toBeLessThan(PENDING_RECHECK_MS / 5);
    expect(await runOf(later)).toMatchObject({ status: 'WAITING', step_id: 'pause' });
  });
});
