import { Readable } from 'node:stream';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { Type } from 'typebox';
import { DomainError } from '../../errors/errors.js';
import { ActivityQuery } from '../../outbox/index.js';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { ContactsService } from './contacts.service.js';
import { validatorCompiler } from '../../http/validation.js';
import {
  ActivityEventSchema,
  ContactCountQuery,
  ContactCountSchema,
  ContactExportQuery,
  ContactListQuery,
  ContactParams,
  ContactSchema,
  ImportJobSchema,
  ImportListQuery,
  ImportParams,
  ImportQuery,
  TagListQuery,
  TagListSchema,
  UpdateContactBody,
  UpsertContactBody,
  type ImportFormat,
} from './contacts.schemas.js';

const IMPORT_TYPES: Record<string, ImportFormat> = {
  'text/csv': 'CSV',
  'application/x-ndjson': 'NDJSON',
  'application/ndjson': 'NDJSON',
};

const unsupportedImport = () =>
  new DomainError(
    'unsupported_media_type',
    'an import body must be CSV (Content-Type: text/csv) or NDJSON (application/x-ndjson or application/ndjson), in UTF-8',
  );

/** The import format named by a Content-Type header, or undefined. Only UTF-8 (the default) is read. */
function importFormat(contentType: string | undefined): ImportFormat | undefined {
  if (!contentType) return undefined;
  const [type, ...params] = contentType.split(';').map((s) => s.trim().toLowerCase());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return undefined;
  return IMPORT_TYPES[type!];
}

/** The import body is a stream, described in the OpenAPI document but not validated as JSON. */
const streamBodyCompiler: FastifySchemaCompiler<object> = (route) =>
  route.httpPart === 'body' ? () => true : (validatorCompiler(route) as ReturnType<FastifySchemaCompiler<object>>);

