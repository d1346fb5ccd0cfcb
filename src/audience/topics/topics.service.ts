import { conflict, notFound, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { isForeignKeyViolation, type Db } from '../../db/connection.js';
import * as repo from './topics.repository.js';
import type { Topic } from './topics.repository.js';
import type { CreateTopicInput, UpdateTopicInput } from './topics.schemas.js';

/**
 * Topics: what a contact can subscribe to or not, one by one. A contact's subscription to a topic is its
 * explicit choice if it made one, otherwise the topic's `defaultSubscription`, which is therefore fixed
 * once the topic exists (changing it would silently flip every contact without a choice).
 */
export class TopicsService {
  constructor(readonly db: Db) {}

  async create(workspaceId: string, input: CreateTopicInput): Promise<Topic> {
    const id = newId('topic');
    await repo.insertTopic(this.db.kysely, workspaceId, {
      id,
      name: input.name,
      defaultSubscription: input.defaultSubscription,
      createdAt: nowIso(),
    });
    return this.get(workspaceId, id);
  }

  async get(workspaceId: string, id: string): Promise<Topic> {
    const topic = await repo.getTopic(this.db.kysely, workspaceId, id);
    if (!topic) throw notFound('topic');
    return topic;
  }

  list(workspaceId: string, opts: { limit: number; beforeId?: string }): Promise<Topic[]> {
    return repo.listTopics(this.db.kysely, workspaceId, opts);
  }

  /** PUT: the name only; `updatedAt` refreshed. A different defaultSubscription is a 422 and changes nothing. */
  async update(workspaceId: string, id: string, input: UpdateTopicInput): Promise<Topic> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the topic id in the path' }]);
    if (input.defaultSubscription !== undefined) {
      const current = await this.get(workspaceId, id);
      if (current.defaultSubscription !== input.defaultSubscription) {
        throw validationFailed([
          {
            path: '/defaultSubscription',
            message:
              'cannot be changed once the topic exists (contacts without an explicit choice rely on it); create a new topic instead',
          },
        ]);
      }
    }
    const topic = await repo.renameTopic(this.db.kysely, workspaceId, id, input.name, nowIso());
    if (!topic) throw notFound('topic');
    return topic;
  }

  /** Deletes the topic and every contact's choice about it; 409 resource_in_use while a broadcast points at it. */
  async remove(workspaceId: string, id: string): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await repo.deleteTopic(this.db.kysely, workspaceId, id);
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      const n = await repo.countBroadcastsUsingTopic(this.db.kysely, workspaceId, id);
      throw conflict(
        'resource_in_use',
        `the topic is used by ${n === 1 ? 'a broadcast' : `${n} broadcasts`}; change or delete ${n === 1 ? 'it' : 'them'} first`,
        { broadcasts: n },
      );
    }
    if (!deleted) throw notFound('topic');
  }
}
