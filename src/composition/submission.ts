import type { ApiKeysService } from '../access/api-keys/api-keys.service.js';
import { DomainError, unavailable } from '../errors/errors.js';
import { grants } from '../http/scopes.js';
import type { Mailbox, SubmittedEmail } from '../mail/submission/submission.parse.js';
import {
  startSubmissionServer,
  type SubmissionAuth,
  type SubmissionLog,
  type SubmissionServer,
  type SubmissionSettings,
  type SubmissionSink,
} from '../mail/submission/submission.server.js';
import type { SubmissionGuardSettings } from '../mail/submission/submission.guards.js';

/**
 * SMTP submission joined to the rest (docs/smtp-submission.md): the listener (mail/submission, plumbing) is handed a
 * SubmissionSink whose `authenticate` checks the password as an API key through the access context's key service
 * (as http/auth.ts checks a bearer key, its cache included) and whose `submit` makes the message a transactional
 * email through the sending service.
 */

/** The body of POST /v1/emails (contract §20): what the sending service's sendEmail takes. */
export interface EmailInput {
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
  subject?: string;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  tags?: string[];
  attachments?: { filename: string; content: string; contentType?: string }[];
  tracking?: { opens: boolean; clicks: boolean };
}

export type SubmitEmail = (
  workspaceId: string,
  apiKeyId: string,
  input: EmailInput,
  opts: { idempotencyKey?: string },
) => Promise<{ id: string }>;

/** `"Name" <address>`, or the address alone when there is no name. */
function mailbox({ address, name }: Mailbox): string {
  return name ? `"${name.replace(/["\\]/g, '\\$&')}" <${address}>` : address;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────────────────────────
// COORDINATOR: the one place where SMTP submission meets the sending service (branch `emails`).
//   1. toEmailInput maps a parsed message to EmailInput (the From keeps its display name; recipients are addresses).
//   2. submitEmail is a stand-in until sendEmail exists here: replace its body with
//        (workspaceId, apiKeyId, input, opts) => sendEmail(workspaceId, apiKeyId, input, opts)
//      (import { sendEmail } from '../sending/index.js'), and delete EmailInput above for the sending face's own.
// ─────────────────────────────────────────────────────────────────────────────────────────────────────────────────
export function toEmailInput(email: SubmittedEmail): EmailInput {
  return {
    from: mailbox(email.from),
    to: email.to.map((m) => m.address),
    ...(email.cc.length ? { cc: email.cc.map((m) => m.address) } : {}),
    ...(email.bcc.length ? { bcc: email.bcc } : {}),
    ...(email.replyTo ? { replyTo: email.replyTo } : {}),
    ...(email.subject !== undefined ? { subject: email.subject } : {}),
    ...(email.html !== undefined ? { html: email.html } : {}),
    ...(email.text !== undefined ? { text: email.text } : {}),
    ...(Object.keys(email.headers).length ? { headers: email.headers } : {}),
    ...(email.tags.length ? { tags: email.tags } : {}),
    ...(email.attachments.length ? { attachments: email.attachments } : {}),
  };
}

export const submitEmail: SubmitEmail = () =>
  Promise.reject(unavailable('transactional email is not connected to SMTP submission yet'));
// ─────────────────────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * The password as an API key (`fc_…`): its workspace and id when it is valid, not revoked, and holds `send:emails`
 * (`admin` includes it); null for any other password. A database that cannot be read rejects (454, try again).
 */
export function apiKeyAuthenticator(apiKeys: ApiKeysService): SubmissionSink['authenticate'] {
  return async (password) => {
    try {
      const auth = await apiKeys.authenticate(`Bearer ${password.trim()}`);
      if (!auth.keyId || !grants(auth.scopes, 'send:emails')) return null;
      return { workspaceId: auth.workspaceId, apiKeyId: auth.keyId };
    } catch (err) {
      if (err instanceof DomainError && err.code === 'unauthorized') return null;
      throw err;
    }
  };
}

export function submissionSink(apiKeys: ApiKeysService, submit: SubmitEmail = submitEmail): SubmissionSink {
  return {
    authenticate: apiKeyAuthenticator(apiKeys),
    submit: (auth: SubmissionAuth, email: SubmittedEmail) =>
      submit(auth.workspaceId, auth.apiKeyId, toEmailInput(email), { idempotencyKey: email.idempotencyKey }),
  };
}

/** The listener as `formcast serve` runs it (SUBMISSION_PORT set). */
export async function startSubmission(opts: {
  settings: SubmissionSettings;
  apiKeys: ApiKeysService;
  log: SubmissionLog;
  name?: string;
  /** Messages a minute per API key (RATE_LIMIT_PER_KEY, as the API's requests). */
  messagesPerMinute?: number;
}): Promise<SubmissionServer> {
  const guards: Partial<SubmissionGuardSettings> =
    opts.messagesPerMinute === undefined ? {} : { messagesPerMinute: opts.messagesPerMinute };
  return startSubmissionServer({
    settings: opts.settings,
    sink: submissionSink(opts.apiKeys),
    log: opts.log,
    name: opts.name,
    guards,
  });
}
