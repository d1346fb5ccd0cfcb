import { afterEach, expect, it } from 'vitest';
import { recordEvents } from '../../src/outbox/events/events.repository.js';
import { WebhookDispatcher } from '../../src/integrations/webhooks/webhooks.dispatcher.js';
import type { Resolver } from '../../src/integrations/webhooks/webhooks.guard.js';
import { WebhooksService } from '../../src/integrations/webhooks/webhooks.service.js';
import { describeApi } from '../helpers/app.js';
import { TEST_SECRET } from '../helpers/secret.js';

/**
 * Issue 29 item 14: the SSRF guard refuses the IPv6 forms that embed or lead to an IPv4 address (IPv4-translated,
 * local-use NAT64, 6to4, Teredo, IPv4-compatible) and judges IPv4-mapped and well-known NAT64 ones by the IPv4 address
 * they carry: when an endpoint is created, and again at each delivery.
 */
const FORMS: [string, RegExp][] = [
  ['::ffff:0:127.0.0.1', /IPv4-translated/],
  ['64:ff9b:1::7f00:1', /local-use NAT64/],
  ['64:ff9b::7f00:1', /NAT64 loopback/],
  ['::ffff:127.0.0.1', /IPv4-mapped loopback/],
  ['2002:7f00:1::1', /6to4/],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
  ['::127.0.0.1', /IPv4-compatible/],
];

describeApi('webhooks: the SSRF guard and IPv4 embedded in IPv6 (issue 29 item 14)', (h) => {
  const dispatchers: WebhookDispatcher[] = [];
  afterEach(() => {
    for (const d of dispatchers.splice(0)) d.close();
  });

  it('POST /v1/webhooks refuses each form as an IP literal (422 at /url); nothing is stored', async () => {
    const ws = await h.workspace();
    for (const [address, why] of FORMS) {
      const res = await h.call(ws.key, 'POST', '/v1/webhooks', {
        url: `https://[${address}]:8443/hook`,
        eventTypes: ['contact.created'],
      });
      expect(res.statusCode, address).toBe(422);
      expect(res.json().errors).toEqual([{ path: '/url', message: expect.stringMatching(why) }]);
    }
    expect((await h.call(ws.key, 'GET', '/v1/webhooks')).json().data).toEqual([]);
  });

  it('at delivery: a host that now resolves to one of these forms is not called; the attempt says why', async () => {
    let answer = '93.184.215.14';
    const resolve: Resolver = async () => [{ address: answer, family: answer.includes(':') ? 6 : 4 }];
    const service = new WebhooksService(h.db, { secret: TEST_SECRET, allowHttp: true, allowPrivate: false, resolve });
    const at = new Date();
    const d = new WebhookDispatcher(h.db, {
      workerId: `ssrf-${h.dbName}`,
      secret: TEST_SECRET,
      allowHttp: true,
      allowPrivate: false,
      clock: () => at,
      resolve,
    });
    dispatchers.push(d);
    for (const [address, why] of FORMS) {
      const ws = await h.workspace();
      answer = '93.184.215.14'; // public when the endpoint is created
      const webhook = await service.create(ws.id, {
        url: 'https://hooks.customer.example/hook',
        eventTypes: ['contact.created'],
      });
      answer = address; // then DNS answers with the embedded form
      await h.db.kysely
        .transaction()
        .execute((trx) => recordEvents(trx, ws.id, [{ type: 'contact.created', data: {} }], at.toISOString()));
      await d.fanOut();
      while ((await d.dispatch()) > 0);
      const [log] = (await h.call(ws.key, 'GET', `/v1/webhooks/${webhook.id}/deliveries`)).json().data;
      expect(log, address).toMatchObject({ status: 'PENDING', attempts: 1, lastStatusCode: null });
      expect(log.lastError, address).toMatch(
        new RegExp(`refused: .*${address.replace(/[.]/g, '\\.')}, a ${why.source}`),
      );
      await h.db.kysely.deleteFrom('webhook_endpoints').where('id', '=', webhook.id).execute();
    }
  });
});
