/**
 * The SDK (packages/sdk) against the real service on a loopback port: every resource at least once, typed by the
 * generated types, on SQLite and (with TEST_DATABASE_URL) PostgreSQL.
 */
import { beforeAll, expect, it } from 'vitest';
import { Formcast, FormcastError } from '../../packages/sdk/src/index.js';
import { describeSdk } from './harness.js';

describeSdk('SDK resources', (s) => {
  let fc: Formcast;
  let workspaceId: string;

  beforeAll(async () => {
    const ws = await s.workspace('SDK resources');
    workspaceId = ws.id;
    fc = new Formcast({ apiKey: ws.key, baseUrl: s.baseUrl });
  });

  it('workspace, session, health and stats', async () => {
    const ws = await fc.workspace.get();
    expect(ws).toMatchObject({ id: workspaceId, name: 'SDK resources' });
    const renamed = await fc.workspace.update({
      name: 'SDK renamed',
      settings: { postalAddress: '1 Main St, Springfield' },
    });
    expect(renamed.name).toBe('SDK renamed');
    expect(renamed.settings.postalAddress).toBe('1 Main St, Springfield');
    const health = await fc.workspace.health();
    expect(health.windows.map((w) => w.days)).toEqual([7, 30]);
    const session = await fc.session.get();
    expect(session.workspace.id).toBe(workspaceId);
    const stats = await fc.stats.contacts({ days: 1 });
    expect(stats).toBeTypeOf('object');
  });

  it('api keys: create, list, revoke', async () => {
    const created = await fc.apiKeys.create({ name: 'reporting', scopes: ['read:contacts'] });
    expect(created.key).toMatch(/\S{20,}/);
    const listed = await fc.apiKeys.list().toArray();
    expect(listed.map((k) => k.id)).toContain(created.id);
    expect(listed.find((k) => k.id === created.id)).not.toHaveProperty('key');
    const readOnly = new Formcast({ apiKey: created.key!, baseUrl: s.baseUrl });
    expect((await readOnly.contacts.list().page()).data).toEqual([]);
    await fc.apiKeys.delete(created.id);
    await expect(readOnly.contacts.list().page()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('topics, segments and templates', async () => {
    const topic = await fc.topics.create({ name: 'Product news', defaultSubscription: 'OPT_IN' });
    expect((await fc.topics.get(topic.id)).name).toBe('Product news');
    expect((await fc.topics.update(topic.id, { name: 'Releases' })).name).toBe('Releases');
    expect((await fc.topics.list().toArray()).map((t) => t.id)).toContain(topic.id);

    const contact = await fc.contacts.create({ email: 'seg@example.com', properties: { plan: 'pro' } });
    const filter = { field: 'properties.plan', op: 'eq', value: 'pro' } as const;
    const preview = await fc.segments.preview({ filter });
    expect(preview.count).toBe(1);
    const segment = await fc.segments.create({ name: 'Pro plan', filter });
    expect((await fc.segments.get(segment.id)).name).toBe('Pro plan');
    expect((await fc.segments.update(segment.id, { name: 'Pro customers' })).name).toBe('Pro customers');
    expect((await fc.segments.count(segment.id)).count).toBe(1);
    expect((await fc.segments.contacts(segment.id).toArray()).map((c) => c.id)).toEqual([contact.id]);
    expect((await fc.segments.list().toArray()).map((x) => x.id)).toContain(segment.id);

    const template = await fc.templates.create({
      name: 'Confirm',
      subject: 'Please confirm',
      html: '<p>Confirm: {{ confirm_url }}</p>',
    });
    expect((await fc.templates.get(template.id)).subject).toBe('Please confirm');
    expect((await fc.templates.update(template.id, { subject: 'One more step' })).subject).toBe('One more step');
    expect((await fc.templates.list().toArray()).map((t) => t.id)).toContain(template.id);

    await fc.segments.delete(segment.id);
    await fc.topics.delete(topic.id);
    await fc.templates.delete(template.id);
    await expect(fc.topics.get(topic.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('contacts: upsert, get, update, activity, export, import, delete', async () => {
    const created = await fc.contacts.create({ email: 'Ada@Example.com', firstName: 'Ada' });
    expect(created).toMatchObject({ email: 'ada@example.com', firstName: 'Ada', status: 'SUBSCRIBED' });
    const again = await fc.contacts.create({ email: 'ada@example.com', lastName: 'Lovelace' });
    expect(again.id).toBe(created.id);
    expect((await fc.contacts.get(created.id)).lastName).toBe('Lovelace');
    expect((await fc.contacts.update(created.id, { properties: { plan: 'free' } })).properties).toEqual({
      plan: 'free',
    });
    const activity = await fc.contacts.activity(created.id).toArray();
    expect(activity.map((e) => e.type)).toContain('contact.created');
    const csv = await fc.contacts.export();
    expect(csv).toContain('ada@example.com');
    const imported = await fc.contacts.imports.create('email,firstName\ngrace@example.com,Grace\n', 'text/csv');
    expect((await fc.contacts.imports.get(imported.id)).id).toBe(imported.id);
    expect((await fc.contacts.imports.list().toArray()).map((i) => i.id)).toContain(imported.id);
    await fc.contacts.delete(created.id);
    await expect(fc.contacts.get(created.id)).rejects.toBeInstanceOf(FormcastError);
  });

  it('domains: add, get, list, verify, delete', async () => {
    const domain = await fc.domains.create({ name: 'sdk-mail.example.com' });
    expect(domain.status).toBe('PENDING');
    expect(domain.records.some((r) => r.name.includes('_domainkey'))).toBe(true);
    expect((await fc.domains.get(domain.id)).name).toBe('sdk-mail.example.com');
    expect((await fc.domains.list().toArray()).map((d) => d.id)).toContain(domain.id);
    // The test's DNS server knows no name: the check runs and fails.
    expect((await fc.domains.verify(domain.id)).status).toBe('FAILED');
    await fc.domains.delete(domain.id);
  });

  it('forms and submissions: create, edit, deploy HTML, publish, version, submit', async () => {
    const form = await fc.forms.create({
      name: 'Newsletter',
      type: 'SIGN_UP',
      fieldMapping: { email: 'email', name: 'firstName' },
    });
    expect(form).toMatchObject({ status: 'DRAFT', version: 1 });
    const updated = await fc.forms.update(form.id, { description: 'The monthly letter' });
    expect(updated.description).toBe('The monthly letter');
    const deployed = await fc.forms.deployHtml(form.id, {
      html: '<form><input name="email" type="email"><input name="name"></form>',
    });
    expect(deployed.htmlValidation?.valid).toBe(true);
    expect((await fc.forms.getHtml(form.id)).html).toContain('name="email"');
    const published = await fc.forms.publish(form.id);
    expect(published.status).toBe('PUBLISHED');
    expect((await fc.forms.list({ status: 'PUBLISHED' }).toArray()).map((f) => f.id)).toContain(form.id);
    expect((await fc.forms.get(form.id)).status).toBe('PUBLISHED');

    const submission = await fc.submissions.create(form.id, { email: 'sub@example.com', name: 'Sam' });
    expect(submission.id).toBeTruthy();
    expect((await fc.submissions.list(form.id).toArray()).map((x) => x.id)).toContain(submission.id);
    expect((await fc.contacts.list({ email: 'sub@example.com' }).toArray())[0]?.firstName).toBe('Sam');

    const v2 = await fc.forms.createVersion(form.id);
    expect(v2).toMatchObject({ version: 2, previousVersionId: form.id, status: 'DRAFT' });
    expect((await fc.forms.listVersions(form.id)).data.map((f) => f.id)).toEqual([v2.id, form.id]);
    await fc.forms.delete(v2.id);
  });

  it('broadcasts: create, update, preview, test, audience, send, pause, resume, cancel, stats, pickWinner', async () => {
    await s.app.services.domains.add(workspaceId, 'sdk-send.example.com', { verified: true });
    await fc.contacts.create({ email: 'reader@example.com', firstName: 'Rea' });
    const draft = await fc.broadcasts.create({ name: 'Launch' });
    expect(draft.status).toBe('DRAFT');
    const broadcast = await fc.broadcasts.update(draft.id, {
      from: 'News <news@sdk-send.example.com>',
      emailContent: {
        subject: 'Hi {{ contact.firstName | default: "there" }}',
        html: '<p>We launched.</p>',
        text: 'We launched.',
      },
    });
    expect(broadcast.from).toBe('News <news@sdk-send.example.com>');
    expect((await fc.broadcasts.get(broadcast.id)).emailContent.subject).toContain('Hi');
    expect((await fc.broadcasts.list({ status: 'DRAFT' }).toArray()).map((b) => b.id)).toContain(broadcast.id);
    const preview = await fc.broadcasts.preview(broadcast.id, {});
    expect(preview.subject).toBeTruthy();
    const preflight = await fc.broadcasts.preflight(broadcast.id);
    expect(preflight).toHaveProperty('checks');
    const test = await fc.broadcasts.test(broadcast.id, { emails: ['qa@example.com'] });
    expect(test).toBeTypeOf('object');
    const audience = await fc.broadcasts.audience(broadcast.id);
    expect(audience.count).toBeGreaterThanOrEqual(1);

    const sending = await fc.broadcasts.send(broadcast.id);
    expect(sending.status).toBe('SENDING');
    expect(Array.isArray(await fc.broadcasts.deliveries(broadcast.id).toArray())).toBe(true);
    expect((await fc.broadcasts.links(broadcast.id)).data).toEqual([]);
    expect((await fc.broadcasts.timeline(broadcast.id, { bucket: 'day' })).bucket).toBe('day');
    expect((await fc.broadcasts.pause(broadcast.id)).status).toBe('PAUSED');
    expect((await fc.broadcasts.resume(broadcast.id)).status).toBe('SENDING');
    expect((await fc.broadcasts.cancel(broadcast.id)).status).toBe('CANCELED');
    // Only a SENT broadcast is resent (test/api/broadcasts-resend.test.ts sends one and resends it).
    await expect(fc.broadcasts.resend(broadcast.id, { to: 'NON_OPENERS' })).rejects.toMatchObject({
      status: 409,
      code: 'invalid_state',
    });

    const other = await fc.broadcasts.create({ name: 'Scrap' });
    await fc.broadcasts.delete(other.id);

    // An A/B broadcast's winner picked by hand (docs/ab-tests.md).
    const ab = await fc.broadcasts.create({
      name: 'Launch A/B',
      from: 'News <news@sdk-send.example.com>',
      emailContent: { subject: 'Launch', html: '<p>We launched.</p>' },
      abTest: {
        variants: [
          { id: 'a', subject: 'We launched' },
          { id: 'b', subject: 'It is out' },
        ],
        testPercent: 50,
        winnerBy: 'OPENS',
        waitMinutes: 60,
      },
    });
    await fc.broadcasts.send(ab.id);
    expect((await fc.broadcasts.pickWinner(ab.id, { variant: 'b' })).stats?.abResult?.winner).toBe('b');
  });

  it('suppressions and events', async () => {
    const entry = await fc.suppressions.create({ email: 'nope@example.com', reason: 'MANUAL' });
    expect(entry).toMatchObject({ email: 'nope@example.com', reason: 'MANUAL' });
    expect((await fc.suppressions.get('nope@example.com')).reason).toBe('MANUAL');
    expect((await fc.suppressions.list({ reason: 'MANUAL' }).toArray()).map((e) => e.email)).toContain(
      'nope@example.com',
    );
    await fc.suppressions.delete('nope@example.com');
    await expect(fc.suppressions.get('nope@example.com')).rejects.toMatchObject({ status: 404 });

    const contact = await fc.contacts.create({ email: 'tracked@example.com' });
    const tracked = await fc.events.track({
      contactId: contact.id,
      name: 'trial.started',
      properties: { plan: 'pro' },
    });
    expect(tracked).toBeTypeOf('object');
    const events = await fc.events.list({ contactId: contact.id }).toArray();
    expect(events.map((e) => e.type)).toContain('contact.created');
    expect(Array.isArray(await fc.inbound.list().toArray())).toBe(true);
  });

  it('emails: send (with an attachment, once across a retry), get, list', async () => {
    await s.app.services.domains.add(workspaceId, 'sdk-mail.test', { verified: true });
    const receipt = {
      from: 'Shop <receipts@sdk-mail.test>',
      to: ['ada@example.com'],
      subject: 'Your receipt',
      text: 'Thanks!',
      tags: ['receipt'],
      attachments: [{ filename: 'r.txt', content: Buffer.from('receipt').toString('base64') }],
    };
    const sent = await fc.emails.send(receipt, { idempotencyKey: 'sdk-receipt-1' });
    expect(sent.id).toMatch(/^em_/);
    const again = await fc.emails.send(receipt, { idempotencyKey: 'sdk-receipt-1' });
    expect(again.id).toBe(sent.id);
    const email = await fc.emails.get(sent.id);
    expect(email).toMatchObject({ id: sent.id, subject: 'Your receipt', status: 'QUEUED', tags: ['receipt'] });
    expect(email.recipients).toEqual([{ email: 'ada@example.com', type: 'to', status: 'QUEUED', lastError: null }]);
    expect((await fc.emails.list({ tag: 'receipt' }).toArray()).map((e) => e.id)).toEqual([sent.id]);
    await expect(
      fc.emails.send({ from: 'x@unverified.example', to: ['a@example.com'], subject: 's', text: 't' }),
    ).rejects.toMatchObject({ status: 422, code: 'sender_domain_not_verified' });
  });

  it('automations: create, update, activate, simulate, trigger, runs, stats, pause, delete', async () => {
    const contact = await fc.contacts.create({ email: 'auto@example.com' });
    const automation = await fc.automations.create({
      name: 'Tag API sign-ups',
      trigger: { type: 'api' },
      steps: [{ type: 'update', properties: { source: 'api' } }],
    });
    expect(automation.status).toBe('DRAFT');
    expect((await fc.automations.update(automation.id, { name: 'Tag sign-ups' })).name).toBe('Tag sign-ups');
    expect((await fc.automations.get(automation.id)).name).toBe('Tag sign-ups');
    expect((await fc.automations.list().toArray()).map((a) => a.id)).toContain(automation.id);
    const simulated = await fc.automations.simulate(automation.id, { contactId: contact.id });
    expect(simulated).toHaveProperty('steps');
    expect((await fc.automations.activate(automation.id)).status).toBe('ACTIVE');
    await fc.automations.trigger(automation.id, { contactId: contact.id });
    expect((await fc.automations.runs(automation.id).toArray()).length).toBe(1);
    expect(await fc.automations.stats(automation.id)).toBeTypeOf('object');
    expect((await fc.automations.pause(automation.id)).status).toBe('PAUSED');
    const scrap = await fc.automations.create({ name: 'Scrap', trigger: { type: 'contact.created' } });
    await fc.automations.delete(scrap.id);
  });

  it('people: users and invitations', async () => {
    expect(await fc.users.list().toArray()).toEqual([]);
    const invitation = await fc.invitations.create({ email: 'new.editor@example.com', role: 'editor' });
    expect((await fc.invitations.list().toArray()).map((i) => i.id)).toContain(invitation.id);
    await fc.invitations.delete(invitation.id);
    await expect(fc.users.get('user_01JD0000000000000000000000')).rejects.toMatchObject({ status: 404 });
  });

  it('any operation by path (fc.request)', async () => {
    const topic = await fc.request('post', '/v1/topics', { body: { name: 'Raw', defaultSubscription: 'OPT_OUT' } });
    const got = await fc.request('get', '/v1/topics/{topicId}', { path: [topic.id] });
    expect(got.defaultSubscription).toBe('OPT_OUT');
  });
});
