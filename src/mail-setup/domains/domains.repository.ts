import type { Executor } from '../../db/connection.js';
import { Precompiled } from '../../db/precompiled.js';
import type { DomainsTable } from '../../db/schema.js';
import { fromJsonColumn, toJsonColumn } from '../../lib/json.js';
import { toIso } from '../../lib/time.js';
import { isClearPem, openDkimKey, sealDkimKey } from './domains.keys.js';
import type { DomainStatus, Verification } from './domains.schemas.js';

/** A domain as the service works with it; the private key is deliberately not part of it. */
export interface DomainRecord {
  id: string;
  name: string;
  status: DomainsTable['status'];
  verificationToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  verification: Verification | null;
  createdAt: string;
  verifiedAt: string | null;
  trackingHost: string | null;
  /** When the tracking host's CNAME was last found in DNS; null: not verified (its messages use PUBLIC_URL). */
  trackingVerifiedAt: string | null;
}

/** Every column but `dkim_private_key`, which only getSigningKey reads. */
const PUBLIC_COLUMNS = [
  'id',
  'name',
  'status',
  'verification_token',
  'dkim_selector',
  'dkim_public_key',
  'verification',
  'created_at',
  'verified_at',
  'tracking_host',
  'tracking_verified_at',
] as const;

type Row = Pick<DomainsTable, (typeof PUBLIC_COLUMNS)[number]>;

function toRecord(r: Row): DomainRecord {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    verificationToken: r.verification_token,
    dkimSelector: r.dkim_selector,
    dkimPublicKey: r.dkim_public_key,
    verification: fromJsonColumn<Verification>(r.verification),
    createdAt: toIso(r.created_at),
    verifiedAt: toIso(r.verified_at),
    trackingHost: r.tracking_host,
    trackingVerifiedAt: toIso(r.tracking_verified_at),
  };
}

/** `dkimPrivateKey` is the PEM, stored sealed with `secret` (domains.keys.ts). */
export async function insertDomain(
  db: Executor,
  secret: Buffer,
  d: DomainRecord & { workspaceId: string; dkimPrivateKey: string },
): Promise<void> {
  await db
    .insertInto('domains')
    .values({
      id: d.id,
      workspace_id: d.workspaceId,
      name: d.name,
      status: d.status,
      verification_token: d.verificationToken,
      dkim_selector: d.dkimSelector,
      dkim_public_key: d.dkimPublicKey,
      dkim_private_key: sealDkimKey(secret, d.dkimPrivateKey, d.id),
      verification: toJsonColumn(d.verification),
      created_at: d.createdAt,
      verified_at: d.verifiedAt,
      tracking_host: d.trackingHost,
      tracking_verified_at: d.trackingVerifiedAt,
    })
    .execute();
}

