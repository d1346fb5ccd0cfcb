/**
 * The unsubscribe page as a preference centre (docs/bounces.md, "The unsubscribe page", issue 33 items 2 and 14): the state it shows is the
 * state stored after each action; one-click keeps working; a reason is stored with the unsubscribe event; a suppressed
 * address cannot subscribe again from it; an unsubscribed one can, through a double opt-in confirmation email.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfirmationSender } from '../../src/forms/submissions/confirmations.sender.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { unsubscribeLink as link } from '../helpers/unsubscribe.js';
import { insertContact, insertTopic, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { startSmtpServer } from '../helpers/smtp.js';

describeApi('the unsubscribe page (preference centre)', (h) => {
  const unsubscribeLink = (
    ws: TestWorkspace,
    contactId: string,
    email: string,
    opts: { topicId?: string | null; from?: string | null } = {},
  ) => link(h.db, ws.id, contactId, email, opts);
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let mailer: Mailer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, outboxDir: '', maxConnections: 1, rateLimit: 0 });
  });
  afterAll(async () => {
    await mailer?.close();
    await smtp?.close();
  });

  const form = (path: string, payload: string) =>
    h.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    });
  const stored = async (contactId: string) => {
    const c = await h.db.kysely
      .selectFrom('contacts')
      .select(['status', 'email', 'workspace_id'])
      .where('id', '=', contactId)
      .executeTakeFirstOrThrow();
    const s = await h.db.kysely
      .selectFrom('suppressions')
      .select('reason')
      .where('workspace_id', '=', c.workspace_id)
      .where('email', '=', c.email)
      .executeTakeFirst();
    const topics = await h.db.kysely
      .selectFrom('contact_topics')
      .select(['topic_id', 'subscribed'])
      .where('contact_id', '=', contactId)
      .execute();
    return {
      status: c.status,
      suppression: s?.reason ?? null,
      topics: Object.fromEntries(topics.map((t) => [t.topic_id, Number(t.subscribed) === 1])),
    };
  };
  /** The checkbox of a topic in the page, and whether it is ticked (undefined: not on the page). */
  const ticked = (body: string, topicId: string): boolean | undefined => {
    const m = body.match(new RegExp(`<input type="checkbox" name="topic" value="${topicId}"( checked)?>`));
    return m ? m[1] !== undefined : undefined;
  };

  async function setup(name = 'Acme Books') {
    const ws = await h.workspace(name);
    await h.call(ws.key, 'PUT', '/v1/workspace', { settings: { brandColor: '#c2410c' } });
    const monthly = await insertTopic(h, ws, 'OPT_IN', 'Monthly newsletter');
    const offers = await insertTopic(h, ws, 'OPT_OUT', 'Offers');
    const ada = await insertContact(h, ws, { email: 'ada@example.com' });
    const path = await unsubscribeLink(ws, ada, 'ada@example.com', { from: 'Ada at Acme <news@acme.test>' });
    return { ws, monthly, offers, ada, path };
  }

  it('names the sender and shows the true state; every action changes what it says and the page shows it after', async () => {
    const { monthly, offers, ada, path } = await setup();
    const first = await h.app.inject({ method: 'GET', url: path });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-security-policy']).toContain("default-src 'none'");
    expect(first.body).toContain('<meta name="color-scheme" content="light dark">');
    expect(first.body).toContain('--accent: #c2410c'); // the workspace's brand colour
    expect(first.body).toContain('Emails from Ada at Acme (Acme Books)');
    expect(first.body).toContain('ada@example.com is subscribed.');
    expect(ticked(first.body, monthly)).toBe(true); // OPT_IN by default
    expect(ticked(first.body, offers)).toBe(false); // OPT_OUT by default

    // Topic choices: exactly those ticked stay
    const saved = await form(path, `action=topics&topic=${offers}`);
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Your choices for ada@example.com are saved.');
    expect(await stored(ada)).toEqual({
      status: 'SUBSCRIBED',
      suppression: null,
      topics: { [monthly]: false, [offers]: true },
    });
    expect(ticked(saved.body, monthly)).toBe(false);
    expect(ticked(saved.body, offers)).toBe(true);
    // …and ticking a topic again subscribes to it again, directly (the address is subscribed)
    const again = await form(path, `action=topics&topic=${offers}&topic=${monthly}`);
    expect(ticked(again.body, monthly)).toBe(true);
    expect((await stored(ada)).topics[monthly]).toBe(true);

    // Everything, with a reason: UNSUBSCRIBED, suppressed, the reason on the event
    const all = await form(
      path,
      'action=all&reason=too_many&comment=' + encodeURIComponent('Weekly is <b>too</b> much'),
    );
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('ada@example.com will not receive our emails any more.');
    expect(await stored(ada)).toMatchObject({ status: 'UNSUBSCRIBED', suppression: 'UNSUBSCRIBED' });
    const event = await h.db.kysely
      .selectFrom('events')
      .select('data')
      .where('contact_id', '=', ada)
      .where('type', '=', 'contact.unsubscribed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(String(event.data))).toMatchObject({
      via: 'page',
      reason: 'too_many',
      comment: 'Weekly is <b>too</b> much',
    });

    // Reopening the link: unsubscribed, no "save my choices" that would do nothing; subscribing again is offered
    const reopened = await h.app.inject({ method: 'GET', url: path });
    expect(reopened.body).toContain('ada@example.com is unsubscribed.');
    expect(reopened.body).toContain('Acme Books sends this address no emails.');
    expect(reopened.body).not.toContain('Save my choices');
    expect(reopened.body).not.toContain('value="all"');
    expect(reopened.body).toContain('Send me a confirmation email');
    // A topic form posted anyway saves nothing and says why
    const refused = await form(path, `action=topics&topic=${offers}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('Nothing was saved: ada@example.com is not subscribed.');
    expect((await stored(ada)).topics[offers]).toBe(true);
  });

  it('subscribing again sends a double opt-in confirmation; following it makes the contact SUBSCRIBED and lifts the suppression', async () => {
    const { ws, monthly, offers, ada, path } = await setup('Resubscribers');
    const domain = await verifiedDomain(h, ws, `resub${h.dbName}.test`);
    await form(path, 'action=all');
    expect(await stored(ada)).toMatchObject({ status: 'UNSUBSCRIBED', suppression: 'UNSUBSCRIBED' });

    const asked = await form(path, `action=resubscribe&topics=1&topic=${monthly}`);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('A confirmation email is on its way to ada@example.com.');
    expect(asked.body).toContain('ada@example.com is unsubscribed.'); // still: nothing changes until confirmed
    expect(asked.body).toContain('Send the confirmation email again');
    expect(await stored(ada)).toEqual({
      status: 'UNSUBSCRIBED',
      suppression: 'UNSUBSCRIBED',
      topics: { [monthly]: true, [offers]: false },
    });
    // Asking again within the hour queues no second email
    const twice = await form(path, `action=resubscribe&topics=1&topic=${monthly}`);
    expect(twice.body).toContain('less than an hour ago');
    const confirmations = await h.db.kysely
      .selectFrom('confirmations')
      .select(['token', 'form_id'])
      .where('contact_id', '=', ada)
      .execute();
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]!.form_id).toBeNull();

    // The confirmation email goes out in the workspace's words, with no form
    smtp.received.length = 0;
    const sender = new ConfirmationSender(
      h.db,
      mailer,
      'https://mail.example.test',
      pino({ level: 'silent' }) as never,
      TEST_SECRET,
    );
    await sender.sendDue();
    const mail = smtp.received.find((m) => m.to === 'ada@example.com')!;
    expect(mail).toBeDefined();
    expect(mail.parsed.subject).toBe('Please confirm your subscription to Resubscribers');
    expect(mail.parsed.from?.value[0]?.address).toBe(`no-reply@${domain.name}`);
    const link = String(mail.parsed.html).match(/href="https:\/\/mail\.example\.test(\/confirm\/[A-Za-z0-9_-]+)"/)![1]!;
    const confirmPage = await h.app.inject({ method: 'GET', url: link });
    expect(confirmPage.body).toContain('--accent: #c2410c'); // the confirm page has the workspace's brand too
    expect((await h.app.inject({ method: 'POST', url: link })).statusCode).toBe(200);
    expect(await stored(ada)).toMatchObject({ status: 'SUBSCRIBED', suppression: null });
    const after = await h.app.inject({ method: 'GET', url: path });
    expect(after.body).toContain('ada@example.com is subscribed.');
    expect(ticked(after.body, monthly)).toBe(true);
    expect(ticked(after.body, offers)).toBe(false);
  });

  it.each([
    ['BOUNCED', 'Messages to this address could not be delivered.'],
    ['COMPLAINED', 'A message to this address was reported as spam.'],
    ['MANUAL', 'has stopped sending to this address.'],
  ] as const)('a %s suppression cannot be lifted from the page, and it says so plainly', async (reason, words) => {
    const ws = await h.workspace('Blocked Co');
    const id = await insertContact(h, ws, {
      email: 'bo@example.com',
      status: reason === 'MANUAL' ? 'SUBSCRIBED' : reason,
    });
    await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'bo@example.com', reason: 'MANUAL' });
    if (reason !== 'MANUAL')
      await h.db.kysely
        .updateTable('suppressions')
        .set({ reason })
        .where('workspace_id', '=', ws.id)
        .where('email', '=', 'bo@example.com')
        .execute();
    const path = await unsubscribeLink(ws, id, 'bo@example.com');
    const before = await stored(id);
    const shown = await h.app.inject({ method: 'GET', url: path });
    expect(shown.body).toContain('bo@example.com receives no emails from Blocked Co.');
    expect(shown.body).toContain(words);
    expect(shown.body).toContain('It cannot be subscribed again from this page.');
    expect(shown.body).not.toContain('name="action" value="resubscribe"');
    const tried = await form(path, 'action=resubscribe');
    expect(tried.statusCode).toBe(409);
    expect(tried.body).toContain('Nothing was changed.');
    expect(await stored(id)).toEqual(before);
    expect(
      await h.db.kysely.selectFrom('confirmations').select('id').where('contact_id', '=', id).execute(),
    ).toHaveLength(0);
  });

  it('RFC 8058 one-click still leaves the message topic at once, and answers the page with the new state', async () => {
    const ws = await h.workspace('One Click');
    const weekly = await insertTopic(h, ws, 'OPT_IN', 'Weekly');
    const id = await insertContact(h, ws, { email: 'oc@example.com' });
    const path = await unsubscribeLink(ws, id, 'oc@example.com', { topicId: weekly });
    const res = await form(path, 'List-Unsubscribe=One-Click');
    expect(res.statusCode).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('oc@example.com will not receive emails about Weekly any more.');
    expect(await stored(id)).toEqual({ status: 'SUBSCRIBED', suppression: null, topics: { [weekly]: false } });
    expect(ticked(res.body, weekly)).toBe(false);
    // the "only this topic" button is gone once it is left
    expect(res.body).not.toContain('Only stop emails about Weekly');
  });

  it('escapes what it shows, refuses input no page of ours sends, and never redirects', async () => {
    const ws = await h.workspace('<script>alert(1)</script> & Co');
    const id = await insertContact(h, ws, { email: 'x@example.com' });
    await insertTopic(h, ws, 'OPT_IN', '<img src=x onerror=alert(1)>');
    const path = await unsubscribeLink(ws, id, 'x@example.com', { from: '"<b>Bold</b>" <n@acme.test>' });
    const page = await h.app.inject({ method: 'GET', url: path });
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).not.toContain('<b>Bold</b>');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    for (const payload of ['action=all&reason=bogus', `action=all&comment=${'x'.repeat(501)}`, 'action=drop']) {
      const res = await form(path, payload);
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
    }
    expect(await stored(id)).toMatchObject({ status: 'SUBSCRIBED', suppression: null });
    const res = await form(path, 'action=all&next=https://evil.example/');
    expect(res.statusCode).toBe(200);
    expect(res.headers.location).toBeUndefined();
  });

  it("a link names one delivery: another workspace's contact is not reachable, and a made-up token is 404", async () => {
    const a = await setup('Workspace A');
    const other = await h.workspace('Workspace B');
    const bob = await insertContact(h, other, { email: 'ada@example.com' });
    await form(a.path, 'action=all');
    expect(await stored(bob)).toMatchObject({ status: 'SUBSCRIBED', suppression: null });
    expect(
      (await h.app.inject({ method: 'GET', url: '/unsubscribe/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' })).statusCode,
    ).toBe(404);
  });
});
