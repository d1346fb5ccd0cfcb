import { detectMimeType } from 'nodemailer/lib/mime-funcs';
import { suppressionsOf } from '../../audience/index.js';
import { isUniqueViolation, type Db } from '../../db/connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import { notFound, unprocessable, validationFailed, type FieldError } from '../../errors/errors.js';
import { parseMailbox } from '../../lib/email.js';
import { isMediaType } from '../../mail/mime.js';
import { newId } from '../../lib/ids.js';
import { liquidErrors, renderTemplate } from '../../lib/liquid.js';
import { nowIso } from '../../lib/time.js';
import { domainStatusByName, findTemplateByIdOrAlias } from '../../mail-setup/index.js';
import { transactionalEventsOf, type EventRecord } from '../../outbox/index.js';
import { insertEmailMessage } from '../broadcasts/broadcasts.writer.js';
import { insertEmailDeliveries } from '../deliveries/deliveries.outcomes.js';
import * as repo from './emails.repository.js';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS,
  MAX_FILENAME,
  type Email,
  type EmailDetail,
  type EmailInput,
  type EmailListFilter,
} from './emails.schemas.js';

export type { EmailInput } from './emails.schemas.js';

export interface SendEmailOptions {
  /** The caller's key for this message: a second call with it returns the first email's id (nothing sent twice). */
  idempotencyKey?: string;
}

/** html and text up to 2 MiB each, as for broadcasts and templates. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * Header fields a caller may not set (docs/emails.md, "Headers"): the ones the service writes (addresses, subject,
 * date, ids, the envelope's Return-Path), the signature and what it covers, the MIME structure, and trace fields.
 */
const REFUSED_HEADERS = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'return-path',
  'dkim-signature',
  'mime-version',
  'received',
]);
/** RFC 5322 §3.6.8: a field name is printable US-ASCII but the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]{1,76}$/;
/** A value: no CR, LF or other control character (a tab is folding white space and allowed), no DEL. */
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Base64's alphabet with at most two pads at the end (a character class, no group: linear on 14 MB of text). */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Base64 as RFC 4648 §4 writes it: the alphabet, padded to a multiple of four, canonical (no stray bits); or null. */
function strictBase64(content: string): Buffer | null {
  if (content.length % 4 !== 0 || !BASE64_CHARS.test(content)) return null;
  const data = Buffer.from(content, 'base64');
  return data.toString('base64') === content ? data : null;
}

const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Transactional email (contract §20, docs/emails.md): checks what an application asks to send, renders its template,
 * and writes the email, its hidden broadcast and one delivery per recipient in one transaction; the delivery pipeline
 * sends them in the transactional lane. The API and the SMTP submission server both call sendEmail.
 */
export class EmailsService {
  /**
   * Accepted emails are written in group commits on SQLite (db/group-commit.ts): a commit cost more than an email's
   * five statements (bench:emails, accept: 129 µs of a request's ~430 µs of CPU), and concurrent requests share one.
   * Each is answered after the commit that holds it; one that fails is rolled back alone.
   */
  private readonly writes: GroupCommit;

  /** Told of each accepted email: the transactional lane of this process looks at once (jobs.ts), idle or not. */
  private queued: (() => void) | null = null;

  constructor(private readonly db: Db) {
    this.writes = new GroupCommit(db);
  }

  /** The transactional lane's wake (`formcast serve`, where the API and the worker share a process). */
  attachSender(wake: () => void): void {
    this.queued = wake;
  }

