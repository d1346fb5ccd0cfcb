/**
 * Every operation's `operationId` (what generated clients name their methods by), made here from the route, so that a
 * new route gets one without anyone writing it: stable (a function of the method and the path alone), camelCase, and
 * unique (test/api/openapi.docs.test.ts checks all three on the whole document).
 *
 * Under /v1 the path's words say it: `GET /v1/contacts` is `listContacts`, `GET /v1/forms/{formId}` `getForm`,
 * `PUT` `updateForm`, `DELETE` `deleteForm`, `POST /v1/forms` `createForm`, `POST /v1/forms/{formId}/versions`
 * `createFormVersion`, `GET /v1/broadcasts/{broadcastId}/deliveries` `listBroadcastDeliveries`; a last word that is an
 * action is the verb: `POST /v1/broadcasts/{broadcastId}/send` is `sendBroadcast`,
 * `POST /v1/webhooks/{webhookId}/rotate-secret` `rotateWebhookSecret`. A singular last word is read, not listed
 * (`GET /v1/broadcasts/{broadcastId}/timeline`: `getBroadcastTimeline`). The few the rule names badly, and the public
 * pages outside /v1, are named in NAMED.
 */

/** Last path words that are actions (a POST that does something to the resource before them). */
const ACTIONS = new Set([
  'activate',
  'cancel',
  'confirm',
  'discard',
  'duplicate',
  'pause',
  'preflight',
  'preview',
  'publish',
  'release',
  'render',
  'resend',
  'resume',
  'retry',
  'rotate-secret',
  'send',
  'simulate',
  'test',
  'track',
  'trigger',
  'verify',
]);

/** Words that end in s without being plural. */
const SINGULAR_S = new Set(['stats', 'status', 'settings', 'analytics', 'access', 'address']);

/** Operations the rule names badly, and every page and hook outside /v1: `METHOD /path` (as /openapi.json writes it). */
const NAMED: Record<string, string> = {
  'GET /v1/contacts/export': 'exportContacts',
  'GET /v1/inbound': 'listInboundMessages',
  'GET /v1/session/sessions': 'listSessions',
  'DELETE /v1/session/sessions/{sessionId}': 'revokeSession',
  'GET /v1/stats/contacts': 'getContactStats',
  'DELETE /v1/api-keys/{keyId}': 'revokeApiKey',
  'GET /v1/audit-log': 'listAuditLogEntries',
  'POST /v1/broadcasts/{broadcastId}/test': 'sendTestBroadcast',
  'POST /v1/broadcasts/{broadcastId}/preflight': 'checkBroadcast',
  'PUT /v1/forms/{formId}/html': 'deployFormHtml',
  'POST /v1/contacts': 'upsertContact',
  'POST /v1/emails': 'sendEmail',
  'POST /v1/contacts/bulk': 'startContactBulkAction',
  'GET /v1/contacts/bulk/{jobId}': 'getContactBulkAction',
  'POST /v1/webhooks/{webhookId}/test': 'sendTestWebhook',
  'GET /unsubscribe/{token}': 'getUnsubscribePage',
  'POST /unsubscribe/{token}': 'unsubscribe',
  'GET /app/login': 'getSignInPage',
  'POST /app/login': 'signIn',
  'POST /app/logout': 'signOut',
  'GET /app/invite/{token}': 'getInvitationPage',
  'POST /app/invite/{token}': 'acceptInvitation',
  'GET /app/reset': 'getPasswordResetPage',
  'POST /app/reset': 'requestPasswordReset',
  'GET /app/reset/{token}': 'getNewPasswordPage',
  'POST /app/reset/{token}': 'resetPassword',
  'GET /t/o/{*}': 'trackOpen',
  'GET /t/c/{*}': 'trackClick',
  'POST /hooks/ses': 'receiveSesNotification',
  'POST /hooks/postmark': 'receivePostmarkWebhook',
  'GET /assets/altcha/{name}': 'getProofOfWorkAsset',
  'GET /f/{slug}/challenge': 'getFormChallenge',
  'POST /f/{slug}/impression': 'recordFormImpression',
  'GET /f/{slug}': 'getHostedForm',
  'OPTIONS /f/{slug}': 'allowHostedFormSubmission',
  'POST /f/{slug}': 'submitHostedForm',
  'GET /f/{slug}/embed.js': 'getFormEmbedScript',
  'GET /assets/forms/timezone.js': 'getHostedFormTimezoneScript',
  'GET /f/{slug}/thanks': 'getFormThanksPage',
  'GET /confirm/{token}': 'getConfirmationPage',
  'POST /confirm/{token}': 'confirmSubscription',
  'PUT /v1/broadcasts/{broadcastId}/archive': 'setBroadcastArchive',
  'GET /w/preview': 'getWebVersionPreviewPage',
  'GET /w/{token}': 'getWebVersion',
  'GET /archive/{workspaceSlug}': 'getArchivePage',
  'GET /archive/{workspaceSlug}/feed.xml': 'getArchiveFeed',
  'GET /archive/{workspaceSlug}/{broadcastId}': 'getArchivedBroadcast',
};

