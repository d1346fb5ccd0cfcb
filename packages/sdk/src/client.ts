import { Transport, type FormcastOptions, type RequestOptions } from './transport.js';
import type { ListPaths, ListQuery, PathsWith, QueryParams, RequestBody } from './types.js';
import { verifyWebhook } from './webhooks.js';

type O = RequestOptions | undefined;

/** create / list / get / update / delete of a collection and its item path, typed by the document. */
function crud<
  C extends ListPaths & PathsWith<'get'> & PathsWith<'post'>,
  I extends PathsWith<'get'> & PathsWith<'put'> & PathsWith<'delete'>,
>(t: Transport, collection: C, item: I) {
  return {
    create: (body: RequestBody<C, 'post'>, o?: O) => t.call('post', collection, { body }, o),
    /** Every item, newest first, following the cursor: `for await (const x of ….list())`. */
    list: (query?: ListQuery<C>, o?: O) => t.list(collection, [], query, o),
    get: (id: string, o?: O) => t.call('get', item, { path: [id] }, o),
    update: (id: string, body: RequestBody<I, 'put'>, o?: O) => t.call('put', item, { path: [id], body }, o),
    delete: (id: string, o?: O) => t.call('delete', item, { path: [id] }, o),
  };
}

/**
 * The Formcast API client. Each resource of the API is a property (`fc.contacts.create(…)`), each method one
 * operation of GET /openapi.json with its types. Errors are thrown as FormcastError.
 *
 * ```js
 * const fc = new Formcast({ apiKey: process.env.FORMCAST_API_KEY, baseUrl: 'http://127.0.0.1:3000' });
 * for await (const contact of fc.contacts.list({ status: 'SUBSCRIBED' })) console.log(contact.email);
 * ```
 */
export class Formcast {
  /** Verifies a webhook request and returns its event (see verifyWebhook). */
  static readonly verifyWebhook = verifyWebhook;

  readonly transport: Transport;
  /** The workspace of the key, its settings, and its sender health. */
  readonly workspace;
  readonly apiKeys;
  readonly forms;
  /** Submissions to a form (headless forms: submit as the hosted page would). */
  readonly submissions;
  readonly contacts;
  readonly topics;
  readonly segments;
  readonly templates;
  readonly broadcasts;
  readonly domains;
  readonly suppressions;
  /** Transactional email (docs/emails.md): `send` a receipt or a password reset, then follow its recipients. */
  readonly emails;
  readonly events;
  readonly webhooks;
  readonly automations;
  /** Messages the inbound listener could not read (bounces that are not DSNs, …). */
  readonly inbound;
  readonly users;
  readonly invitations;
  /** Who is calling, and (for a console session) its browser sessions. */
  readonly session;
  readonly stats;

