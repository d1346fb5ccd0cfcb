import { sql, type ExpressionBuilder } from 'kysely';
import type { Executor } from '../../db/connection.js';
import { PrecompiledInsert } from '../../db/precompiled.js';
import type { Database, DeliveryStatus, EmailsTable } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';
import type { TransactionalParts } from '../deliveries/store.js';
import type { Email, EmailDetail, EmailListFilter, EmailStatus } from './emails.schemas.js';

/**
 * The `emails` and `email_attachments` tables (migration 0034, docs/emails.md). An email's recipients and their
 * statuses are its deliveries (the hidden broadcast of the same id): read here, written by the deliveries feature.
 */

export interface NewEmailRow {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: string[];
  tracking: { opens: boolean; clicks: boolean };
  templateId: string | null;
  templateVersion: number | null;
  apiKeyId: string | null;
  idempotencyKey: string | null;
  createdAt: string;
}

// Accepting an email (bench:emails, accept) runs this insert each time: compiled once per shape (db/precompiled.ts).
const emailInsert = new PrecompiledInsert('emails');

export async function insertEmail(
  db: Executor,
  workspaceId: string,
  e: NewEmailRow,
  attachments: readonly { filename: string; contentType: string; data: Buffer }[],
): Promise<void> {
  await emailInsert.execute(db, {
    id: e.id,
    workspace_id: workspaceId,
    from_address: e.from,
    to_addresses: JSON.stringify(e.to),
    cc_addresses: JSON.stringify(e.cc),
    bcc_addresses: JSON.stringify(e.bcc),
    reply_to: e.replyTo,
    subject: e.subject,
    html: e.html,
    text: e.text,
    headers: JSON.stringify(e.headers),
    tags: JSON.stringify(e.tags),
    track_opens: e.tracking.opens ? 1 : 0,
    track_clicks: e.tracking.clicks ? 1 : 0,
    template_id: e.templateId,
    template_version: e.templateVersion,
    api_key_id: e.apiKeyId,
    idempotency_key: e.idempotencyKey,
    created_at: e.createdAt,
  });
  // One row per file: on SQLite a statement binds at most 32,766 values, so the files go one by one.
  for (const [position, a] of attachments.entries())
    await db
      .insertInto('email_attachments')
      .values({
        email_id: e.id,
        position,
        workspace_id: workspaceId,
        filename: a.filename,
        content_type: a.contentType,
        size: a.data.byteLength,
        data: a.data,
      })
      .execute();
}

/** The email an Idempotency-Key of sendEmail's caller made (SMTP submission's retries), if any. */
export async function emailIdByIdempotencyKey(
  db: Executor,
  workspaceId: string,
  key: string,
): Promise<string | undefined> {
  const r = await db
    .selectFrom('emails')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return r?.id;
}

const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

/** A delivery's status as its recipient's (docs/emails.md, "Statuses"). */
export function recipientStatus(status: DeliveryStatus): EmailStatus {
  switch (status) {
    case 'SENT':
      return 'SENT';
    case 'BOUNCED':
      return 'BOUNCED';
    case 'SKIPPED':
      return 'SUPPRESSED';
    case 'FAILED':
    case 'CANCELED':
      return 'FAILED';
    default:
      return 'QUEUED';
  }
}

/**
 * The email's status, a summary of its recipients' (docs/emails.md): QUEUED while any is; else SENT when any was
 * sent; else BOUNCED when any bounced; else FAILED when any failed; else (every one suppressed) SUPPRESSED.
 */
export function summaryStatus(statuses: readonly EmailStatus[]): EmailStatus {
  for (const s of ['QUEUED', 'SENT', 'BOUNCED', 'FAILED'] as const) if (statuses.includes(s)) return s;
  return 'SUPPRESSED';
}

const OPEN: DeliveryStatus[] = ['QUEUED', 'SENDING', 'PAUSED'];
const FAILED: DeliveryStatus[] = ['FAILED', 'CANCELED'];

/** SQL for "the email's summary status is `status`" (the same rule as summaryStatus, over its deliveries). */
function hasStatus(eb: ExpressionBuilder<Database, 'emails'>, status: EmailStatus) {
  const any = (statuses: DeliveryStatus[]) =>
    eb.exists(
      eb
        .selectFrom('deliveries')
        .select('deliveries.id')
        .whereRef('deliveries.broadcast_id', '=', 'emails.id')
        .where('deliveries.status', 'in', statuses),
    );
  const order: [EmailStatus, DeliveryStatus[]][] = [
    ['QUEUED', OPEN],
    ['SENT', ['SENT']],
    ['BOUNCED', ['BOUNCED']],
    ['FAILED', FAILED],
  ];
  const conditions = [];
  for (const [s, statuses] of order) {
    if (s === status) return eb.and([...conditions, any(statuses)]);
    conditions.push(eb.not(any(statuses)));
  }
  return eb.and(conditions);
}

type EmailRow = Pick<
  EmailsTable,
  | 'id'
  | 'from_address'
  | 'to_addresses'
  | 'cc_addresses'
  | 'bcc_addresses'
  | 'reply_to'
  | 'subject'
  | 'headers'
  | 'tags'
  | 'track_opens'
  | 'track_clicks'
  | 'template_id'
  | 'template_version'
  | 'created_at'
>;
const COLUMNS = [
  'id',
  'from_address',
  'to_addresses',
  'cc_addresses',
  'bcc_addresses',
  'reply_to',
  'subject',
  'headers',
  'tags',
  'track_opens',
  'track_clicks',
  'template_id',
  'template_version',
  'created_at',
] as const;

