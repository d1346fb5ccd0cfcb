import type { Executor } from '../db/connection.js';
import type { DomainsTable } from '../db/schema.js';
import { toIso } from '../lib/time.js';

/** A domain as the API shows it; the private key is deliberately not part of it. */
export interface DomainRecord {
  id: string;
  name: string;
  status: DomainsTable['status'];
  verificationToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
  createdAt: string;
  verifiedAt: string | null;
}

const PUBLIC_COLUMNS = ['id', 'name', 'status', 'verification_token', 'dkim_selector', 'dkim_public_key', 'created_at', 'verified_at'] as const;

type Row = Pick<DomainsTable, (typeof PUBLIC_COLUMNS)[number]>;

function toRecord(r: Row): DomainRecord {
  return {
    id: r.id, name: r.name, status: r.status, verificationToken: r.verification_token, dkimSelector: r.dkim_selector,
    dkimPublicKey: r.dkim_public_key, createdAt: toIso(r.created_at), verifiedAt: toIso(r.verified_at),
  };
}

export async function insertDomain(db: Executor, d: DomainRecord & { workspaceId: string; dkimPrivateKey: string }): Promise<void> {
  await db.insertInto('domains').values({
    id: d.id, workspace_id: d.workspaceId, name: d.name, status: d.status, verification_token: d.verificationToken,
    dkim_selector: d.dkimSelector, dkim_public_key: d.dkimPublicKey, dkim_private_key: d.dkimPrivateKey,
    verification: null, created_at: d.createdAt, verified_at: d.verifiedAt,
  }).execute();
}

export async function getDomain(db: Executor, workspaceId: string, id: string): Promise<DomainRecord | undefined> {
  const row = await db.selectFrom('domains').select(PUBLIC_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

export async function findDomainByName(db: Executor, workspaceId: string, name: string): Promise<DomainRecord | undefined> {
  const row = await db.selectFrom('domains').select(PUBLIC_COLUMNS).where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst();
  return row ? toRecord(row) : undefined;
}
