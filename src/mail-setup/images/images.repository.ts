import type { Executor } from '../../db/connection.js';
import type { ImagesTable } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';

/** An image's row without its bytes: what lists and the API read. */
export type ImageRow = Omit<ImagesTable, 'workspace_id' | 'data'>;

const COLUMNS = ['id', 'content_type', 'width', 'height', 'bytes', 'sha256', 'name', 'created_at'] as const;

const normalise = (r: ImageRow): ImageRow => ({ ...r, created_at: toIso(r.created_at) });

/** Inserts the image unless the workspace has one with the same bytes; false when it had (nothing written then). */
export async function insertImage(
  db: Executor,
  workspaceId: string,
  image: ImageRow & { data: Buffer },
): Promise<boolean> {
  const res = await db
    .insertInto('images')
    .values({ ...image, workspace_id: workspaceId })
    .onConflict((oc) => oc.columns(['workspace_id', 'sha256']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function findImageBySha256(
  db: Executor,
  workspaceId: string,
  sha256: string,
): Promise<ImageRow | undefined> {
  const r = await db
    .selectFrom('images')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
  return r && normalise(r);
}

export async function getImage(db: Executor, workspaceId: string, id: string): Promise<ImageRow | undefined> {
  const r = await db
    .selectFrom('images')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r && normalise(r);
}

export async function listImages(
  db: Executor,
  workspaceId: string,
  limit: number,
  beforeId?: string,
): Promise<ImageRow[]> {
  let q = db.selectFrom('images').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(normalise);
}

export async function deleteImage(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('images')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/**
 * The bytes of an image for its public address, `/i/{id}`, which names no workspace (as `/f/{slug}` does not): the
 * one read without a workspace id. The id is unguessable (lib/ids.ts) and the image is public by design.
 */
export async function publicImage(
  db: Executor,
  id: string,
): Promise<Pick<ImagesTable, 'content_type' | 'sha256' | 'data'> | undefined> {
  return db.selectFrom('images').select(['content_type', 'sha256', 'data']).where('id', '=', id).executeTakeFirst();
}
