import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { TopicsService } from './topics.service.js';
import { CreateTopicBody, TopicListQuery, TopicParams, TopicSchema, UpdateTopicBody } from './topics.schemas.js';

export async function topicsRoutes(app: V1, { topics }: { topics: TopicsService }): Promise<void> {
  app.post(
    '/topics',
    {
      schema: { body: CreateTopicBody, response: { 201: TopicSchema } },
      config: { scope: 'write:contacts' },
    },
    async (req, reply) => {
      const topic = await topics.create(req.auth.workspaceId, req.body);
      return reply.code(201).header('location', `/v1/topics/${topic.id}`).send(topic);
    },
  );

  app.get(
    '/topics',
    {
      schema: { querystring: TopicListQuery, response: { 200: ListOf(TopicSchema) } },
      config: { scope: 'read:contacts' },
    },
    async (req) => {
      return paginate(req.query, (w) => topics.list(req.auth.workspaceId, { ...w }));
    },
  );

  app.get(
    '/topics/:topicId',
    {
      schema: { params: TopicParams, response: { 200: TopicSchema } },
      config: { scope: 'read:contacts' },
    },
    (req) => topics.get(req.auth.workspaceId, req.params.topicId),
  );

  app.put(
    '/topics/:topicId',
    {
      schema: { params: TopicParams, body: UpdateTopicBody, response: { 200: TopicSchema } },
      config: { scope: 'write:contacts' },
    },
    (req) => topics.update(req.auth.workspaceId, req.params.topicId, req.body),
  );

  app.delete(
    '/topics/:topicId',
    {
      schema: { params: TopicParams, response: { 204: Type.Null() } },
      config: { scope: 'write:contacts', errors: ['resource_in_use'] },
    },
    async (req, reply) => {
      await topics.remove(req.auth.workspaceId, req.params.topicId);
      return reply.code(204).send(null);
    },
  );
}