export async function getDomain(db: Executor, workspaceId: string, id: string): Promise<DomainRecord | undefined> {
  const row = await db
    .selectFrom('domains')
    .select(PUBLIC_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/** The domain of the workspace with this (normalized, lower-case ASCII) name; broadcasts check `from` with it. */
export async function findDomainByName(
  db: Executor,
  workspaceId: string,
  name: string,
): Promise<DomainRecord | undefined> {
  const row = await domainByName.executeTakeFirst(db, { workspaceId, name });
  return row ? toRecord(row) : undefined;
}

const domainByName = new Precompiled((db, param) =>
  db
    .selectFrom('domains')
    .select(PUBLIC_COLUMNS)
    .where('workspace_id', '=', param('workspaceId'))
    .where('name', '=', param('name')),
);

/**
 * The status of the workspace's domain of this name (normalized, lower-case ASCII), or undefined: what a sender check
 * needs. Every accepted email asks (bench:emails, accept): its one column read by a statement built once, not the
 * domain's record (its keys and verification JSON).
 */
export async function domainStatusByName(
  db: Executor,
  workspaceId: string,
  name: string,
): Promise<DomainStatus | undefined> {
  return (await domainStatus.executeTakeFirst(db, { workspaceId, name }))?.status as DomainStatus | undefined;
}

const domainStatus = new Precompiled((db, param) =>
  db
    .selectFrom('domains')
    .select('status')
    .where('workspace_id', '=', param('workspaceId'))
    .where('name', '=', param('name')),
);

/** Newest first; `beforeId` is the cursor (ids sort by creation time). */
export async function listDomains(
  db: Executor,
  workspaceId: string,
  opts: { status?: DomainStatus; limit: number; beforeId?: string },
): Promise<DomainRecord[]> {
  let q = db.selectFrom('domains').select(PUBLIC_COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(opts.limit).execute();
  return rows.map(toRecord);
}

/** Stores the result of a DNS check with the status it leads to; undefined if the domain is gone. */
export async function saveVerification(
  db: Executor,
  workspaceId: string,
  id: string,
  result: {
    status: DomainStatus;
    verification: Verification;
    verifiedAt: string | null;
    /** The tracking host the check was for, and whether its CNAME was found (a host changed meanwhile is not touched). */
    tracking: { host: string; verifiedAt: string | null } | null;
  },
): Promise<DomainRecord | undefined> {
  let q = db
    .updateTable('domains')
    .set({
      status: result.status,
      verification: toJsonColumn(result.verification),
      verified_at: result.verifiedAt,
      ...(result.tracking ? { tracking_verified_at: result.tracking.verifiedAt } : {}),
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id);
  if (result.tracking) q = q.where('tracking_host', '=', result.tracking.host);
  const row = await q.returning(PUBLIC_COLUMNS).executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/** Sets (or clears) the tracking host; it is unverified until the next DNS check finds its CNAME. */
export async function setTrackingHost(
  db: Executor,
  workspaceId: string,
  id: string,
  host: string | null,
): Promise<DomainRecord | undefined> {
  const row = await db
    .updateTable('domains')
    .set({ tracking_host: host, tracking_verified_at: null })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/**
 * An operator marks the domain VERIFIED without a DNS check (`formcast domain add <name> --verified` on a domain the
 * workspace has): its keys and its last check's result stay; undefined if it is gone.
 */
export async function markVerified(
  db: Executor,
  workspaceId: string,
  id: string,
  now: string,
): Promise<DomainRecord | undefined> {
  const row = await db
    .updateTable('domains')
    .set({ status: 'VERIFIED', verified_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

export async function deleteDomain(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('domains')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface SigningKey {
  /** The domain name (lower-case ASCII), the DKIM `d=`. */
  domain: string;
  /** The DKIM `s=`: the key is published at `<selector>._domainkey.<domain>`. */
  selector: string;
  /** PKCS#8 PEM. Never log it, never return it from an endpoint. */
  privateKey: string;
  /** The domain's tracking host once its CNAME is verified (links and pixel go there), else null. */
  trackingHost?: string | null;
}

/**
 * The DKIM signing key of a VERIFIED domain of the workspace, for the sending pipeline, opened with the installation's
 * key `secret` (domains.keys.ts; the opened keys are cached); undefined for a domain that is unknown, of another
 * workspace, or not (or no longer) VERIFIED.
 */
export async function getSigningKey(
  db: Executor,
  workspaceId: string,
  domainName: string,
  secret: Buffer,
): Promise<SigningKey | undefined> {
  const row = await db
    .selectFrom('domains')
    .select(['id', 'name', 'dkim_selector', 'dkim_private_key', 'tracking_host', 'tracking_verified_at'])
    .where('workspace_id', '=', workspaceId)
    .where('name', '=', domainName.toLowerCase())
    .where('status', '=', 'VERIFIED')
    .executeTakeFirst();
  return row
    ? {
        domain: row.name,
        selector: row.dkim_selector,
        privateKey: openDkimKey(secret, row.dkim_private_key, row.id),
        trackingHost: row.tracking_verified_at ? row.tracking_host : null,
      }
    : undefined;
}

/**
 * Seals every DKIM private key still kept in clear (the layout before migration 0020), at start (cli/secret.ts):
 * idempotent, and a row another process sealed meanwhile is left as it is. Across workspaces: the installation's upgrade.
 */
export async function sealClearDkimKeys(db: Executor, secret: Buffer): Promise<number> {
  const rows = await db
    .selectFrom('domains')
    .select(['id', 'dkim_private_key'])
    .where('dkim_private_key', 'like', '-----BEGIN%')
    .execute();
  let sealed = 0;
  for (const r of rows) {
    if (!isClearPem(r.dkim_private_key)) continue;
    const res = await db
      .updateTable('domains')
      .set({ dkim_private_key: sealDkimKey(secret, r.dkim_private_key, r.id) })
      .where('id', '=', r.id)
      .where('dkim_private_key', '=', r.dkim_private_key)
      .executeTakeFirst();
    sealed += Number(res.numUpdatedRows);
  }
  return sealed;
}

/** The workspace's oldest VERIFIED domain: where its own transactional mail (double opt-in) is sent from. */
export async function firstVerifiedDomain(db: Executor, workspaceId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('domains')
    .select('name')
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'VERIFIED')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.name;
}

/** A verified sending domain as the inbound listener sees it: which workspace has it, and its DKIM public key. */
export interface DomainHolder {
  workspaceId: string;
  domainId: string;
  selector: string;
  /** base64 DER (SubjectPublicKeyInfo), as published in DNS. */
  publicKey: string;
}

/**
 * Every workspace where `name` is a VERIFIED sending domain (each proved it by its own ownership token). For the inbound
 * listener only (docs/bounces.md, "Addresses without a token"): mail to `postmaster@`, `abuse@`, `fbl@` or `dmarc@` the
 * bounce domain names a domain and no workspace, so this is a lookup across workspaces by design, as
 * `workspaceOfDelivery` is for a VERP token. It returns no private key.
 */
export async function verifiedDomainHolders(db: Executor, name: string): Promise<DomainHolder[]> {
  const rows = await db
    .selectFrom('domains')
    .select(['workspace_id', 'id', 'dkim_selector', 'dkim_public_key'])
    .where('name', '=', name.toLowerCase())
    .where('status', '=', 'VERIFIED')
    .orderBy('id')
    .limit(20)
    .execute();
  return rows.map((r) => ({
    workspaceId: r.workspace_id,
    domainId: r.id,
    selector: r.dkim_selector,
    publicKey: r.dkim_public_key,
  }));
}
