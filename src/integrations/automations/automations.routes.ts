import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { AutomationsService } from './automations.service.js';
import {
  AutomationListQuery,
  AutomationParams,
  AutomationSchema,
  CreateAutomationBody,
  RunListQuery,
  RunSchema,
  SimulateBody,
  SimulationSchema,
  StatsSchema,
  TriggerBody,
  TriggeredSchema,
  UpdateAutomationBody,
} from './automations.schemas.js';

/** Automations, their runs and stats, the simulator (docs/automations.md; contract §15). */
export async function automationsRoutes(app: V1, { automations }: { automations: AutomationsService }): Promise<void> {
  app.post(
    '/automations',
    {
      schema: {
        body: CreateAutomationBody,
        response: { 201: AutomationSchema },
      },
      config: { scope: 'write:broadcasts' },
    },
    async (req, reply) => {
      const a = await automations.create(req.auth.workspaceId, req.body, req.auth);
      return reply.code(201).header('location', `/v1/automations/${a.id}`).send(a);
    },
  );

  app.get(
    '/automations',
    {
      schema: { querystring: AutomationListQuery, response: { 200: ListOf(AutomationSchema) } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => {
      const { limit, cursor, status } = req.query;
      return paginate({ limit, cursor }, (w) => automations.list(req.auth.workspaceId, { ...w, status }));
    },
  );

  app.get(
    '/automations/:automationId',
    {
      schema: { params: AutomationParams, response: { 200: AutomationSchema } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => automations.get(req.auth.workspaceId, req.params.automationId),
  );

  app.put(
    '/automations/:automationId',
    {
      schema: {
        params: AutomationParams,
        body: UpdateAutomationBody,
        response: { 200: AutomationSchema },
      },
      config: { scope: 'write:broadcasts' },
    },
    (req) => automations.update(req.auth.workspaceId, req.params.automationId, req.body, req.auth),
  );

  app.delete(
    '/automations/:automationId',
    {
      schema: { params: AutomationParams, response: { 204: Type.Null() } },
      config: { scope: 'write:broadcasts' },
    },
    async (req, reply) => {
      await automations.remove(req.auth.workspaceId, req.params.automationId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/automations/:automationId/activate',
    {
      schema: {
        params: AutomationParams,
        response: { 200: AutomationSchema },
      },
      config: { scope: 'write:broadcasts' },
    },
    (req) => automations.activate(req.auth.workspaceId, req.params.automationId, req.auth),
  );

  app.post(
    '/automations/:automationId/pause',
    {
      schema: { params: AutomationParams, response: { 200: AutomationSchema } },
      config: { scope: 'write:broadcasts' },
    },
    (req) => automations.pause(req.auth.workspaceId, req.params.automationId),
  );

  app.post(
    '/automations/:automationId/trigger',
    {
      schema: {
        params: AutomationParams,
        body: TriggerBody,
        response: { 202: TriggeredSchema },
      },
      config: { scope: 'write:broadcasts' },
    },
    async (req, reply) =>
      reply
        .code(202)
        .send(await automations.trigger(req.auth.workspaceId, req.params.automationId, req.body.contactId)),
  );

  app.post(
    '/automations/:automationId/simulate',
    {
      schema: {
        params: AutomationParams,
        body: SimulateBody,
        response: { 200: SimulationSchema },
      },
      config: { scope: 'read:broadcasts' },
    },
    (req) => automations.simulate(req.auth.workspaceId, req.params.automationId, req.body),
  );

  app.get(
    '/automations/:automationId/runs',
    {
      schema: { params: AutomationParams, querystring: RunListQuery, response: { 200: ListOf(RunSchema) } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => {
      const { limit, cursor, ...filter } = req.query;
      return paginate({ limit, cursor }, (w) =>
        automations.runs(req.auth.workspaceId, req.params.automationId, { ...filter, ...w }),
      );
    },
  );

  app.get(
    '/automations/:automationId/stats',
    {
      schema: { params: AutomationParams, response: { 200: StatsSchema } },
      config: { scope: 'read:broadcasts' },
    },
    (req) => automations.stats(req.auth.workspaceId, req.params.automationId),
  );
}