  /**
   * Accepts one email: `{ id }`, or throws the domain errors (422 validation_failed with JSON Pointers,
   * sender_domain_not_verified, 404 for nothing; nothing is written then). Recipients suppressed for a hard bounce or a
   * complaint are written SUPPRESSED and not mailed.
   */
  async sendEmail(
    workspaceId: string,
    apiKeyId: string | null,
    input: EmailInput,
    opts: SendEmailOptions = {},
  ): Promise<{ id: string }> {
    const k = this.db.kysely;
    if (opts.idempotencyKey) {
      const existing = await repo.emailIdByIdempotencyKey(k, workspaceId, opts.idempotencyKey);
      if (existing) return { id: existing };
    }
    const errors: FieldError[] = [];
    const from = parseMailbox(input.from);
    if (!from) errors.push({ path: '/from', message: 'must be one mailbox: addr@domain or Name <addr@domain>' });
    const lists = { to: input.to, cc: input.cc ?? [], bcc: input.bcc ?? [] };
    const recipients: string[] = [];
    for (const [field, list] of Object.entries(lists))
      list.forEach((m, i) => {
        const parsed = parseMailbox(m);
        if (!parsed)
          errors.push({ path: `/${field}/${i}`, message: 'must be one mailbox: addr@domain or Name <addr@domain>' });
        else if (!recipients.includes(parsed.address.toLowerCase())) recipients.push(parsed.address.toLowerCase());
      });
    if (input.replyTo !== undefined && !parseMailbox(input.replyTo))
      errors.push({ path: '/replyTo', message: 'must be one mailbox: addr@domain or Name <addr@domain>' });
    errors.push(...checkHeaders(input.headers ?? {}));
    const files = decodeAttachments(input.attachments ?? [], errors);
    for (const key of ['html', 'text'] as const) {
      const v = input[key];
      if (v != null && Buffer.byteLength(v, 'utf8') > MAX_BODY_BYTES)
        errors.push({ path: `/${key}`, message: 'must be at most 2 MiB' });
    }
    if (input.templateId !== undefined && (input.html !== undefined || input.text !== undefined))
      errors.push({ path: '/templateId', message: 'give a template or html/text, not both' });
    if (input.templateId === undefined && input.data !== undefined)
      errors.push({ path: '/data', message: 'is what a template sees: give templateId with it' });
    if (input.templateId === undefined && input.html === undefined && input.text === undefined)
      errors.push({ path: '/html', message: 'an email needs html, text or a templateId' });
    if (errors.length) throw validationFailed(errors);

    // The content: the template's current version rendered with `data`, or the html and text as given.
    let content: { subject: string | null; html: string | null; text: string | null };
    let template: { id: string; version: number } | null = null;
    if (input.templateId !== undefined) {
      const t = await findTemplateByIdOrAlias(k, workspaceId, input.templateId);
      if (!t)
        throw unprocessable('invalid_reference', `templateId ${input.templateId} names no template of this workspace`, [
          { path: '/templateId', message: 'names no template (id or alias) of this workspace', keyword: 'reference' },
        ]);
      template = { id: t.id, version: t.version };
      content = renderContent(t, input.data ?? {}, input.subject);
    } else {
      content = { subject: input.subject ?? null, html: input.html ?? null, text: input.text ?? null };
    }
    if (!content.subject?.trim())
      throw validationFailed([
        { path: '/subject', message: 'is required (the template has none)', keyword: 'required' },
      ]);

    if ((await domainStatusByName(k, workspaceId, from!.domain)) !== 'VERIFIED')
      throw unprocessable(
        'sender_domain_not_verified',
        `${from!.domain} is not a verified sending domain of this workspace; add and verify it (POST /v1/domains)`,
        [{ path: '/from', message: 'is not on a verified domain', keyword: 'verified_domain' }],
      );

    const id = newId('em');
    const now = nowIso();
    const tracking = { opens: input.tracking?.opens ?? false, clicks: input.tracking?.clicks ?? false };
    try {
      await this.writes.run(async (trx) => {
        // Transactional mail ignores topics and contact status; a hard bounce or a complaint still stops it (§20).
        const suppressed = await suppressionsOf(trx, workspaceId, recipients);
        await repo.insertEmail(
          trx,
          workspaceId,
          {
            id,
            from: input.from,
            to: lists.to,
            cc: lists.cc,
            bcc: lists.bcc,
            replyTo: input.replyTo ?? null,
            subject: content.subject!,
            html: content.html,
            text: content.text,
            headers: input.headers ?? {},
            tags: input.tags ?? [],
            tracking,
            templateId: template?.id ?? null,
            templateVersion: template?.version ?? null,
            apiKeyId,
            idempotencyKey: opts.idempotencyKey ?? null,
            createdAt: now,
          },
          files,
        );
        await insertEmailMessage(
          trx,
          workspaceId,
          id,
          {
            from: input.from,
            replyTo: input.replyTo ?? null,
            emailContent: {
              subject: content.subject,
              html: content.html,
              text: content.text,
              previewText: null,
              editorContent: null,
            },
            tracking,
          },
          now,
        );
        await insertEmailDeliveries(
          trx,
          workspaceId,
          id,
          recipients.map((email) => {
            const reason = suppressed.get(email);
            return { email, suppressed: reason === 'BOUNCED' || reason === 'COMPLAINED' ? reason : null };
          }),
          now,
        );
      });
    } catch (err) {
      // The same key sent twice at once: the second finds the first's email.
      if (opts.idempotencyKey && isUniqueViolation(err)) {
        const existing = await repo.emailIdByIdempotencyKey(k, workspaceId, opts.idempotencyKey);
        if (existing) return { id: existing };
      }
      throw err;
    }
    this.queued?.();
    return { id };
  }

  async get(workspaceId: string, id: string): Promise<EmailDetail> {
    const e = await repo.getEmail(this.db.kysely, workspaceId, id);
    if (!e) throw notFound('email');
    return e;
  }

