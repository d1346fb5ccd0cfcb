import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';
import { insertContact, verifiedDomain } from '../helpers/fixtures.js';
import { useSending } from '../helpers/sending.js';

/** The web version (docs/archive.md): `{{ webversion_url }}` is each recipient's own message in a browser. */
describeApi('web version', (h) => {
  const sending = useSending(h, { workerId: 'webversion-worker', leaseMs: 5000 });

  async function sendToTwo(tracking = { opens: true, clicks: true }) {
    const ws = await h.workspace('Acme News');
    const domain = await verifiedDomain(h, ws, `w${ws.id.slice(-8).toLowerCase()}.test`);
    await insertContact(h, ws, { email: `ada@${domain.name}`, firstName: 'Ada', properties: { plan: 'gold' } });
    await insertContact(h, ws, { email: `bob@${domain.name}`, firstName: 'Bob', properties: { plan: 'free' } });
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Launch',
      from: `Acme <news@${domain.name}>`,
      tracking,
      emailContent: {
        subject: 'Hi {{ contact.firstName }}',
        html: '<html><body><p><a href="{{ webversion_url }}">View in browser</a></p><p>Hello {{ contact.firstName }}, your plan is {{ contact.properties.plan }}.</p><p><a href="https://example.com/offer">Offer</a></p></body></html>',
        text: 'Hello {{ contact.firstName }}. Web version: {{ webversion_url }}',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const b = res.json();
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${b.id}/send`)).statusCode).toBe(202);
    await sending.drain();
    return { ws, domain, broadcast: b };
  }

  /** The web version link of the message the SMTP sink received for `to` (from its text part, as a reader sees it). */
  function linkOf(to: string): string {
    const m = sending.smtp.received.find((r) => r.to === to);
    expect(m, `a message to ${to}`).toBeDefined();
    const url = /Web version: (\S+)/.exec(m!.parsed.text ?? '')?.[1];
    expect(url).toMatch(/^https:\/\/mail\.example\.test\/w\/[0-9a-z]{79}$/);
    // The HTML links the same page, not rewritten for click tracking.
    expect(m!.parsed.html).toContain(`href="${url}"`);
    return new URL(url!).pathname;
  }

  it('shows each recipient their own message: personalised, no pixel, links as written, own unsubscribe link', async () => {
    const { domain } = await sendToTwo();
    const ada = linkOf(`ada@${domain.name}`);
    const bob = linkOf(`bob@${domain.name}`);
    expect(ada).not.toBe(bob);

    const page = await h.app.inject({ method: 'GET', url: ada });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    // Sandboxed (a meta refresh in a workspace's HTML is no redirect from this origin); links still open.
    expect(page.headers['content-security-policy']).toMatch(/; sandbox allow-popups allow-popups-to-escape-sandbox$/);
    expect(page.headers['x-robots-tag']).toContain('noindex');
    expect(page.headers['cache-control']).toContain('no-store');
    expect(page.body).toContain('Hello Ada, your plan is gold.');
    expect(page.body).not.toContain('Hello Bob'); // (not 'Bob': a random token may hold those letters)
    // No open pixel, no rewritten links.
    expect(page.body).not.toContain('/t/o/');
    expect(page.body).not.toContain('/t/c/');
    expect(page.body).toContain('href="https://example.com/offer"');
    // The recipient's own unsubscribe link, as in the email.
    const token = (
      await h.db.kysely
        .selectFrom('deliveries')
        .select('unsubscribe_token')
        .where('email', '=', `ada@${domain.name}`)
        .executeTakeFirstOrThrow()
    ).unsubscribe_token;
    expect(page.body).toContain(`/unsubscribe/${token}`);

    const other = await h.app.inject({ method: 'GET', url: bob });
    expect(other.statusCode).toBe(200);
    expect(other.body).toContain('Hello Bob, your plan is free.');
  });

  it("an A/B broadcast's recipient sees the variant they were sent", async () => {
    const ws = await h.workspace('Acme News');
    const domain = await verifiedDomain(h, ws, `v${ws.id.slice(-8).toLowerCase()}.test`);
    for (let i = 0; i < 20; i++) await insertContact(h, ws, { email: `r${i}@${domain.name}`, firstName: `R${i}` });
    const body = (name: string) => ({
      html: `<html><body><p>${name} body for {{ contact.firstName }}</p><p><a href="{{ webversion_url }}">View</a></p></body></html>`,
      text: `${name} body. Web version: {{ webversion_url }}`,
    });
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Test',
      from: `Acme <news@${domain.name}>`,
      emailContent: { subject: 'Base', ...body('Base') },
      abTest: {
        variants: [
          { id: 'a', subject: 'A', emailContent: body('Variant A') },
          { id: 'b', subject: 'B', emailContent: body('Variant B') },
        ],
        testPercent: 50,
        winnerBy: 'OPENS',
        waitMinutes: 60,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/send`)).statusCode).toBe(202);
    // The test share (the rest waits for the winner): written, and no delivery of it open.
    await sending.drain(async () => {
      const b = await h.db.kysely
        .selectFrom('broadcasts')
        .select('materialized_at')
        .where('id', '=', id)
        .executeTakeFirst();
      const open = await h.db.kysely
        .selectFrom('deliveries')
        .select('id')
        .where('broadcast_id', '=', id)
        .where('status', 'in', ['QUEUED', 'SENDING'])
        .limit(1)
        .execute();
      return b?.materialized_at != null && open.length === 0;
    });
    const tested = sending.smtp.received.filter((m) => m.to.endsWith(`@${domain.name}`));
    expect(tested.length).toBeGreaterThan(0);
    // The winner picked by hand goes to the rest; the broadcast ends SENT.
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${id}/ab/winner`, { variant: 'b' })).statusCode).toBe(200);
    await sending.drain();
    const received = sending.smtp.received.filter((m) => m.to.endsWith(`@${domain.name}`));
    expect(received.length).toBe(20);
    // Each message's web version is the variant it was sent.
    for (const m of received) {
      const variant = /^(Variant [AB]) body/.exec(m.parsed.text ?? '')?.[1];
      expect(variant, m.parsed.text).toBeDefined();
      const page = await h.app.inject({ method: 'GET', url: linkOf(m.to) });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`${variant} body for`);
      expect(page.body).not.toContain('Base body');
    }
  });

  it('answers a tampered, forged or malformed token with the plain 404 page, never a 500', async () => {
    const { domain } = await sendToTwo({ opens: false, clicks: false });
    const path = linkOf(`ada@${domain.name}`);
    const token = path.slice('/w/'.length);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    const bad = [
      flip(token, 5), // another delivery's id, same MAC
      flip(token, 30), // another workspace's id
      flip(token, token.length - 1), // the MAC
      token.slice(0, -1),
      `${token}0`,
      'x'.repeat(79),
      'not-a-token',
      '%00',
    ];
    for (const t of bad) {
      const res = await h.app.inject({ method: 'GET', url: `/w/${t}` });
      expect(res.statusCode, t).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('Not found');
      expect(res.body).not.toContain('Ada');
    }
    // Upper case is the same token (the alphabet folds case): still the page.
    expect((await h.app.inject({ method: 'GET', url: `/w/${token.toUpperCase()}` })).statusCode).toBe(200);
  });

  it('is gone once the contact is deleted (its data is not shown again)', async () => {
    const { ws, domain } = await sendToTwo({ opens: false, clicks: false });
    const path = linkOf(`bob@${domain.name}`);
    const contact = await h.db.kysely
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', ws.id)
      .where('email', '=', `bob@${domain.name}`)
      .executeTakeFirstOrThrow();
    expect((await h.call(ws.key, 'DELETE', `/v1/contacts/${contact.id}`)).statusCode).toBe(204);
    expect((await h.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
  });

  it('the block footer\'s "View in browser" link: in the email, not on the web page itself', async () => {
    const ws = await h.workspace('Blocks');
    const domain = await verifiedDomain(h, ws, `b${ws.id.slice(-8).toLowerCase()}.test`);
    await insertContact(h, ws, { email: `cy@${domain.name}`, firstName: 'Cy' });
    const res = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Blocks',
      from: `Acme <news@${domain.name}>`,
      tracking: { opens: true, clicks: true },
      emailContent: {
        subject: 'Blocks',
        editorContent: {
          type: 'formcast/blocks',
          version: 1,
          blocks: [
            { type: 'text', text: 'Hello {{ contact.firstName }}' },
            { type: 'footer', webVersion: true },
          ],
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect((await h.call(ws.key, 'POST', `/v1/broadcasts/${res.json().id}/send`)).statusCode).toBe(202);
    await sending.drain();
    const m = sending.smtp.received.find((r) => r.to === `cy@${domain.name}`)!;
    const url = /View in browser: (\S+)/.exec(m.parsed.text ?? '')?.[1];
    expect(url).toMatch(/^https:\/\/mail\.example\.test\/w\/[0-9a-z]{79}$/);
    expect(m.parsed.html).toMatch(new RegExp(`<a href="${url}"[^>]*>View in browser</a>`));
    const page = await h.app.inject({ method: 'GET', url: new URL(url!).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Hello Cy');
    expect(page.body).not.toContain('View in browser');
    // A block document that gives the switch something else is 422 at its pointer.
    const bad = await h.call(ws.key, 'POST', '/v1/broadcasts', {
      name: 'Bad',
      emailContent: {
        editorContent: { type: 'formcast/blocks', version: 1, blocks: [{ type: 'footer', webVersion: 'yes' }] },
      },
    });
    expect(bad.statusCode).toBe(422);
    expect(JSON.stringify(bad.json().errors)).toContain('/blocks/0/webVersion');
  });

  it('previews link a page that says what the link does', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/w/preview' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Web version');
  });
});