/** The files of these emails, each email's in their order (the caller selects the columns it needs). */
const attachmentsOf = (db: Executor, workspaceId: string, ids: readonly string[]) =>
  db
    .selectFrom('email_attachments')
    .where('workspace_id', '=', workspaceId)
    .where('email_id', 'in', ids)
    .orderBy('email_id')
    .orderBy('position');

/** The emails' recipients (their deliveries) and attachments' names, for these rows. */
async function withRecipients(db: Executor, workspaceId: string, rows: readonly EmailRow[]): Promise<Email[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const deliveries = await db
    .selectFrom('deliveries')
    .select(['broadcast_id', 'email', 'status', 'last_error'])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', 'in', ids)
    .orderBy('id')
    .execute();
  const files = await attachmentsOf(db, workspaceId, ids)
    .select(['email_id', 'filename', 'content_type', 'size'])
    .execute();
  return rows.map((r) => {
    const to = json<string[]>(r.to_addresses);
    const cc = json<string[]>(r.cc_addresses);
    const bcc = json<string[]>(r.bcc_addresses);
    const own = deliveries.filter((d) => d.broadcast_id === r.id);
    const typeOf = (email: string) => {
      for (const [type, list] of [
        ['to', to],
        ['cc', cc],
        ['bcc', bcc],
      ] as const)
        if (list.some((a) => bareAddress(a) === email)) return type;
      return 'to' as const;
    };
    const recipients = own.map((d) => ({
      email: d.email,
      type: typeOf(d.email),
      status: recipientStatus(d.status),
      lastError: d.last_error,
    }));
    return {
      id: r.id,
      from: r.from_address,
      to,
      cc,
      bcc,
      replyTo: r.reply_to,
      subject: r.subject,
      status: summaryStatus(recipients.map((x) => x.status)),
      recipients,
      tags: json<string[]>(r.tags),
      templateId: r.template_id,
      templateVersion: r.template_version === null ? null : Number(r.template_version),
      tracking: { opens: Number(r.track_opens) === 1, clicks: Number(r.track_clicks) === 1 },
      attachments: files
        .filter((f) => f.email_id === r.id)
        .map((f) => ({ filename: f.filename, contentType: f.content_type, size: Number(f.size) })),
      headers: json<Record<string, string>>(r.headers),
      createdAt: toIso(r.created_at),
    };
  });
}

/** The address of `Name <addr>` or `addr`, lower-cased: how a recipient's delivery stores it. */
export function bareAddress(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1]! : mailbox).trim().toLowerCase();
}

export async function getEmail(db: Executor, workspaceId: string, id: string): Promise<EmailDetail | undefined> {
  const r = await db
    .selectFrom('emails')
    .select([...COLUMNS, 'html', 'text'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!r) return undefined;
  const [email] = await withRecipients(db, workspaceId, [r]);
  return { ...email!, html: r.html, text: r.text };
}

/** The ids of an email's deliveries (one per recipient), or undefined when the workspace has no such email. */
export async function emailDeliveryIds(db: Executor, workspaceId: string, id: string): Promise<string[] | undefined> {
  const found = await db
    .selectFrom('emails')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!found) return undefined;
  const rows = await db
    .selectFrom('deliveries')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', '=', id)
    .execute();
  return rows.map((r) => r.id);
}

export async function listEmails(
  db: Executor,
  workspaceId: string,
  f: Omit<EmailListFilter, 'limit' | 'cursor'>,
  limit: number,
  beforeId?: string,
): Promise<Email[]> {
  let q = db.selectFrom('emails').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  if (f.templateId) q = q.where('template_id', '=', f.templateId);
  if (f.tag) {
    const pattern = `%${JSON.stringify(f.tag).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where(sql<boolean>`cast(tags as text) like ${pattern} escape '\\'`);
  }
  if (f.recipient) {
    // Search as you type (the console's log): any recipient whose address contains the text, case-insensitively (the
    // addresses are stored lower-cased). Probed per email row, newest first, through the deliveries' broadcast index.
    const text = f.recipient.trim().toLowerCase();
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('deliveries')
          .select('deliveries.id')
          .where('deliveries.workspace_id', '=', workspaceId)
          .whereRef('deliveries.broadcast_id', '=', 'emails.id')
          .where(sql<boolean>`deliveries.email like ${pattern} escape '\\'`),
      ),
    );
  }
  if (f.status) {
    const status = f.status;
    q = q.where((eb) => hasStatus(eb, status));
  }
  return withRecipients(db, workspaceId, await q.orderBy('id', 'desc').limit(limit).execute());
}

/**
 * emailPartsForSending for several emails of a workspace, in two queries (the pipeline's batch of emails); an email not
 * found is left out.
 */
export async function emailsPartsForSending(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, TransactionalParts>> {
  if (!ids.length) return new Map();
  const [rows, files] = await Promise.all([
    db
      .selectFrom('emails')
      .select(['id', 'to_addresses', 'cc_addresses', 'headers'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', ids)
      .execute(),
    attachmentsOf(db, workspaceId, ids).select(['email_id', 'filename', 'content_type', 'data']).execute(),
  ]);
  const out = new Map<string, TransactionalParts>();
  for (const r of rows)
    out.set(r.id, {
      to: json<string[]>(r.to_addresses),
      cc: json<string[]>(r.cc_addresses),
      headers: json<Record<string, string>>(r.headers),
      attachments: [],
    });
  for (const f of files)
    out.get(f.email_id)?.attachments.push({
      filename: f.filename,
      contentType: f.content_type,
      content: new Uint8Array(f.data),
    });
  return out;
}

/** What the delivery pipeline needs of an email beyond its hidden broadcast (the store's broadcastForSending). */
export async function emailPartsForSending(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<TransactionalParts | undefined> {
  return (await emailsPartsForSending(db, workspaceId, [id])).get(id);
}
