import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { describeApi } from '../helpers/app.js';
import { insertContact, insertSegment, insertTopic, verifiedDomain } from '../helpers/fixtures.js';
import { TEST_SECRET } from '../helpers/secret.js';

/**
 * Every operation of the service's own /openapi.json, with generated requests: bodies drawn from the
 * operation's request schema (so most are valid and reach the service's rules), mixed with hostile values
 * (NUL, lone surrogates, deep nesting, leap seconds, quoted address lists, wrong types, unknown keys); real and
 * hostile ids in the path; junk in the query. No answer may be a 5xx, and every /v1 error is problem+json
 * with a code and a request id. The list of operations comes from the document, so a new operation is
 * covered by itself (docs/security.md).
 */
type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  body?: Schema;
  query: [string, Schema][];
  params: string[];
}

const HOSTILE_STRINGS = [
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '"<v1@other.example>,<v2@other.example>"@news.example',
  '"john smith"@x.example',
  '\ud800x@fuzz.test',
  '2099-12-31T23:59:60Z',
  '2099-02-30T10:00:00Z',
  '<script>alert(1)</script>',
  "'; drop table contacts; --",
  '{{ 1 | nope }}',
  '{% for i in (1..100000000) %}{{ i }}{% endfor %}',
  'javascript:alert(1)',
  'https://a;script-src *.example/',
  '../../etc/passwd',
  'x'.repeat(5000),
];
const HOSTILE_IDS = ['%00', '%ff', 'a'.repeat(7000), '%ED%A0%80', 'nope', '..%2F..', 'form_%00', '%2e%2e', '0'];

