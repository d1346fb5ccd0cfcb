/**
 * @formcast/sdk: a typed client of the Formcast API (types generated from its OpenAPI document, see generated/openapi.d.ts).
 */
export { Formcast } from './client.js';
export { FormcastError } from './errors.js';
export { PageIterator, type Page } from './pagination.js';
export { parseRetryAfter, type CallArgs, type FormcastOptions, type RequestOptions } from './transport.js';
export { verifyWebhook, WebhookVerificationFailed, type HeadersLike, type WebhookEvent } from './webhooks.js';
export type * from './types.js';