  constructor(options: FormcastOptions = {}) {
    const t = (this.transport = new Transport(options));

    this.workspace = {
      get: (o?: O) => t.call('get', '/v1/workspace', {}, o),
      update: (body: RequestBody<'/v1/workspace', 'put'>, o?: O) => t.call('put', '/v1/workspace', { body }, o),
      health: (o?: O) => t.call('get', '/v1/workspace/health', {}, o),
    };

    this.apiKeys = {
      /** The answer carries the key itself, shown this once. */
      create: (body: RequestBody<'/v1/api-keys', 'post'>, o?: O) => t.call('post', '/v1/api-keys', { body }, o),
      list: (query?: ListQuery<'/v1/api-keys'>, o?: O) => t.list('/v1/api-keys', [], query, o),
      /** Revokes the key at once. */
      delete: (keyId: string, o?: O) => t.call('delete', '/v1/api-keys/{keyId}', { path: [keyId] }, o),
    };

    this.forms = {
      ...crud(t, '/v1/forms', '/v1/forms/{formId}'),
      getHtml: (formId: string, o?: O) => t.call('get', '/v1/forms/{formId}/html', { path: [formId] }, o),
      deployHtml: (formId: string, body: RequestBody<'/v1/forms/{formId}/html', 'put'>, o?: O) =>
        t.call('put', '/v1/forms/{formId}/html', { path: [formId], body }, o),
      publish: (formId: string, o?: O) => t.call('post', '/v1/forms/{formId}/publish', { path: [formId] }, o),
      /** A new DRAFT version of a PUBLISHED form. */
      createVersion: (formId: string, o?: O) => t.call('post', '/v1/forms/{formId}/versions', { path: [formId] }, o),
      listVersions: (formId: string, o?: O) => t.call('get', '/v1/forms/{formId}/versions', { path: [formId] }, o),
    };

    this.submissions = {
      create: (formId: string, body: RequestBody<'/v1/forms/{formId}/submissions', 'post'>, o?: O) =>
        t.call('post', '/v1/forms/{formId}/submissions', { path: [formId], body }, o),
      list: (formId: string, query?: ListQuery<'/v1/forms/{formId}/submissions'>, o?: O) =>
        t.list('/v1/forms/{formId}/submissions', [formId], query, o),
    };

    this.contacts = {
      ...crud(t, '/v1/contacts', '/v1/contacts/{contactId}'),
      /** Creates the contact, or updates the one with this email. */
      create: (body: RequestBody<'/v1/contacts', 'post'>, o?: O) => t.call('post', '/v1/contacts', { body }, o),
      activity: (contactId: string, query?: ListQuery<'/v1/contacts/{contactId}/activity'>, o?: O) =>
        t.list('/v1/contacts/{contactId}/activity', [contactId], query, o),
      /** The contacts (of a segment, or all) as CSV text. */
      export: (query?: QueryParams<'/v1/contacts/export', 'get'>, o?: O) =>
        t.call('get', '/v1/contacts/export', { query, as: 'text' }, o) as unknown as Promise<string>,
      imports: {
        /** Starts an import of CSV (`text/csv`) or NDJSON (`application/x-ndjson`) text; poll `get` for its progress. */
        create: (
          data: string | Uint8Array | Blob,
          contentType: 'text/csv' | 'application/x-ndjson' = 'text/csv',
          o?: O,
        ) => t.call('post', '/v1/contacts/imports', { raw: { body: data, contentType } }, o),
        list: (query?: ListQuery<'/v1/contacts/imports'>, o?: O) => t.list('/v1/contacts/imports', [], query, o),
        get: (importId: string, o?: O) => t.call('get', '/v1/contacts/imports/{importId}', { path: [importId] }, o),
      },
      bulk: {
        /** Starts a bulk action (tag, untag, subscribe, unsubscribe, delete) on `ids` or a `filter`: `{ jobId, matched }`. */
        create: (body: RequestBody<'/v1/contacts/bulk', 'post'>, o?: O) =>
          t.call('post', '/v1/contacts/bulk', { body }, o),
        /** A bulk action's progress: status, matched, processed, failed. */
        get: (jobId: string, o?: O) => t.call('get', '/v1/contacts/bulk/{jobId}', { path: [jobId] }, o),
      },
      /** The workspace's tags with how many contacts have each, most used first. */
      tags: (query?: QueryParams<'/v1/tags', 'get'>, o?: O) => t.call('get', '/v1/tags', { query }, o),
    };

    this.topics = crud(t, '/v1/topics', '/v1/topics/{topicId}');

    this.segments = {
      ...crud(t, '/v1/segments', '/v1/segments/{segmentId}'),
      /** Counts and samples the contacts a filter matches, without saving it. */
      preview: (body: RequestBody<'/v1/segments/preview', 'post'>, o?: O) =>
        t.call('post', '/v1/segments/preview', { body }, o),
      contacts: (segmentId: string, query?: ListQuery<'/v1/segments/{segmentId}/contacts'>, o?: O) =>
        t.list('/v1/segments/{segmentId}/contacts', [segmentId], query, o),
      count: (segmentId: string, o?: O) => t.call('get', '/v1/segments/{segmentId}/count', { path: [segmentId] }, o),
    };

    this.templates = crud(t, '/v1/templates', '/v1/templates/{templateId}');

    const broadcastAction =
      <
        P extends
          | '/v1/broadcasts/{broadcastId}/send'
          | '/v1/broadcasts/{broadcastId}/cancel'
          | '/v1/broadcasts/{broadcastId}/pause'
          | '/v1/broadcasts/{broadcastId}/resume'
          | '/v1/broadcasts/{broadcastId}/preflight',
      >(
        path: P,
      ) =>
      (broadcastId: string, o?: O) =>
        t.call('post', path, { path: [broadcastId] }, o);
    this.broadcasts = {
      ...crud(t, '/v1/broadcasts', '/v1/broadcasts/{broadcastId}'),
      /** DRAFT or SCHEDULED → SENDING. */
      send: broadcastAction('/v1/broadcasts/{broadcastId}/send'),
      /** SCHEDULED → DRAFT, SENDING or PAUSED → CANCELED. */
      cancel: broadcastAction('/v1/broadcasts/{broadcastId}/cancel'),
      pause: broadcastAction('/v1/broadcasts/{broadcastId}/pause'),
      resume: broadcastAction('/v1/broadcasts/{broadcastId}/resume'),
      preflight: broadcastAction('/v1/broadcasts/{broadcastId}/preflight'),
      /** Sends the broadcast to up to five test addresses. */
      test: (broadcastId: string, body: RequestBody<'/v1/broadcasts/{broadcastId}/test', 'post'>, o?: O) =>
        t.call('post', '/v1/broadcasts/{broadcastId}/test', { path: [broadcastId], body }, o),
      /**
       * A SENT broadcast → a new DRAFT with its content, for its recipients without a human open (`NON_OPENERS`) or
       * click (`NON_CLICKERS`) now; `resendOf` on it says where it came from.
       */
      resend: (broadcastId: string, body: RequestBody<'/v1/broadcasts/{broadcastId}/resend', 'post'>, o?: O) =>
        t.call('post', '/v1/broadcasts/{broadcastId}/resend', { path: [broadcastId], body }, o),
      preview: (broadcastId: string, body: RequestBody<'/v1/broadcasts/{broadcastId}/preview', 'post'>, o?: O) =>
        t.call('post', '/v1/broadcasts/{broadcastId}/preview', { path: [broadcastId], body }, o),
      deliveries: (broadcastId: string, query?: ListQuery<'/v1/broadcasts/{broadcastId}/deliveries'>, o?: O) =>
        t.list('/v1/broadcasts/{broadcastId}/deliveries', [broadcastId], query, o),
      audience: (broadcastId: string, query?: QueryParams<'/v1/broadcasts/{broadcastId}/audience', 'get'>, o?: O) =>
        t.call('get', '/v1/broadcasts/{broadcastId}/audience', { path: [broadcastId], query }, o),
      links: (broadcastId: string, o?: O) =>
        t.call('get', '/v1/broadcasts/{broadcastId}/links', { path: [broadcastId] }, o),
      timeline: (broadcastId: string, query?: QueryParams<'/v1/broadcasts/{broadcastId}/timeline', 'get'>, o?: O) =>
        t.call('get', '/v1/broadcasts/{broadcastId}/timeline', { path: [broadcastId], query }, o),
      /** An A/B broadcast's winner, picked before the wait ends: `{ variant: 'b' }` (docs/ab-tests.md). */
      pickWinner: (broadcastId: string, body: RequestBody<'/v1/broadcasts/{broadcastId}/ab/winner', 'post'>, o?: O) =>
        t.call('post', '/v1/broadcasts/{broadcastId}/ab/winner', { path: [broadcastId], body }, o),
    };

    this.domains = {
      create: (body: RequestBody<'/v1/domains', 'post'>, o?: O) => t.call('post', '/v1/domains', { body }, o),
      list: (query?: ListQuery<'/v1/domains'>, o?: O) => t.list('/v1/domains', [], query, o),
      get: (domainId: string, o?: O) => t.call('get', '/v1/domains/{domainId}', { path: [domainId] }, o),
      delete: (domainId: string, o?: O) => t.call('delete', '/v1/domains/{domainId}', { path: [domainId] }, o),
      /** Looks the DNS records up: VERIFIED or FAILED, with a result per record. */
      verify: (domainId: string, o?: O) => t.call('post', '/v1/domains/{domainId}/verify', { path: [domainId] }, o),
    };

    this.suppressions = {
      create: (body: RequestBody<'/v1/suppressions', 'post'>, o?: O) => t.call('post', '/v1/suppressions', { body }, o),
      list: (query?: ListQuery<'/v1/suppressions'>, o?: O) => t.list('/v1/suppressions', [], query, o),
      get: (email: string, o?: O) => t.call('get', '/v1/suppressions/{email}', { path: [email] }, o),
      /** Lifts the suppression of the address. */
      delete: (email: string, o?: O) => t.call('delete', '/v1/suppressions/{email}', { path: [email] }, o),
    };

    this.emails = {
      /**
       * Queues one email (202 `{ id }`): to/cc/bcc, html and text or a template (id or alias) with `data`, headers,
       * tags, attachments (base64), tracking. A retry of this call sends it once (its Idempotency-Key).
       */
      send: (body: RequestBody<'/v1/emails', 'post'>, o?: O) => t.call('post', '/v1/emails', { body }, o),
      get: (emailId: string, o?: O) => t.call('get', '/v1/emails/{emailId}', { path: [emailId] }, o),
      list: (query?: ListQuery<'/v1/emails'>, o?: O) => t.list('/v1/emails', [], query, o),
      /** The email's events, newest first (at most 500), each naming its recipient as `data.email`. */
      events: (emailId: string, o?: O) => t.call('get', '/v1/emails/{emailId}/events', { path: [emailId] }, o),
    };

    this.events = {
      list: (query?: ListQuery<'/v1/events'>, o?: O) => t.list('/v1/events', [], query, o),
      /** Records a custom event of a contact (what `event` automation triggers react to). */
      track: (body: RequestBody<'/v1/events/track', 'post'>, o?: O) => t.call('post', '/v1/events/track', { body }, o),
    };

    this.webhooks = {
      ...crud(t, '/v1/webhooks', '/v1/webhooks/{webhookId}'),
      rotateSecret: (webhookId: string, o?: O) =>
        t.call('post', '/v1/webhooks/{webhookId}/rotate-secret', { path: [webhookId] }, o),
      /** Sends a `webhook.test` event to the endpoint. */
      test: (webhookId: string, o?: O) => t.call('post', '/v1/webhooks/{webhookId}/test', { path: [webhookId] }, o),
      deliveries: (webhookId: string, query?: ListQuery<'/v1/webhooks/{webhookId}/deliveries'>, o?: O) =>
        t.list('/v1/webhooks/{webhookId}/deliveries', [webhookId], query, o),
      getDelivery: (webhookId: string, deliveryId: string, o?: O) =>
        t.call('get', '/v1/webhooks/{webhookId}/deliveries/{deliveryId}', { path: [webhookId, deliveryId] }, o),
      retryDelivery: (webhookId: string, deliveryId: string, o?: O) =>
        t.call('post', '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry', { path: [webhookId, deliveryId] }, o),
      /** Verifies a webhook request and returns its event (the same as the verifyWebhook export). */
      verify: verifyWebhook,
    };

    this.automations = {
      ...crud(t, '/v1/automations', '/v1/automations/{automationId}'),
      /** DRAFT or PAUSED → ACTIVE. */
      activate: (automationId: string, o?: O) =>
        t.call('post', '/v1/automations/{automationId}/activate', { path: [automationId] }, o),
      pause: (automationId: string, o?: O) =>
        t.call('post', '/v1/automations/{automationId}/pause', { path: [automationId] }, o),
      /** Starts a run for a contact (an `api` trigger). */
      trigger: (automationId: string, body: RequestBody<'/v1/automations/{automationId}/trigger', 'post'>, o?: O) =>
        t.call('post', '/v1/automations/{automationId}/trigger', { path: [automationId], body }, o),
      /** A dry run for a contact: the steps it would take, with no side effects. */
      simulate: (automationId: string, body: RequestBody<'/v1/automations/{automationId}/simulate', 'post'>, o?: O) =>
        t.call('post', '/v1/automations/{automationId}/simulate', { path: [automationId], body }, o),
      runs: (automationId: string, query?: ListQuery<'/v1/automations/{automationId}/runs'>, o?: O) =>
        t.list('/v1/automations/{automationId}/runs', [automationId], query, o),
      stats: (automationId: string, o?: O) =>
        t.call('get', '/v1/automations/{automationId}/stats', { path: [automationId] }, o),
    };

    this.inbound = {
      list: (query?: ListQuery<'/v1/inbound'>, o?: O) => t.list('/v1/inbound', [], query, o),
    };

    this.users = {
      list: (query?: ListQuery<'/v1/users'>, o?: O) => t.list('/v1/users', [], query, o),
      get: (userId: string, o?: O) => t.call('get', '/v1/users/{userId}', { path: [userId] }, o),
      update: (userId: string, body: RequestBody<'/v1/users/{userId}', 'put'>, o?: O) =>
        t.call('put', '/v1/users/{userId}', { path: [userId], body }, o),
      delete: (userId: string, o?: O) => t.call('delete', '/v1/users/{userId}', { path: [userId] }, o),
    };

    this.invitations = {
      create: (body: RequestBody<'/v1/invitations', 'post'>, o?: O) => t.call('post', '/v1/invitations', { body }, o),
      list: (query?: ListQuery<'/v1/invitations'>, o?: O) => t.list('/v1/invitations', [], query, o),
      delete: (invitationId: string, o?: O) =>
        t.call('delete', '/v1/invitations/{invitationId}', { path: [invitationId] }, o),
    };

    this.session = {
      get: (o?: O) => t.call('get', '/v1/session', {}, o),
      listSessions: (o?: O) => t.call('get', '/v1/session/sessions', {}, o),
      deleteSession: (sessionId: string, o?: O) =>
        t.call('delete', '/v1/session/sessions/{sessionId}', { path: [sessionId] }, o),
    };

    this.stats = {
      /** New contacts per hour over the last days. */
      contacts: (query?: QueryParams<'/v1/stats/contacts', 'get'>, o?: O) =>
        t.call('get', '/v1/stats/contacts', { query }, o),
    };
  }

  /**
   * Any operation of the API by method and path, for what the resources do not cover:
   * `fc.request('get', '/v1/topics/{topicId}', { path: [id] })`.
   */
  request: Transport['call'] = (method, path, args, opts) => this.transport.call(method, path, args, opts);
}