/** A fast-check arbitrary for a JSON schema (the subset TypeBox emits), leaning to valid values. */
function arb(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Schema[]).map((s) => arb(s, depth + 1)));
  }
  const types = Array.isArray(schema.type)
    ? (schema.type as string[])
    : typeof schema.type === 'string'
      ? [schema.type as string]
      : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => arb({ ...schema, type: t }, depth)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: (schema.minimum as number) ?? -10, max: (schema.maximum as number) ?? 1000 });
    case 'number':
      return fc.double({
        min: (schema.minimum as number) ?? -1e6,
        max: (schema.maximum as number) ?? 1e6,
        noNaN: true,
      });
    case 'string': {
      const max = Math.min((schema.maxLength as number) ?? 40, 60);
      const min = Math.min((schema.minLength as number) ?? 0, max);
      if (schema.format === 'date-time')
        return fc
          .date({ min: new Date('2027-01-01'), max: new Date('2099-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString());
      if (schema.format === 'http-url' || schema.format === 'uri') return fc.webUrl();
      if (typeof schema.pattern === 'string') {
        try {
          return fc
            .stringMatching(new RegExp(schema.pattern as string))
            .filter((s) => s.length >= min && s.length <= Math.max(max, min));
        } catch {
          return fc.string({ minLength: min, maxLength: max });
        }
      }
      return fc.oneof(
        fc.string({ minLength: min, maxLength: max }),
        fc.emailAddress(),
        fc.constantFrom('news@acme.test', 'Acme <news@acme.test>'),
      );
    }
    case 'array':
      return fc.array(arb(schema.items as Schema, depth + 1), {
        minLength: (schema.minItems as number) ?? 0,
        maxLength: Math.min((schema.maxItems as number) ?? 4, 4),
      });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const pattern = schema.patternProperties
        ? Object.values(schema.patternProperties as Record<string, Schema>)[0]
        : undefined;
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, arb(s, depth + 1)])), {
        requiredKeys: required.filter((k) => k in props),
      });
      if (!pattern) return record;
      return fc
        .tuple(
          record,
          fc.dictionary(fc.constantFrom('plan', 'city', 'age', 'email', 'first_name'), arb(pattern, depth + 1), {
            maxKeys: 3,
          }),
        )
        .map(([a, b]) => ({ ...b, ...a }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Puts a hostile value somewhere in a generated body: a leaf string, a new key, a wrong type. */
function mutate(value: unknown, pick: number, hostile: unknown): unknown {
  if (value === null || typeof value !== 'object') return hostile;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? [...value]
    : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (!keys.length || pick % 5 === 0) {
    if (!Array.isArray(copy))
      (copy as Record<string, unknown>)[pick % 2 ? 'unknownField' : String(hostile).slice(0, 20)] = hostile;
    return copy;
  }
  const k = keys[pick % keys.length]!;
  (copy as Record<string, unknown>)[k] =
    pick % 3 === 0 ? mutate((copy as Record<string, unknown>)[k], Math.floor(pick / 3), hostile) : hostile;
  return copy;
}

const deep = (n: number) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`;

describeApi('every operation of /openapi.json, generated requests', (h) => {
  let app: FastifyInstance;
  let mailer: Mailer | undefined;
  let outbox = '';
  let ops: Operation[] = [];
  const ids: Record<string, string[]> = {};

  beforeAll(async () => {
    // Its own app: DNS goes to a closed local port with a short timeout, so verify answers fast, offline.
    outbox = mkdtempSync(join(tmpdir(), 'fuzz-outbox-'));
    mailer = createMailer({ smtpUrl: null, outboxDir: outbox, maxConnections: 1, rateLimit: 0 });
    app = await buildApp({
      db: h.db,
      logger: false,
      mailer,
      config: {
        logLevel: 'silent',
        publicUrl: 'http://localhost:3000',
        secret: TEST_SECRET,
        dnsServers: ['127.0.0.1:9'],
        dnsTimeoutMs: 200,
      },
    });
    await app.ready();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [p, methods] of Object.entries<Record<string, Schema>>(doc.paths)) {
      if (p === '/openapi.json' || p.startsWith('/docs')) continue;
      for (const [method, op] of Object.entries(methods)) {
        const parameters = (op.parameters ?? []) as { in: string; name: string; schema: Schema }[];
        const content = ((op.requestBody as Schema | undefined)?.content ?? {}) as Record<string, { schema?: Schema }>;
        ops.push({
          method: method.toUpperCase(),
          path: p,
          body: content['application/json']?.schema,
          query: parameters.filter((x) => x.in === 'query').map((x) => [x.name, x.schema]),
          params: parameters.filter((x) => x.in === 'path').map((x) => x.name),
        });
      }
    }
    const ws = await h.workspace();
    const key = ws.key;
    const domain = await verifiedDomain(h, ws, `fuzz${h.dbName}.test`);
    const post = async (url: string, body: unknown) => (await h.call(key, 'POST', url, body)).json();
    const form = await post('/v1/forms', {
      name: 'F',
      type: 'SIGN_UP',
      slug: `fuzz-${h.dbName}`,
      fieldMapping: { email: 'email' },
    });
    await h.call(key, 'POST', `/v1/forms/${form.id}/publish`);
    const draft = await post('/v1/forms', { name: 'D', type: 'SURVEY' });
    const topicId = await insertTopic(h, ws);
    const segmentId = await insertSegment(h, ws);
    const contactId = await insertContact(h, ws, { email: 'fuzz@example.com' });
    const template = await post('/v1/templates', { name: 'T', subject: 'S', html: '<p>{{ confirm_url }}</p>' });
    const bc = await post('/v1/broadcasts', {
      name: 'B',
      from: `news@${domain.name}`,
      emailContent: { subject: 'S', text: 't' },
    });
    const apiKey = await post('/v1/api-keys', { name: 'k', scopes: ['read:forms'] });
    await post('/v1/suppressions', { email: 'sup@example.com', reason: 'MANUAL' });
    Object.assign(ids, {
      formId: [form.id, draft.id],
      broadcastId: [bc.id],
      contactId: [contactId],
      topicId: [topicId],
      segmentId: [segmentId],
      templateId: [template.id],
      domainId: [domain.id],
      keyId: [apiKey.id],
      importId: ['imp_01JD7Q8W3K2M4N5P6R7S8T9V0W'],
      email: ['sup%40example.com'],
      slug: [`fuzz-${h.dbName}`],
      token: ['AAAAAAAAAAAAAAAAAAAAAAAA'],
      deliveryId: ['dlv_01JD7Q8W3K2M4N5P6R7S8T9V0W'],
    });
    (h as unknown as { key_: string }).key_ = key;
  });
  afterAll(async () => {
    await app?.close();
    await mailer?.close();
    if (outbox) rmSync(outbox, { recursive: true, force: true });
  });

  it('finds the operations in the document', () => {
    expect(ops.length).toBeGreaterThan(60);
    ops = ops.filter((o) => !(o.method === 'DELETE' && /api-keys/.test(o.path))); // revoking the key would turn the rest into 401s
  });

  it('never answers 5xx; every /v1 error is problem+json with a code and a request id', async () => {
    const key = (h as unknown as { key_: string }).key_;
    const request = fc.record({
      mode: fc.constantFrom('schema', 'schema', 'schema', 'mutated', 'raw'),
      pick: fc.nat(1000),
      hostile: fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.constantFrom(12, -1, true, null, [], {}, 1e308)),
      hostileId: fc.nat(100),
      raw: fc.constantFrom(
        deep(20),
        deep(15_000),
        '{"a":',
        '"just a string"',
        '[1,2,3]',
        '{"__proto__":{"x":1}}',
        '{"name":"\\u0000"}',
        '\u0000',
      ),
      junkQuery: fc.boolean(),
    });
    for (const op of ops) {
      await fc.assert(
        fc.asyncProperty(
          request,
          arb(op.body),
          fc.dictionary(
            fc.constantFrom(...op.query.map(([n]) => n).concat('limit')),
            fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('%00', '-1', '101', 'abc')),
          ),
          async (r, body, query) => {
            let path = op.path;
            for (const name of op.params) {
              const real = ids[name] ?? ['x'];
              const value =
                r.hostileId % 4 === 0
                  ? HOSTILE_IDS[r.hostileId % HOSTILE_IDS.length]!
                  : real[r.hostileId % real.length]!;
              path = path.replace(`{${name}}`, value);
            }
            const qs = r.junkQuery
              ? Object.entries(query)
                  .map(([k, v]) => `${k}=${v.startsWith('%') ? v : encodeURIComponent(v)}`)
                  .join('&')
              : '';
            const url = qs ? `${path}?${qs}` : path;
            const payload =
              op.body || ['POST', 'PUT'].includes(op.method)
                ? r.mode === 'raw'
                  ? r.raw
                  : JSON.stringify(r.mode === 'mutated' ? mutate(body, r.pick, r.hostile) : (body ?? {}))
                : undefined;
            const res = await app.inject({
              method: op.method as 'GET',
              url,
              headers: {
                authorization: `Bearer ${key}`,
                ...(payload !== undefined
                  ? { 'content-type': url.startsWith('/hooks/ses') ? 'text/plain' : 'application/json' }
                  : {}),
              },
              ...(payload !== undefined ? { payload } : {}),
            });
            const where = `${op.method} ${url.slice(0, 200)} ${String(payload).slice(0, 300)}\n→ ${res.statusCode} ${res.body.slice(0, 500)}`;
            expect(res.statusCode, where).toBeLessThan(500);
            if (res.statusCode >= 400 && path.startsWith('/v1/')) {
              expect(res.headers['content-type'], where).toMatch(/^application\/problem\+json/);
              expect(typeof res.json().code, where).toBe('string');
              expect(res.headers['x-request-id'], where).toBeTruthy();
            }
          },
        ),
        { numRuns: Number(process.env.FUZZ_RUNS ?? 25) },
      );
    }
  }, 300_000);
});
