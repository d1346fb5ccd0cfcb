import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { openApiErrorResponses, routeErrors } from '../errors/docs.js';
import { sendCompressedOnce } from '../lib/compress.js';
import { applyOperationDocs, type OperationDoc, type OperationDocs } from './operation-docs.js';
import { applyOperationIds } from './operation-ids.js';
import { referencePage } from './reference-page.js';
import { ProblemSchema } from './schema-helpers.js';
import type { V1 } from './types.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of every route registered so far (what /openapi.json serves). */
    openapi(): Promise<Record<string, unknown>>;
    /** Adds operations' summaries, descriptions and examples to the document (http/operation-docs.ts). */
    documentOperations(...docs: OperationDocs[]): void;
  }
}

/** The reference page's policy: no script at all, nothing from elsewhere, styles inline. */
const REFERENCE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * /openapi.json and the API reference page at /docs, built on first request rather than at start.
 *
 * @fastify/swagger (with YAML and friends) costs CPU and memory at every start of every process, for a document few
 * processes ever serve. So the app only records its routes (one onRoute hook); the first request for the document or
 * the page builds a separate Fastify instance with the plugin, registers the recorded routes on it (schemas and
 * config, no handlers), and asks it. The document is the one @fastify/swagger would have made from the app itself,
 * with every operation's `operationId` (http/operation-ids.ts). /docs is that document rendered on the server into
 * one static page (http/reference-page.ts), made once per document.
 */
export function registerOpenApi(app: V1, publicUrl: string): void {
  const routes: RouteOptions[] = [];
  const operationDocs = new Map<string, OperationDoc>();
  // The route objects themselves: hooks registered later (http/auth.ts) still amend their config.
  app.addHook('onRoute', (route) => void routes.push(route as RouteOptions));
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = () =>
    (docs ??= buildDocsApp(routes, publicUrl, operationDocs).catch((err: unknown) => {
      docs = undefined;
      throw err;
    }));

  app.decorate('documentOperations', (...maps: OperationDocs[]) => {
    for (const map of maps) for (const [key, doc] of Object.entries(map)) if (doc) operationDocs.set(key, doc);
    docs = undefined; // a document built before is built again, with them
  });
  app.decorate('openapi', async () => (await docsApp()).swagger() as unknown as Record<string, unknown>);
  app.get('/openapi.json', { schema: { hide: true } }, () => app.openapi());
  app.get('/docs', { schema: { hide: true } }, async (req: FastifyRequest, reply: FastifyReply) => {
    // The document object lives as long as its docs app: the page is made and compressed once for it.
    const doc = await app.openapi();
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', REFERENCE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache');
    return sendCompressedOnce(req, reply, doc, 'reference', () => referencePage(doc));
  });
  // Where Swagger UI kept the document before.
  app.get('/docs/json', { schema: { hide: true } }, (_req, reply) => reply.redirect('/openapi.json', 301));
}

async function buildDocsApp(
  routes: readonly RouteOptions[],
  publicUrl: string,
  operationDocs: ReadonlyMap<string, OperationDoc>,
): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }] = await Promise.all([
    import('fastify'),
    import('@fastify/swagger'),
  ]);
  const docs = Fastify({ logger: false });
  await docs.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Formcast API',
        version: '1.0.0',
        description: 'Forms, contacts and broadcasts. Errors are application/problem+json with a stable `code`.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        schemas: { Problem: { ...ProblemSchema, $id: undefined } as never },
      },
      security: [{ bearer: [] }],
    },
    // Each /v1 route documents the 4xx problems it can answer (errors/docs.ts).
    transform: ({ schema, url, route }) => {
      if (!url.startsWith('/v1/') || !schema || (schema as { hide?: boolean }).hide) return { schema, url };
      const s = schema as Record<string, unknown>;
      const codes = routeErrors({
        method: route.method,
        url,
        scope: route.config?.scope,
        errors: route.config?.errors,
        hasParams: Boolean(s.params),
        hasBody: Boolean(s.body),
        hasQuery: Boolean(s.querystring),
      });
      return {
        schema: {
          ...s,
          response: { ...(s.response as object), ...openApiErrorResponses(codes, route.config?.errorsAt) },
        } as typeof schema,
        url,
      };
    },
    // Each operation's prose and examples, from the features' *.docs.ts (http/operation-docs.ts).
    // …and every operation's operationId, made from its route (http/operation-ids.ts).
    transformObject: (({ openapiObject }: { openapiObject: Record<string, unknown> }) =>
      applyOperationIds(applyOperationDocs(openapiObject, operationDocs))) as never,
    // Definitions of recursive schemas (TypeBox's Cyclic: SegmentFilter, AutomationStep…) become components named by
    // their $id, which the SDK's generated types name too (the default names them def-0, def-1…).
    refResolver: {
      buildLocalReference: (json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  // The app's routes as they are now (HEAD twins of GET routes are made again by this instance). Nothing validates
  // or serialises here: the document is all that is asked of them.
  const gets = new Set(routes.filter((r) => [r.method].flat().includes('GET')).map((r) => r.url));
  const noop = () => null;
  for (const r of routes) {
    if (r.url.startsWith('/docs') || r.url === '/openapi.json') continue;
    const methods = [r.method].flat().filter((m) => !(m === 'HEAD' && gets.has(r.url)));
    if (!methods.length) continue;
    docs.route({
      method: methods,
      url: r.url,
      schema: r.schema,
      config: r.config,
      handler: noop,
      validatorCompiler: () => () => true,
      serializerCompiler: () => (data) => JSON.stringify(data),
    });
  }
  await docs.ready();
  return docs;
}
