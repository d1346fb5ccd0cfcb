import type { Executor } from '../../db/connection.js';
import type { TopicsTable } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';

export interface Topic {
  id: string;
  name: string;
  defaultSubscription: 'OPT_IN' | 'OPT_OUT';
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = ['id', 'name', 'default_subscription', 'created_at', 'updated_at'] as const;

type TopicRow = Pick<TopicsTable, (typeof COLUMNS)[number]>;

function toTopic(r: TopicRow): Topic {
  return {
    id: r.id,
    name: r.name,
    defaultSubscription: r.default_subscription,
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
  };
}

export async function getTopic(db: Executor, workspaceId: string, id: string): Promise<Topic | undefined> {
  const r = await db
    .selectFrom('topics')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? toTopic(r) : undefined;
}

export async function insertTopic(
  db: Executor,
  workspaceId: string,
  t: { id: string; name: string; defaultSubscription: Topic['defaultSubscription']; createdAt: string },
): Promise<void> {
  await db
    .insertInto('topics')
    .values({
      id: t.id,
      workspace_id: workspaceId,
      name: t.name,
      default_subscription: t.defaultSubscription,
      created_at: t.createdAt,
      updated_at: t.createdAt,
    })
    .execute();
}

export async function listTopics(
  db: Executor,
  workspaceId: string,
  opts: { limit: number; beforeId?: string },
): Promise<Topic[]> {
  let q = db.selectFrom('topics').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map(toTopic);
}

/** Every topic of the workspace, oldest first: what a contact's `topics` array is built from. */
export async function listAllTopics(db: Executor, workspaceId: string): Promise<Topic[]> {
  return (
    await db.selectFrom('topics').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('id', 'asc').execute()
  ).map(toTopic);
}

/** The ids among `ids` that name a topic of the workspace. */
export async function existingTopicIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  return new Set((await topicDefaults(db, workspaceId, ids)).keys());
}

/** The default subscription of each of `ids` that names a topic of the workspace (the others are left out). */
export async function topicDefaults(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, Topic['defaultSubscription']>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('topics')
    .select(['id', 'default_subscription'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.default_subscription]));
}

export async function renameTopic(
  db: Executor,
  workspaceId: string,
  id: string,
  name: string | undefined,
  updatedAt: string,
): Promise<Topic | undefined> {
  const r = await db
    .updateTable('topics')
    .set({ ...(name !== undefined ? { name } : {}), updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();
  return r ? toTopic(r) : undefined;
}

export async function deleteTopic(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('topics')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** How many broadcasts of the workspace point at the topic (they keep it from being deleted). */
export async function countBroadcastsUsingTopic(db: Executor, workspaceId: string, id: string): Promise<number> {
  const row = await db
    .selectFrom('broadcasts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('topic_id', '=', id)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
