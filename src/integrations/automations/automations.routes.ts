import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { AutomationsService } from './automations.service.js';
import {
  AutomationListQuery, AutomationParams, AutomationSchema, CreateAutomationBody, RunListQuery, RunSchema, SimulateBody, SimulationSchema, StatsSchema,
  TriggerBody, TriggeredSchema, UpdateAutomationBody,
} from './automations.schemas.js';

const tags = ['automations'];

/** Automations, their runs and stats, the simulator (docs/automations.md; contract §15). */
export async function automationsRoutes(app: V1, { automations }: { automations: AutomationsService }): Promise<void> {

  app.post('/automations', {
    schema: {
      tags, summary: 'Create an automation (DRAFT)',
      description: 'A trigger and a tree of steps (docs/automations.md). Steps without an `id` get one. 422 validation_failed lists every problem with its path; ids of topics, segments and form groups must be of the workspace (422 invalid_reference). A `webhook` step needs write:webhooks too (403 insufficient_scope).',
      body: CreateAutomationBody, response: { 201: AutomationSchema },
    },
    config: { scope: 'write:broadcasts' },
  }, async (req, reply) => {
    const a = await automations.create(req.auth.workspaceId, req.body, req.auth);
    return reply.code(201).header('location', `/v1/automations/${a.id}`).send(a);
  });

  app.get('/automations', {
    schema: { tags, summary: 'List automations, newest first', querystring: AutomationListQuery, response: { 200: ListOf(AutomationSchema) } },
    config: { scope: 'read:broadcasts' },
  }, (req) => {
    const { limit, cursor, status } = req.query;
    return paginate({ limit, cursor }, (w) => automations.list(req.auth.workspaceId, { ...w, status }));
  });

  app.get('/automations/:automationId', {
    schema: { tags, summary: 'Get an automation (its current version)', params: AutomationParams, response: { 200: AutomationSchema } },
    config: { scope: 'read:broadcasts' },
  }, (req) => automations.get(req.auth.workspaceId, req.params.automationId));

  app.put('/automations/:automationId', {
    schema: {
      tags, summary: 'Update an automation (partial)',
      description: 'A DRAFT changes in place. New `trigger` or `steps` on an ACTIVE or PAUSED automation make a new `version` (422 automation_incomplete if it could not run); runs in progress finish on the version they started.',
      params: AutomationParams, body: UpdateAutomationBody, response: { 200: AutomationSchema },
    },
    config: { scope: 'write:broadcasts' },
  }, (req) => automations.update(req.auth.workspaceId, req.params.automationId, req.body, req.auth));

  app.delete('/automations/:automationId', {
    schema: { tags, summary: 'Delete a DRAFT automation', description: 'One that ran keeps its runs and stats: 409 invalid_state (pause it).', params: AutomationParams, response: { 204: Type.Null() } },
    config: { scope: 'write:broadcasts' },
  }, async (req, reply) => {
    await automations.remove(req.auth.workspaceId, req.params.automationId);
    return reply.code(204).send(null);
  });

  app.post('/automations/:automationId/activate', {
    schema: {
      tags, summary: 'Activate (DRAFT or PAUSED → ACTIVE)',
      description: '422 automation_incomplete with one entry per step path when a step lacks what it needs (a send without a from on a verified domain, a subject or a body; a webhook URL the SSRF guard refuses). Runs of a PAUSED automation go on where they were.',
      params: AutomationParams, response: { 200: AutomationSchema },
    },
    config: { scope: 'write:broadcasts' },
  }, (req) => automations.activate(req.auth.workspaceId, req.params.automationId, req.auth));

  app.post('/automations/:automationId/pause', {
    schema: { tags, summary: 'Pause (ACTIVE → PAUSED): runs stop where they are', params: AutomationParams, response: { 200: AutomationSchema } },
    config: { scope: 'write:broadcasts' },
  }, (req) => automations.pause(req.auth.workspaceId, req.params.automationId));

  app.post('/automations/:automationId/trigger', {
    schema: {
      tags, summary: 'Start a run for a contact (an `api` trigger)',
      description: '202 with the run; a contact already in a run of the automation gets that run (`started: false`). 409 invalid_state unless the automation is ACTIVE with an api trigger.',
      params: AutomationParams, body: TriggerBody, response: { 202: TriggeredSchema },
    },
    config: { scope: 'write:broadcasts' },
  }, async (req, reply) => reply.code(202).send(await automations.trigger(req.auth.workspaceId, req.params.automationId, req.body.contactId)));

  app.post('/automations/:automationId/simulate', {
    schema: {
      tags, summary: 'Dry-run the automation for a contact (no side effects)',
      description: 'A real contact (`contactId`) or a made-up one (`contact`): the steps it would take, the arm of each branch and split, the time from entry of each, the rendered subject of each send. Nothing is written.',
      params: AutomationParams, body: SimulateBody, response: { 200: SimulationSchema },
    },
    config: { scope: 'read:broadcasts' },
  }, (req) => automations.simulate(req.auth.workspaceId, req.params.automationId, req.body));

  app.get('/automations/:automationId/runs', {
    schema: { tags, summary: 'List the runs, newest first', params: AutomationParams, querystring: RunListQuery, response: { 200: ListOf(RunSchema) } },
    config: { scope: 'read:broadcasts' },
  }, (req) => {
    const { limit, cursor, ...filter } = req.query;
    return paginate({ limit, cursor }, (w) => automations.runs(req.auth.workspaceId, req.params.automationId, { ...filter, ...w }));
  });

  app.get('/automations/:automationId/stats', {
    schema: { tags, summary: 'Per-step stats: entered, completed, sent, opened, clicked', params: AutomationParams, response: { 200: StatsSchema } },
    config: { scope: 'read:broadcasts' },
  }, (req) => automations.stats(req.auth.workspaceId, req.params.automationId));
}