const pascal = (word: string) =>
  word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

function singular(word: string): string {
  if (SINGULAR_S.has(word)) return word;
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/sses$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word) && !/ss$/.test(word)) return word.slice(0, -1);
  return word;
}
const isPlural = (word: string) => !SINGULAR_S.has(word) && singular(word) !== word;

/** The operationId of `method path` (the path as the OpenAPI document writes it: `{param}`). */
export function operationIdOf(method: string, path: string): string {
  const verb = method.toUpperCase();
  const named = NAMED[`${verb} ${path}`];
  if (named) return named;
  const v1 = path.startsWith('/v1/');
  const segments = path.split('/').filter((s) => s && !(v1 && s === 'v1'));
  const isParam = (s: string) => s.startsWith('{');
  const last = segments.at(-1) ?? '';
  let action: string | null = null;
  if (verb === 'POST' && !isParam(last) && ACTIONS.has(last) && segments.length > 1) {
    action = last;
    segments.pop();
  }
  // The words, each before a parameter (an item of its collection) singular; the last as the operation reads it.
  const words: string[] = [];
  segments.forEach((s, i) => {
    if (isParam(s)) return;
    const end = i === segments.length - 1;
    words.push(end ? s : singular(s));
  });
  const endsWithItem = isParam(segments.at(-1) ?? '');
  let prefix: string;
  if (action) {
    // `POST /v1/segments/preview`: previewSegment (what it acts on, one of them).
    const [first, ...rest] = action.split('-');
    prefix = first!;
    if (words.length && !endsWithItem) words[words.length - 1] = singular(words.at(-1)!);
    words.push(...rest);
  } else if (endsWithItem) {
    prefix =
      { GET: 'get', PUT: 'update', PATCH: 'update', DELETE: 'delete', POST: 'create' }[verb] ?? verb.toLowerCase();
  } else {
    const lastWord = words.at(-1) ?? '';
    switch (verb) {
      case 'GET':
        prefix = isPlural(lastWord) ? 'list' : 'get';
        break;
      case 'POST':
        prefix = 'create';
        if (words.length) words[words.length - 1] = singular(lastWord);
        break;
      case 'PUT':
      case 'PATCH':
        prefix = 'update';
        break;
      case 'DELETE':
        prefix = 'delete';
        break;
      default:
        prefix = verb.toLowerCase();
    }
  }
  // Outside /v1 without a name of its own: the method and the path's words (stable and unique all the same).
  return prefix + words.map(pascal).join('');
}

/**
 * Sets `operationId` on every operation of the document that has none (in place), and makes the set unique: a
 * clash (two routes the rule names alike) gets the method and path's parameters appended, deterministically.
 */
export function applyOperationIds<T extends Record<string, unknown>>(document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const seen = new Map<string, number>();
  const ops: { op: Record<string, unknown>; id: string; path: string }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch', 'options', 'head'].includes(method)) continue;
      if (!op || typeof op !== 'object') continue;
      const id = typeof op.operationId === 'string' ? op.operationId : operationIdOf(method, path);
      ops.push({ op, id, path });
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
  }
  const taken = new Set<string>();
  for (const o of ops) {
    let id = o.id;
    if ((seen.get(id) ?? 0) > 1) {
      const params = [...o.path.matchAll(/\{([^}]+)\}/g)].map((m) => pascal(m[1]!.replace('*', 'path')));
      id = `${id}${params.length ? `By${params.join('And')}` : ''}`;
      for (let n = 2; taken.has(id); n++) id = `${o.id}${n}`;
    }
    taken.add(id);
    o.op.operationId = id;
  }
  return document;
}
