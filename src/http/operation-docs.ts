/**
 * The API reference's prose and examples, kept beside each feature (src/<feature>/<feature>.docs.ts) instead of in
 * its routes: a map keyed by `"METHOD /path"` (the path as /openapi.json writes it, `{param}` and all). The
 * composition root hands every feature's map to the app (`app.documentOperations`, http/openapi.ts), and the
 * document is amended when it is built: each operation gets its tags, summary, description and examples, and each
 * path parameter an example id. test/api/openapi.docs.test.ts checks that no operation goes without.
 *
 * An operation's tags, summary and description live here and only here: a route's schema holds what is validated
 * and serialised (params, querystring, body, response) and what the docs cannot know (`security`, `hide`,
 * `consumes`, `produces`), never prose.
 */
export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';

export type OperationKey = `${HttpVerb} /${string}`;

export interface OperationDoc {
  /** The section of the reference the operation is listed in (one tag). */
  tags: string[];
  /** One line, shown in lists of operations. */
  summary: string;
  /** What it does, when to use it, and what it answers: Markdown (CommonMark). */
  description: string;
  /** A realistic request body (JSON, or the text of a CSV, form-encoded or HTML body). */
  request?: unknown;
  /** The media type of `request` on a route whose schema declares no body (pages and provider hooks). */
  requestType?: string;
  /** A realistic body of the success answer (JSON, or text for HTML, CSV and the like). */
  response?: unknown;
  /** The media type of `response` on a route whose schema declares none (default: text/html for a string, else JSON). */
  responseType?: string;
  /** Answers other than the route's own (pages and redirects outside /v1): status → description and example body. */
  responses?: Record<number, { description: string; contentType?: string; example?: unknown }>;
}

export type OperationDocs = Partial<Record<OperationKey, OperationDoc>>;

/** Example values of path parameters, by name (ids look like the service's: a prefix and a ULID). */
const PARAM_EXAMPLES: Record<string, string> = {
  formId: 'form_01JDB3M5Q8X2V7K9T4N6R1P0AZ',
  jobId: 'bulk_01JDB4F2H4K6M8P0R2T4V6X8Z0',
  contactId: 'ct_01JDB3N2W4Y6A8C0E2G4J6M8Q0',
  importId: 'imp_01JDB3P7R9T1V3X5Z7B9D1F3H5',
  topicId: 'topic_01JDB3Q1S3U5W7Y9A1C3E5G7J9',
  segmentId: 'seg_01JDB3R4T6V8X0Z2B4D6F8H0K2',
  templateId: 'tmpl_01JDB3S8V0X2Z4B6D8F0H2K4M6',
  broadcastId: 'bc_01JDB3T2X4Z6B8D0F2H4K6M8P0',
  domainId: 'dom_01JDB3V6Z8B0D2F4H6K8M0P2R4',
  keyId: 'key_01JDB3W0B2D4F6H8K0M2P4R6T8',
  webhookId: 'wh_01JDB3X4D6F8H0K2M4P6R8T0V2',
  deliveryId: 'whd_01JDB3Y8F0H2K4M6P8R0T2V4X6',
  automationId: 'aut_01JDB3Z2H4K6M8P0R2T4V6X8Z0',
  userId: 'usr_01JDB40M6P8R0T2V4X6Z8B0D2F',
  invitationId: 'inv_01JDB41Q0T2V4X6Z8B0D2F4H6K',
  sessionId: 'ses_01JDB42T4X6Z8B0D2F4H6K8M0P',
  imageId: 'img_01JDB44V8Z0B2D4F6H8K0M2P4R',
  emailId: 'em_01JDB45X0B2D4F6H8K0M2P4R6T',
  file: 'img_01JDB44V8Z0B2D4F6H8K0M2P4R.jpg',
  email: 'ada@example.com',
  slug: 'newsletter',
  token: 'v1.eyJkIjoiZGx2XzAxSkRCNDMifQ.kY3x9Q',
  '*': 'v1.eyJkIjoiZGx2XzAxSkRCNDMifQ.kY3x9Q',
};

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const mediaTypeOf = (example: unknown) => (typeof example === 'string' ? 'text/html' : 'application/json');
const schemaOf = (example: unknown) => ({
  type: typeof example === 'string' ? 'string' : Array.isArray(example) ? 'array' : 'object',
});

/** Puts `example` on a media type object unless it has examples of its own. */
function exemplify(content: unknown, example: unknown): void {
  if (!isObject(content) || example === undefined) return;
  for (const media of Object.values(content)) {
    if (isObject(media) && media.example === undefined && media.examples === undefined) media.example = example;
  }
}

/** Amends an OpenAPI document in place with the operations' docs (see above); returns it. */
export function applyOperationDocs<T extends Json>(document: T, docs: ReadonlyMap<string, OperationDoc>): T {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!isObject(op)) continue;
      for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
        if (
          isObject(p) &&
          p.in === 'path' &&
          p.example === undefined &&
          typeof p.name === 'string' &&
          PARAM_EXAMPLES[p.name]
        )
          p.example = PARAM_EXAMPLES[p.name];
      }
      const doc = docs.get(`${method.toUpperCase()} ${path}`);
      if (!doc) continue;
      op.tags = doc.tags;
      op.summary = doc.summary;
      op.description = doc.description;
      if (isObject(op.requestBody)) exemplify(op.requestBody.content, doc.request);
      else if (doc.request !== undefined && doc.requestType) {
        op.requestBody = { content: { [doc.requestType]: { schema: schemaOf(doc.request), example: doc.request } } };
      }
      const responses = isObject(op.responses) ? op.responses : (op.responses = {});
      for (const status of Object.keys(responses).filter((s) => /^2\d\d$/.test(s))) {
        const r = responses[status];
        if (!isObject(r) || doc.response === undefined) continue;
        // A route without a response schema (a page) gets its media type from the example.
        if (!isObject(r.content) && status !== '204')
          r.content = { [doc.responseType ?? mediaTypeOf(doc.response)]: { schema: schemaOf(doc.response) } };
        exemplify(r.content, doc.response);
      }
      for (const [status, r] of Object.entries(doc.responses ?? {})) {
        const existing = isObject(responses[status]) ? (responses[status] as Json) : undefined;
        const content =
          r.example === undefined
            ? undefined
            : { [r.contentType ?? mediaTypeOf(r.example)]: { schema: schemaOf(r.example), example: r.example } };
        // A documented answer replaces Fastify's "Default Response" for that status.
        responses[status] = {
          ...existing,
          description: r.description,
          ...(content ? { content: existing?.content ?? content } : {}),
        };
        if (content && existing?.content) exemplify(existing.content, r.example);
      }
    }
  }
  return document;
}