  /**
   * What happened to an email's messages, newest first: `email.sent`, `email.bounced`, `email.complained`, and with
   * tracking on `email.opened` and `email.clicked`, each naming its recipient (`data.email`). At most 500: an email
   * has at most 150 recipients, and each a handful of events.
   */
  async events(workspaceId: string, id: string): Promise<EventRecord[]> {
    const deliveryIds = await repo.emailDeliveryIds(this.db.kysely, workspaceId, id);
    if (!deliveryIds) throw notFound('email');
    return transactionalEventsOf(this.db.kysely, workspaceId, deliveryIds, 500);
  }

  list(
    workspaceId: string,
    filter: Omit<EmailListFilter, 'limit' | 'cursor'>,
    limit: number,
    beforeId?: string,
  ): Promise<Email[]> {
    return repo.listEmails(this.db.kysely, workspaceId, filter, limit, beforeId);
  }
}

/** The caller's headers: field names of RFC 5322, none the service writes, values without line breaks. */
function checkHeaders(headers: Record<string, string>): FieldError[] {
  const errors: FieldError[] = [];
  const names = Object.keys(headers);
  if (names.length > 50) errors.push({ path: '/headers', message: 'must have at most 50 fields' });
  for (const name of names) {
    const path = `/headers/${pointer(name)}`;
    const lower = name.toLowerCase();
    if (!FIELD_NAME.test(name))
      errors.push({
        path,
        message: 'is not a header field name (RFC 5322: printable ASCII but ":", 1 to 76 characters)',
      });
    else if (REFUSED_HEADERS.has(lower) || lower.startsWith('content-'))
      errors.push({ path, message: `${name} is set by the service and cannot be given (docs/emails.md, "Headers")` });
    else if (BAD_VALUE.test(headers[name]!))
      errors.push({ path, message: 'must not contain line breaks or control characters (header injection)' });
  }
  return errors;
}

/**
 * The attachments decoded: strict base64, names without control characters, 10 MiB in all. The API's schema checks
 * the count, the names' length and the media types before this; SMTP submission's attachments (mail/submission) come
 * here unchecked, so the rules are checked again.
 */
function decodeAttachments(
  attachments: NonNullable<EmailInput['attachments']>,
  errors: FieldError[],
): { filename: string; contentType: string; data: Buffer }[] {
  const out: { filename: string; contentType: string; data: Buffer }[] = [];
  let total = 0;
  if (attachments.length > MAX_ATTACHMENTS)
    errors.push({
      path: '/attachments',
      message: `must have at most ${MAX_ATTACHMENTS} items (these are ${attachments.length})`,
      keyword: 'maxItems',
      params: { limit: MAX_ATTACHMENTS },
    });
  attachments.forEach((a, i) => {
    // eslint-disable-next-line no-control-regex
    if (/[\x00-\x1f\x7f]/.test(a.filename))
      errors.push({ path: `/attachments/${i}/filename`, message: 'must not contain control characters' });
    // Characters as the schema counts them (code points), not UTF-16 units.
    const length = [...a.filename].length;
    if (length < 1 || length > MAX_FILENAME)
      errors.push({ path: `/attachments/${i}/filename`, message: `must be 1 to ${MAX_FILENAME} characters` });
    if (a.contentType !== undefined && !isMediaType(a.contentType))
      errors.push({
        path: `/attachments/${i}/contentType`,
        message: 'must be a media type such as application/pdf (type/subtype, no parameters)',
      });
    const data = strictBase64(a.content);
    if (!data) {
      errors.push({
        path: `/attachments/${i}/content`,
        message: 'is not valid base64 (RFC 4648, padded, no line breaks)',
      });
      return;
    }
    total += data.byteLength;
    const ext = /\.([A-Za-z0-9]+)$/.exec(a.filename)?.[1] ?? '';
    out.push({ filename: a.filename, contentType: (a.contentType ?? detectMimeType(ext)).toLowerCase(), data });
  });
  if (total > MAX_ATTACHMENT_BYTES)
    errors.push({
      path: '/attachments',
      message: `must be at most 10 MiB decoded in all (these are ${total} bytes)`,
      keyword: 'maxSize',
      params: { limit: MAX_ATTACHMENT_BYTES },
    });
  return out;
}

/** A template's content rendered with Liquid over `data` (`{{ name }}` and `{{ data.name }}` alike). */
function renderContent(
  t: { subject: string | null; html: string | null; text: string | null },
  data: Record<string, unknown>,
  subject: string | undefined,
): { subject: string | null; html: string | null; text: string | null } {
  const parseErrors = liquidErrors({ subject }, '');
  if (parseErrors.length) throw validationFailed(parseErrors);
  const scope = { ...data, data };
  try {
    return {
      subject: renderTemplate(subject ?? t.subject, scope),
      html: renderTemplate(t.html, scope, 'html'),
      text: renderTemplate(t.text, scope),
    };
  } catch (err) {
    throw validationFailed([
      {
        path: '/data',
        message: `the template could not be rendered with it: ${(err as Error).message.split('\n')[0]}`,
      },
    ]);
  }
}
