/**
 * Types derived from the generated OpenAPI declarations (generated/openapi.d.ts): the SDK's methods take and return exactly
 * what the API's document says, so nothing here is written by hand per resource.
 */
import type { components, paths } from './generated/openapi.js';

export type { components, paths };

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** The paths that have an operation for this method. */
export type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

/** The operation object of `M P`. */
export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

/** The JSON request body of `M P`. */
export type RequestBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B
      : never;

/** The query parameters of `M P`. */
export type QueryParams<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type SuccessJson<R> = {
  [S in keyof R]: S extends 200 | 201 | 202
    ? R[S] extends { content: { 'application/json': infer J } }
      ? J
      : never
    : never;
}[keyof R];

/** What a successful `M P` returns (`void` for a 204). */
export type ResponseBody<P extends keyof paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: infer R } ? ([SuccessJson<R>] extends [never] ? void : SuccessJson<R>) : never;

/** The paths whose GET is a cursor-paginated list (`{ data, nextCursor }`). */
export type ListPaths = {
  [P in PathsWith<'get'>]: ResponseBody<P, 'get'> extends { data: unknown[]; nextCursor: string | null } ? P : never;
}[PathsWith<'get'>];

/** One item of the list at `P`. */
export type ListItem<P extends ListPaths> = ResponseBody<P, 'get'> extends { data: (infer T)[] } ? T : never;

/** A list's filters, without the cursor (the iterator follows it). */
export type ListQuery<P extends ListPaths> = Omit<QueryParams<P, 'get'>, 'cursor'>;

/** An RFC 9457 problem, as every error of the API is. */
export type Problem = components['schemas']['Problem'];

// Names for the resources most code handles, straight from the document.
export type Workspace = ResponseBody<'/v1/workspace', 'get'>;
export type ApiKey = ListItem<'/v1/api-keys'>;
export type CreatedApiKey = ResponseBody<'/v1/api-keys', 'post'>;
export type Form = ResponseBody<'/v1/forms/{formId}', 'get'>;
export type Submission = ListItem<'/v1/forms/{formId}/submissions'>;
export type Contact = ResponseBody<'/v1/contacts/{contactId}', 'get'>;
export type ContactImport = ResponseBody<'/v1/contacts/imports/{importId}', 'get'>;
export type Topic = ResponseBody<'/v1/topics/{topicId}', 'get'>;
export type Segment = ResponseBody<'/v1/segments/{segmentId}', 'get'>;
export type Template = ResponseBody<'/v1/templates/{templateId}', 'get'>;
export type Broadcast = ResponseBody<'/v1/broadcasts/{broadcastId}', 'get'>;
export type Domain = ResponseBody<'/v1/domains/{domainId}', 'get'>;
export type Suppression = ResponseBody<'/v1/suppressions/{email}', 'get'>;
export type Email = ResponseBody<'/v1/emails/{emailId}', 'get'>;
export type EmailInput = RequestBody<'/v1/emails', 'post'>;
export type Event = ListItem<'/v1/events'>;
export type EventType = NonNullable<QueryParams<'/v1/events', 'get'>['type']>;
export type Webhook = ResponseBody<'/v1/webhooks/{webhookId}', 'get'>;
export type WebhookDelivery = ResponseBody<'/v1/webhooks/{webhookId}/deliveries/{deliveryId}', 'get'>;
export type Automation = ResponseBody<'/v1/automations/{automationId}', 'get'>;
export type User = ResponseBody<'/v1/users/{userId}', 'get'>;
