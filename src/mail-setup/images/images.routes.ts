import crypto from 'node:crypto';
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { Type } from 'typebox';
import { DomainError, validationFailed } from '../../errors/errors.js';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import { validatorCompiler } from '../../http/validation.js';
import { sendPage } from '../../pages/layout.js';
import { ImageParams, ImageSchema, PublicImageParams, UploadImageBody } from './images.schemas.js';
import { MAX_UPLOAD_BYTES, tooLarge, type ImagesService, type Upload } from './images.service.js';

/**
 * What a multipart request may carry beside the file: its boundaries and part headers, and a few small fields (a
 * browser's form may add some). A request declaring more is refused before any of it is read.
 */
const MULTIPART_ALLOWANCE = 64 * 1024;
const LIMITS = {
  fileSize: MAX_UPLOAD_BYTES,
  files: 1,
  fields: 10,
  fieldSize: 1024,
  parts: 12,
  headerPairs: 50,
};

const notMultipart = () =>
  new DomainError(
    'unsupported_media_type',
    'an image is uploaded as multipart/form-data, the file in the field "file" (curl -F file=@photo.jpg)',
  );

/** The upload is read as a stream by the handler (described in the OpenAPI document, not validated as JSON). */
const streamBodyCompiler: FastifySchemaCompiler<object> = (route) =>
  route.httpPart === 'body' ? () => true : (validatorCompiler(route) as ReturnType<FastifySchemaCompiler<object>>);

/** A refusal from the multipart parser (@fastify/multipart, busboy) as the problem it is. */
function multipartProblem(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  switch ((err as { code?: string }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge();
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new DomainError(
        'payload_too_large',
        `an upload holds one file and at most ${LIMITS.fields} small fields (${LIMITS.fieldSize} bytes each)`,
      );
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return notMultipart();
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return validationFailed([{ path: '/', message: (err as Error).message }]);
  }
  // busboy's own: a missing boundary, a part cut short, a malformed part header, a closed connection. The body is
  // multipart (otherwise 415 above) but not one that holds a file: 422 at /file, as a missing file (contract §3).
  return validationFailed([{ path: '/file', message: `cannot be read: ${(err as Error).message}` }]);
}

/** The file of each upload request, read by the route's preHandler for its handler. */
const uploads = new WeakMap<FastifyRequest, Upload>();

/** The file of an upload request, read whole but never past the limit (the parser stops counting at 5 MiB). */
async function readUpload(req: FastifyRequest): Promise<Upload> {
  if (!req.isMultipart()) throw notMultipart();
  try {
    const part: MultipartFile | undefined = await req.file();
    if (!part)
      throw validationFailed([{ path: '/file', message: 'is required: the image, in the multipart field "file"' }]);
    if (part.fieldname !== 'file') {
      part.file.resume();
      throw validationFailed([
        { path: '/file', message: `is required: the image goes in the field "file", not "${part.fieldname}"` },
      ]);
    }
    return { data: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
  } catch (err) {
    throw multipartProblem(err);
  }
}

/**
 * The images API (docs/images.md): upload, list, read and delete, with the broadcasts scopes (images are email
 * content). In a plugin of its own so that only the upload reads multipart bodies.
 */
export async function imagesRoutes(app: V1, { images }: { images: ImagesService }): Promise<void> {
  await app.register(multipart, { limits: LIMITS, throwFileSizeLimit: true });
  // Any other body reaches the upload route, which answers 415 saying what an upload is (not "must be JSON").
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.post(
    '/images',
    {
      schema: {
        consumes: ['multipart/form-data'],
        body: UploadImageBody,
        response: { 201: ImageSchema },
      },
      validatorCompiler: streamBodyCompiler,
      // Runs before the Idempotency-Key hook (a preHandler appended after this one, http/idempotency.ts), which hashes
      // req.body: the file is read here, after authentication and the rate limit, and the request stands for itself by
      // the SHA-256 of the file's bytes and its name (another file with the same key: 422 idempotency_key_reused).
      preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
        const declared = Number(req.headers['content-length']);
        try {
          if (declared > MAX_UPLOAD_BYTES + MULTIPART_ALLOWANCE) throw tooLarge(declared);
          const upload = await readUpload(req);
          uploads.set(req, upload);
          req.body = {
            file: {
              sha256: crypto.createHash('sha256').update(upload.data).digest('hex'),
              name: upload.filename ?? null,
            },
          };
        } catch (err) {
          // Refused before the body was read whole: the connection is closed rather than left with the rest in it.
          if (!req.raw.readableEnded) reply.header('connection', 'close');
          throw err;
        }
      },
      config: {
        scope: 'write:broadcasts',
        errors: ['unsupported_media_type', 'payload_too_large'],
        errorsAt: [
          {
            code: 'unsupported_media_type',
            status: 422,
            detail:
              'the file is an SVG image (its name says PNG): most email clients do not show SVG (and an SVG can carry scripts); export it as PNG',
          },
        ],
      },
    },
    async (req, reply) => {
      // 201 with its address, also when the workspace had these bytes already (the stored image is answered).
      const image = await images.upload(req.auth.workspaceId, uploads.get(req)!);
      return reply.code(201).header('location', `/v1/images/${image.id}`).send(image);
    },
  );

  app.get(
    '/images',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(ImageSchema) } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => paginate(req.query, (w) => images.list(req.auth.workspaceId, w.limit, w.beforeId)),
  );

  app.get(
    '/images/:imageId',
    {
      schema: { params: ImageParams, response: { 200: ImageSchema } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => images.get(req.auth.workspaceId, req.params.imageId),
  );

  app.delete(
    '/images/:imageId',
    {
      schema: { params: ImageParams, response: { 204: Type.Null() } },
      config: { scope: 'write:broadcasts' },
    },
    async (req, reply) => {
      await images.remove(req.auth.workspaceId, req.params.imageId);
      return reply.code(204).send(null);
    },
  );
}

const NOT_FOUND_BODY = '<h1>Image not found</h1><p>This image does not exist, or it was deleted.</p>';

/**
 * `GET /i/{id}.{ext}`: an image's public address, what emails show (docs/images.md). No key: anyone with the address
 * sees the image, which is the point of it. Cached for good (an image never changes: a new upload is a new id); its
 * request log lines are off (warn level), as the tracking pixel's: every reader of an email fetches it.
 */
export async function imagePublicRoutes(app: FastifyInstance, { images }: { images: ImagesService }): Promise<void> {
  app.get<{ Params: { file: string } }>(
    '/i/:file',
    { logLevel: 'warn', schema: { security: [], params: PublicImageParams } },
    async (req, reply) => {
      const image = await images.publicFile(req.params.file);
      if (!image) return sendPage(reply, 404, 'Image not found', NOT_FOUND_BODY);
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .header('etag', image.etag);
      const match = req.headers['if-none-match'];
      if (match && (match === '*' || match.split(/\s*,\s*/).some((t) => t.replace(/^W\//, '') === image.etag)))
        return reply.code(304).send();
      return reply.type(image.contentType).send(image.data);
    },
  );
}