export async function contactsRoutes(app: V1, { contacts }: { contacts: ContactsService }): Promise<void> {
  app.post(
    '/contacts',
    {
      schema: {
        body: UpsertContactBody,
        response: { 200: ContactSchema, 201: ContactSchema },
      },
      config: { scope: 'write:contacts', errors: ['invalid_reference'] },
    },
    async (req, reply) => {
      const { contact, created } = await contacts.upsert(req.auth.workspaceId, req.body);
      if (created) reply.code(201).header('location', `/v1/contacts/${contact.id}`);
      return reply.send(contact);
    },
  );

  app.get(
    '/contacts',
    {
      schema: { querystring: ContactListQuery, response: { 200: ListOf(ContactSchema) } },
      config: { scope: 'read:contacts', errors: ['invalid_reference'] },
    },
    async (req) => {
      const { limit, cursor, ...filter } = req.query;
      return paginate({ limit, cursor }, (w) => contacts.list(req.auth.workspaceId, { ...filter, ...w }));
    },
  );

  app.get(
    '/contacts/count',
    {
      schema: { querystring: ContactCountQuery, response: { 200: ContactCountSchema } },
      config: { scope: 'read:contacts', errors: ['invalid_reference'] },
    },
    (req) => contacts.count(req.auth.workspaceId, req.query),
  );

  app.get(
    '/tags',
    {
      schema: { querystring: TagListQuery, response: { 200: TagListSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => contacts.tags(req.auth.workspaceId, req.query.limit ?? 100),
  );

  app.get(
    '/contacts/export',
    {
      schema: {
        querystring: ContactExportQuery,
        produces: ['text/csv'],
        response: { 200: { description: 'the CSV file', content: { 'text/csv': { schema: Type.String() } } } },
      },
      config: { scope: 'read:contacts' },
    },
    async (req, reply) => {
      const { filename, chunks } = await contacts.exportCsv(req.auth.workspaceId, req.query.segmentId);
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${filename}"`)
          // A stream, which Fastify writes as it is read (the response schema documents it; nothing serialises it).
          .header('cache-control', 'no-store')
          .send(Readable.from(chunks) as never)
      );
    },
  );

  app.get(
    '/contacts/:contactId',
    {
      schema: { params: ContactParams, response: { 200: ContactSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => contacts.get(req.auth.workspaceId, req.params.contactId),
  );

  app.get(
    '/contacts/:contactId/activity',
    {
      schema: {
        params: ContactParams,
        querystring: ActivityQuery,
        response: { 200: ListOf(ActivityEventSchema) },
      },
      config: { scope: 'read:contacts' },
    },
    (req) => {
      const { limit, cursor, type } = req.query;
      return paginate({ limit, cursor }, (w) =>
        contacts.activity(req.auth.workspaceId, req.params.contactId, { type, ...w }),
      );
    },
  );

  app.put(
    '/contacts/:contactId',
    {
      schema: { params: ContactParams, body: UpdateContactBody, response: { 200: ContactSchema } },
      config: { scope: 'write:contacts', errors: ['invalid_reference', 'contact_exists'] },
    },
    (req) => contacts.update(req.auth.workspaceId, req.params.contactId, req.body),
  );

  app.delete(
    '/contacts/:contactId',
    {
      schema: { params: ContactParams, response: { 204: Type.Null() } },
      config: { scope: 'write:contacts', errors: ['resource_in_use'] },
    },
    async (req, reply) => {
      await contacts.remove(req.auth.workspaceId, req.params.contactId);
      return reply.code(204).send(null);
    },
  );

  // Imports, in a plugin of their own so that only they read CSV and NDJSON: the body reaches the handler as
  // the raw request stream (nothing buffers it), and the service counts its bytes against its own limit.
  await app.register(async (imports: V1) => {
    imports.removeAllContentTypeParsers();
    const passThrough = (req: FastifyRequest, payload: Readable, done: (err: Error | null, body?: unknown) => void) => {
      // The Idempotency-Key hook hashes the body as JSON, which a stream cannot be without buffering it: it
      // stands for itself by type and declared length (a retry of the same upload replays the first answer).
      const described = {
        stream: req.headers['content-type'] ?? null,
        contentLength: req.headers['content-length'] ?? null,
      };
      Object.defineProperty(payload, 'toJSON', { value: () => described, enumerable: false });
      done(null, payload);
    };
    imports.addContentTypeParser(Object.keys(IMPORT_TYPES), passThrough);
    // Anything else also reaches the handler, which answers 415 naming the accepted types.
    imports.addContentTypeParser('*', passThrough);

    imports.post(
      '/contacts/imports',
      {
        schema: {
          consumes: Object.keys(IMPORT_TYPES),
          body: Type.String({ description: 'the file: CSV (text/csv) or NDJSON (application/x-ndjson), UTF-8' }),
          querystring: ImportQuery,
          response: { 201: ImportJobSchema },
        },
        validatorCompiler: streamBodyCompiler,
        config: { scope: 'write:contacts', errors: ['unsupported_media_type', 'payload_too_large'] },
      },
      async (req, reply) => {
        const format = importFormat(req.headers['content-type']);
        const body = req.body as unknown;
        if (!format || !body || typeof (body as Readable).pipe !== 'function') throw unsupportedImport();
        const declared =
          req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
        // A request answered before its body was read whole (422 header, 413, malformed CSV) closes its
        // connection rather than leave the rest of the upload in it.
        const closeIfUnread = () => {
          if (!(body as Readable).readableEnded) reply.header('connection', 'close');
        };
        let job;
        try {
          job = await contacts.importContacts(
            req.auth.workspaceId,
            format,
            body as Readable,
            Number.isFinite(declared) ? declared : undefined,
            {
              columns: req.query.columns,
              // An import that fails on our side is answered with its FAILED job; the cause is in the log.
              onError: (err) =>
                req.log.error({ err, importWorkspace: req.auth.workspaceId }, 'import failed unexpectedly'),
            },
          );
        } catch (err) {
          closeIfUnread();
          throw err;
        }
        closeIfUnread();
        return reply.code(201).header('location', `/v1/contacts/imports/${job.id}`).send(job);
      },
    );

    imports.get(
      '/contacts/imports',
      {
        schema: { querystring: ImportListQuery, response: { 200: ListOf(ImportJobSchema) } },
        config: { scope: 'read:contacts' },
      },
      async (req) => {
        return paginate(req.query, (w) => contacts.listImports(req.auth.workspaceId, { ...w }));
      },
    );

    imports.get(
      '/contacts/imports/:importId',
      {
        schema: { params: ImportParams, response: { 200: ImportJobSchema } },
        config: { scope: 'read:contacts' },
      },
      (req) => contacts.getImport(req.auth.workspaceId, req.params.importId),
    );
  });
}
