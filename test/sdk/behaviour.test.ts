/**
 * What the SDK adds to plain HTTP: cursor iteration, problem+json errors as FormcastError, Idempotency-Key on every
 * POST, retries of 429/503 after Retry-After, and Standard Webhooks verification, against the real service (and,
 * for the answers the service gives only under load, a small local HTTP server).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  Formcast,
  FormcastError,
  verifyWebhook,
  WebhookVerificationFailed,
  type WebhookEvent,
} from '../../packages/sdk/src/index.js';
import { WebhookDispatcher } from '../../src/integrations/webhooks/webhooks.dispatcher.js';
import { TEST_SECRET } from '../helpers/secret.js';
import { describeSdk } from './harness.js';

/** A local HTTP server answering each request with `answer(n)` (n from 1); it records what it got. */
async function stubServer(answer: (n: number) => { status: number; headers?: Record<string, string>; body?: unknown }) {
  const requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const a = answer(requests.length);
      res.writeHead(a.status, {
        'content-type': a.status < 400 ? 'application/json' : 'application/problem+json',
        ...a.headers,
      });
      res.end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The error a call threw (the test fails when it did not throw). */
async function failure(call: Promise<unknown>): Promise<FormcastError> {
  return call.then(
    () => expect.fail('expected a FormcastError'),
    (e: unknown) => e as FormcastError,
  );
}

const rateLimited = {
  status: 429,
  headers: { 'retry-after': '1' },
  body: {
    type: '/docs/errors#rate_limited',
    title: 'Rate limited',
    status: 429,
    code: 'rate_limited',
    detail: 'slow down',
  },
};

describeSdk('SDK behaviour', (s) => {
  let fc: Formcast;
  let workspaceId: string;
  const stubs: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    const ws = await s.workspace('SDK behaviour');
    workspaceId = ws.id;
    fc = new Formcast({ apiKey: ws.key, baseUrl: s.baseUrl });
  });
  afterAll(async () => {
    for (const stub of stubs) await stub.close();
  });

  it('iterates a list across pages with for await', async () => {
    const ws = await s.workspace('SDK pagination');
    const paged = new Formcast({ apiKey: ws.key, baseUrl: s.baseUrl });
    const emails: string[] = [];
    for (let i = 1; i <= 5; i++) emails.push((await paged.contacts.create({ email: `p${i}@example.com` })).email);

    const seen: string[] = [];
    for await (const c of paged.contacts.list({ limit: 2 })) seen.push(c.email);
    expect(seen).toEqual([...emails].reverse());

    const pages: number[] = [];
    for await (const p of paged.contacts.list({ limit: 2 }).pages()) pages.push(p.data.length);
    expect(pages).toEqual([2, 2, 1]);

    const first = await paged.contacts.list({ limit: 2 }).page();
    const second = await paged.contacts.list({ limit: 2 }).page(first.nextCursor!);
    expect(second.data.map((c) => c.email)).toEqual([emails[2], emails[1]]);
    expect(await paged.contacts.list({ limit: 2 }).toArray(3)).toHaveLength(3);
  });

  it('throws a FormcastError for each class of error', async () => {
    const invalidJson = await failure(
      fc.request('post', '/v1/topics', { raw: { body: '{"name":', contentType: 'application/json' } }),
    );
    expect(invalidJson).toBeInstanceOf(FormcastError);
    expect(invalidJson).toMatchObject({ status: 400, code: 'invalid_json', title: 'Invalid JSON' });

    const unauthorized = await failure(new Formcast({ apiKey: 'fc_not_a_key', baseUrl: s.baseUrl }).workspace.get());
    expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized' });

    const readForms = new Formcast({ apiKey: await s.key(workspaceId, ['read:forms']), baseUrl: s.baseUrl });
    const forbidden = await failure(readForms.contacts.create({ email: 'x@example.com' }));
    expect(forbidden).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(forbidden.detail).toContain('write:contacts');

    const missing = await failure(fc.contacts.get('ct_01JD0000000000000000000000'));
    expect(missing).toMatchObject({ status: 404, code: 'not_found', type: '/docs/errors#not_found' });
    expect(missing.requestId).toBeTruthy();

    // A 409 with a member of its own: draft_version_exists names the DRAFT to edit.
    const form = await fc.forms.create({ name: 'Conflict', type: 'SIGN_UP', fieldMapping: { email: 'email' } });
    await fc.forms.publish(form.id);
    const draft = await fc.forms.createVersion(form.id);
    const conflict = await failure(fc.forms.createVersion(form.id));
    expect(conflict).toMatchObject({ status: 409, code: 'draft_version_exists', draftId: draft.id });
    expect(conflict.problem).toMatchObject({ draftId: draft.id });

    const invalid = await failure(fc.topics.create({ name: 'x'.repeat(300), defaultSubscription: 'OPT_IN' }));
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(invalid.errors?.[0]?.path).toBe('/name');
    expect(invalid.message).toContain('Validation failed');

    const unreachable = await failure(
      new Formcast({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', maxRetries: 0 }).workspace.get(),
    );
    expect(unreachable).toMatchObject({ status: 0, code: 'connection_failed' });
  });

  it('sends a random Idempotency-Key on every POST, and the one it is given', async () => {
    const stub = await stubServer(() => ({
      status: 201,
      body: { id: 'topic_x', name: 'n', defaultSubscription: 'OPT_IN' },
    }));
    stubs.push(stub);
    const client = new Formcast({ apiKey: 'k', baseUrl: stub.url });
    await client.topics.create({ name: 'a', defaultSubscription: 'OPT_IN' });
    await client.topics.create({ name: 'b', defaultSubscription: 'OPT_IN' });
    await client.topics.create({ name: 'c', defaultSubscription: 'OPT_IN' }, { idempotencyKey: 'my-key-1' });
    await client.topics.create({ name: 'd', defaultSubscription: 'OPT_IN' }, { idempotencyKey: null });
    await client.topics.get('topic_x');
    const keys = stub.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys.slice(2)).toEqual(['my-key-1', undefined, undefined]);
    expect(stub.requests[0]?.headers.authorization).toBe('Bearer k');

    // Against the service: the same key replays the first answer.
    const key = crypto.randomUUID();
    const a = await fc.topics.create({ name: 'Once', defaultSubscription: 'OPT_IN' }, { idempotencyKey: key });
    const b = await fc.topics.create({ name: 'Once', defaultSubscription: 'OPT_IN' }, { idempotencyKey: key });
    expect(b.id).toBe(a.id);
    const reused = await failure(
      fc.topics.create({ name: 'Other', defaultSubscription: 'OPT_IN' }, { idempotencyKey: key }),
    );
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  it('retries a 429 after its Retry-After, with the same Idempotency-Key', async () => {
    const stub = await stubServer((n) =>
      n === 1 ? rateLimited : { status: 201, body: { id: 'ct_1', email: 'r@example.com' } },
    );
    stubs.push(stub);
    const client = new Formcast({ apiKey: 'k', baseUrl: stub.url });
    const contact = await client.contacts.create({ email: 'r@example.com' });
    expect(contact.id).toBe('ct_1');
    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[1]?.headers['idempotency-key']).toBe(stub.requests[0]?.headers['idempotency-key']);
    expect(stub.requests[1]?.body).toBe(stub.requests[0]?.body);
  });

  it('gives up after maxRetries, and at once when Retry-After is longer than it waits', async () => {
    const unavailable = await stubServer(() => ({
      status: 503,
      headers: { 'retry-after': '0' },
      body: { title: 'Service unavailable', status: 503, code: 'unavailable' },
    }));
    stubs.push(unavailable);
    const err = await failure(new Formcast({ apiKey: 'k', baseUrl: unavailable.url, maxRetries: 2 }).workspace.get());
    expect(err).toMatchObject({ status: 503, code: 'unavailable', retryAfter: 0 });
    expect(unavailable.requests).toHaveLength(3);

    const slow = await stubServer(() => ({ ...rateLimited, headers: { 'retry-after': '3600' } }));
    stubs.push(slow);
    const limited = await failure(new Formcast({ apiKey: 'k', baseUrl: slow.url }).workspace.get());
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 3600, detail: 'slow down' });
    expect(slow.requests).toHaveLength(1);
  });

  it('verifies the webhooks the service sends', async () => {
    const receiver = await stubServer(() => ({ status: 204 }));
    stubs.push(receiver);
    const endpoint = await fc.webhooks.create({
      url: `${receiver.url}/hooks/formcast`,
      eventTypes: ['contact.created'],
      description: 'CRM sync',
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    // Shown at creation only (issue 29): reading the endpoint does not show it. (null only in an Idempotency-Key replay)
    const secret = endpoint.secret!;
    expect(await fc.webhooks.get(endpoint.id)).not.toHaveProperty('secret');
    expect((await fc.webhooks.update(endpoint.id, { description: 'CRM' })).description).toBe('CRM');
    expect((await fc.webhooks.list().toArray()).map((w) => w.id)).toContain(endpoint.id);
    await fc.webhooks.test(endpoint.id);

    // What the worker does: deliver the due webhook requests.
    const dispatcher = new WebhookDispatcher(s.db, {
      workerId: 'sdk-test',
      secret: TEST_SECRET,
      allowHttp: true,
      allowPrivate: true,
    });
    try {
      for (let n; (n = await dispatcher.dispatch()) > 0;) void n;
    } finally {
      await dispatcher.close();
    }
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    const event: WebhookEvent = verifyWebhook(req.body, req.headers, secret);
    expect(event.type).toBe('webhook.test');
    expect(Formcast.verifyWebhook(req.body, new Headers(req.headers as Record<string, string>), [secret]).type).toBe(
      'webhook.test',
    );
    expect(() => verifyWebhook(req.body.replace('webhook.test', 'webhook.tset'), req.headers, secret)).toThrow(
      WebhookVerificationFailed,
    );
    expect(() => verifyWebhook(req.body, req.headers, `whsec_${crypto.randomBytes(24).toString('base64')}`)).toThrow(
      WebhookVerificationFailed,
    );

    const deliveries = await fc.webhooks.deliveries(endpoint.id).toArray();
    expect(deliveries).toHaveLength(1);
    const delivery = await fc.webhooks.getDelivery(endpoint.id, deliveries[0]!.id);
    expect(delivery.status).toBe('SUCCEEDED');
    await fc.webhooks.retryDelivery(endpoint.id, delivery.id);
    const rotated = await fc.webhooks.rotateSecret(endpoint.id);
    expect(rotated.secret).not.toBe(endpoint.secret);
    await fc.webhooks.delete(endpoint.id);
  });
});
