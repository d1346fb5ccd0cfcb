import type { Executor } from '../db/connection.js';
import type { ContactStatus } from '../db/schema.js';
import { fromJsonColumn } from '../lib/json.js';
import { toIso } from '../lib/time.js';

/** A contact row as the rest of the service sees it (topic subscriptions are read separately). */
export interface ContactRecord {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  properties: Record<string, unknown>;
  status: ContactStatus;
  createdAt: string;
  updatedAt: string;
}

export const CONTACT_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'properties', 'status', 'created_at', 'updated_at'] as const;

export function toContactRecord(r: { id: string; email: string; first_name: string | null; last_name: string | null; properties: string; status: ContactStatus; created_at: string; updated_at: string }): ContactRecord {
  return {
    id: r.id, email: r.email, firstName: r.first_name, lastName: r.last_name,
    properties: fromJsonColumn<Record<string, unknown>>(r.properties) ?? {}, status: r.status,
    createdAt: toIso(r.created_at), updatedAt: toIso(r.updated_at),
  };
}

export async function getContact(db: Executor, workspaceId: string, id: string): Promise<ContactRecord | undefined> {
  const r = await db.selectFrom('contacts').select(CONTACT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? toContactRecord(r) : undefined;
}
