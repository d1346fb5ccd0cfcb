import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/connection.js';
import { DomainError, summarize, unavailable, type FieldError } from '../errors/errors.js';
import { toFieldErrors } from './validation.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  errors?: FieldError[];
  requestId: string;
  [extra: string]: unknown;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  const body: Problem = {
    type: `/docs/errors#${err.code}`,
    title: err.title,
    status: err.status,
    code: err.code,
    detail: err.message,
    ...(err.errors ? { errors: err.errors } : {}),
    ...err.extra,
    requestId: request.id,
  };
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type('application/problem+json').serializer(JSON.stringify).send(body);
}

/** Maps anything thrown into a problem: domain errors as they are, Fastify's own errors to catalogue codes. */
export function toDomainError(err: FastifyError | Error): DomainError {
  if (err instanceof DomainError) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    const errors = toFieldErrors(fe.validation as never, fe.validationContext);
    return new DomainError('validation_failed', summarize(errors), { errors });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError(
        'unsupported_media_type',
        'the request body must be JSON (Content-Type: application/json)',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('payload_too_large', 'the request body is larger than this endpoint accepts');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('invalid_json', 'the request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('bad_request', 'the Content-Length header does not match the body');
  }
  if (fe.statusCode === 400 && err instanceof SyntaxError) {
    return new DomainError('invalid_json', 'the request body is not valid JSON');
  }
  if (isDatabaseUnavailable(err)) {
    return unavailable();
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Any other client error raised by Fastify or a plugin keeps its status, with a generic code.
    return new DomainError('bad_request', fe.message, { status: fe.statusCode });
  }
  return new DomainError('internal_error', 'an unexpected error occurred; it has been logged with the request id');
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const problem = toDomainError(err);
    if (problem.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: problem.code, status: problem.status }, 'request rejected');
    return sendProblem(request, reply, problem);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      request,
      reply,
      new DomainError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}
