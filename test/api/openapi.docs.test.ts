/**
 * The API reference (/openapi.json, rendered at /docs) documents every operation: a summary, a description,
 * realistic examples that match the operation's own schemas, and (under /v1) the problem+json errors it can
 * answer, each code with an example. The prose and examples live in each feature's *.docs.ts
 * (src/http/operation-docs.ts); a new route without them fails here.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../console/scripts/openapi-types.js';
import { OPERATION_DOCS } from '../../src/app.docs.js';

type Json = Record<string, any>;
interface Op {
  key: string;
  path: string;
  method: string;
  op: Json;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options'];

let doc: Json;
let ops: Op[];
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

beforeAll(async () => {
  doc = await openApiDocument();
  ops = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op: op as Json })),
  );
}, 60_000);

/** Every example of a media type object (`example`, or each of `examples`). */
function examplesOf(media: Json | undefined): unknown[] {
  if (!media) return [];
  if (media.example !== undefined) return [media.example];
  return Object.values((media.examples ?? {}) as Json).map((e) => (e as Json).value);
}

function validate(schema: Json, value: unknown): string | null {
  // The document's components ride along, so that references to them (#/components/schemas/SegmentFilter) resolve.
  const check = ajv.compile({ ...schema, $id: undefined, components: doc.components });
  return check(value) ? null : ajv.errorsText(check.errors);
}

describe('the API reference', () => {
  it('gives every operation a summary and a description', () => {
    const missing = ops.filter(({ op }) => !op.summary?.trim() || !op.description?.trim()).map((o) => o.key);
    expect(missing, `operations without a summary or a description: add them to the feature's *.docs.ts`).toEqual([]);
  });

  it('gives every operation at least one example, and every JSON body an example', () => {
    const problems: string[] = [];
    for (const { key, op } of ops) {
      const medias: [string, Json][] = [
        ...Object.entries((op.requestBody?.content ?? {}) as Json).map(
          ([t, m]) => [`request ${t}`, m as Json] as [string, Json],
        ),
        ...Object.entries((op.responses ?? {}) as Json).flatMap(([status, r]) =>
          Object.entries(((r as Json).content ?? {}) as Json).map(
            ([t, m]) => [`${status} ${t}`, m as Json] as [string, Json],
          ),
        ),
      ];
      // An operation with no body at all (a CORS preflight) has nothing to show.
      if (medias.length && !medias.some(([, m]) => examplesOf(m).length)) problems.push(`${key}: no example at all`);
      for (const [where, media] of medias) {
        // A JSON request body, and a success answer's JSON body, each need one.
        if (where.includes('json') && /^(request|2\d\d) /.test(where) && !examplesOf(media).length)
          problems.push(`${key}: ${where} has no example`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("has examples that match the operations' own schemas", () => {
    const problems: string[] = [];
    for (const { key, op } of ops) {
      const medias: [string, Json][] = [
        ...Object.entries((op.requestBody?.content ?? {}) as Json).map(
          ([t, m]) => [`request ${t}`, m as Json] as [string, Json],
        ),
        ...Object.entries((op.responses ?? {}) as Json).flatMap(([status, r]) =>
          Object.entries(((r as Json).content ?? {}) as Json).map(
            ([t, m]) => [`${status} ${t}`, m as Json] as [string, Json],
          ),
        ),
      ];
      for (const [where, media] of medias) {
        if (!where.includes('json') || !media.schema) continue;
        for (const example of examplesOf(media)) {
          const error = validate(media.schema as Json, example);
          if (error) problems.push(`${key} ${where}: ${error}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('documents the problem+json errors of every /v1 operation, with an example of each code', () => {
    const problems: string[] = [];
    for (const { key, path, op } of ops) {
      if (!path.startsWith('/v1/')) continue;
      const errors = Object.entries((op.responses ?? {}) as Json).filter(([status]) => /^4\d\d$/.test(status));
      if (!errors.length) problems.push(`${key}: no 4xx response documented`);
      for (const [status, r] of errors) {
        const media = (r as Json).content?.['application/problem+json'] as Json | undefined;
        if (!media) {
          problems.push(`${key} ${status}: not application/problem+json`);
          continue;
        }
        const codes = [...String((r as Json).description).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
        const exampleCodes = examplesOf(media).map((e) => (e as Json).code);
        for (const c of codes) if (!exampleCodes.includes(c)) problems.push(`${key} ${status}: no example of ${c}`);
        for (const e of examplesOf(media))
          if ((e as Json).status !== Number(status))
            problems.push(`${key} ${status}: an example has status ${(e as Json).status}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation an operationId: present, camelCase, unique, made from the route', () => {
    const missing = ops.filter(({ op }) => typeof op.operationId !== 'string' || !op.operationId).map((o) => o.key);
    expect(missing, 'operations without an operationId (src/http/operation-ids.ts makes them)').toEqual([]);
    const badCase = ops.filter(({ op }) => !/^[a-z][A-Za-z0-9]*$/.test(op.operationId)).map((o) => o.op.operationId);
    expect(badCase, 'operationIds that are not camelCase').toEqual([]);
    const seen = new Map<string, string[]>();
    for (const o of ops) seen.set(o.op.operationId, [...(seen.get(o.op.operationId) ?? []), o.key]);
    expect([...seen].filter(([, keys]) => keys.length > 1)).toEqual([]);
    const id = (key: string) => ops.find((o) => o.key === key)?.op.operationId;
    expect({
      list: id('GET /v1/contacts'),
      update: id('PUT /v1/forms/{formId}'),
      get: id('GET /v1/forms/{formId}'),
      create: id('POST /v1/forms'),
      remove: id('DELETE /v1/broadcasts/{broadcastId}'),
      action: id('POST /v1/broadcasts/{broadcastId}/send'),
      nested: id('GET /v1/webhooks/{webhookId}/deliveries/{deliveryId}'),
      dashed: id('POST /v1/webhooks/{webhookId}/rotate-secret'),
      singular: id('GET /v1/broadcasts/{broadcastId}/timeline'),
      page: id('GET /f/{slug}'),
    }).toEqual({
      list: 'listContacts',
      update: 'updateForm',
      get: 'getForm',
      create: 'createForm',
      remove: 'deleteBroadcast',
      action: 'sendBroadcast',
      nested: 'getWebhookDelivery',
      dashed: 'rotateWebhookSecret',
      singular: 'getBroadcastTimeline',
      page: 'getHostedForm',
    });
  });

  it('has docs only for operations that exist', () => {
    const known = new Set(ops.map((o) => o.key));
    const stale = OPERATION_DOCS.flatMap((d) => Object.keys(d)).filter((k) => !known.has(k));
    expect(stale, 'docs keyed by an operation the API does not have (a typo, or a route that moved)').toEqual([]);
  });
});
