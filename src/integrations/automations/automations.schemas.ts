import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { AUTOMATION_STATUSES, RUN_STATUSES } from './automations.state.js';
import { STEP_TYPES, TRIGGER_TYPES } from './automations.steps.js';

/**
 * The automations API's shapes (docs/automations.md, contract §15). The trigger and the step tree are checked by
 * automations.steps.ts, which reports every problem with its JSON Pointer (a recursive tree with per-type fields
 * says more that way than a JSON Schema's oneOf errors would); the schemas here describe them for the OpenAPI.
 */

const TriggerSchema = Type.Unsafe<Record<string, unknown>>({
  type: 'object', required: ['type'],
  properties: {
    type: { type: 'string', enum: [...TRIGGER_TYPES] },
    formGroupId: { type: 'string' }, topicId: { type: 'string' }, segmentId: { type: 'string' }, name: { type: 'string' },
    filter: { description: 'a segment filter (docs/segments.md) the contact must match to enter' },
  },
  description: 'What makes a contact enter: form.submitted (formGroupId), contact.subscribed (topicId?), contact.created, segment.entered (segmentId), event (name), api',
});

const StepsSchema = Type.Unsafe<unknown[]>({
  type: 'array', maxItems: 100,
  items: {
    type: 'object', required: ['type'],
    properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, type: { type: 'string', enum: [...STEP_TYPES] } },
    description: 'wait {duration}, send {from, replyTo?, emailContent}, topic {topicId, subscribed}, update {properties}, branch {filter, then, else}, split {arms: [{percent, steps}]}, webhook {url}, exit',
  },
  description: 'The steps, in order; branches and splits nest (docs/automations.md)',
});

const Name = Type.String({ minLength: 1, maxLength: 255 });

export const CreateAutomationBody = Type.Object({ name: Name, trigger: TriggerSchema, steps: Type.Optional(StepsSchema) }, { additionalProperties: false });
export type CreateAutomationInput = Static<typeof CreateAutomationBody>;

export const UpdateAutomationBody = Type.Object({
  id: Type.Optional(Type.String()), name: Type.Optional(Name), trigger: Type.Optional(TriggerSchema), steps: Type.Optional(StepsSchema),
}, { additionalProperties: false });
export type UpdateAutomationInput = Static<typeof UpdateAutomationBody>;

const AutomationStatus = StringEnum(AUTOMATION_STATUSES);

export const AutomationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: AutomationStatus,
  trigger: Type.Record(Type.String(), Type.Unknown()),
  steps: Type.Array(Type.Unknown()),
  version: Type.Integer({ description: 'grows when trigger or steps of an ACTIVE or PAUSED automation change; runs finish on the version they started' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Automation = Static<typeof AutomationSchema>;

export const AutomationParams = Type.Object({ automationId: PathId });
export const AutomationListQuery = Type.Object({ ...ListQuery.properties, status: Type.Optional(AutomationStatus) }, { additionalProperties: false });

export const RunStatus = StringEnum(RUN_STATUSES);
export const RunSchema = Type.Object({
  id: Type.String(),
  contactId: Type.String(),
  version: Type.Integer(),
  status: RunStatus,
  stepId: Nullable(Type.String({ description: 'the step the run is at (null once over)' })),
  dueAt: Nullable(Timestamp),
  enteredAt: Timestamp,
  finishedAt: Nullable(Timestamp),
  exitReason: Nullable(Type.String({ description: 'unsubscribed, bounced, complained, deleted, exit step; a loop guard: guard: cycle: …, guard: depth: …, guard: cooldown: …, guard: daily cap: …' })),
});
export const RunListQuery = Type.Object({
  ...ListQuery.properties, status: Type.Optional(RunStatus), contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
}, { additionalProperties: false });

export const StatsSchema = Type.Object({
  steps: Type.Array(Type.Object({
    stepId: Type.String(), entered: Type.Integer(), completed: Type.Integer(), sent: Type.Integer(),
    opened: Type.Integer({ description: 'unique, machines left out' }), clicked: Type.Integer({ description: 'unique, machines left out' }),
  })),
});

export const TriggerBody = Type.Object({ contactId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const TriggeredSchema = Type.Object({ runId: Type.String(), started: Type.Boolean({ description: 'false: the contact was already in a run of the automation (its id)' }) });

export const SimulateBody = Type.Union([
  Type.Object({ contactId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  Type.Object({
    contact: Type.Object({
      email: Type.String({ minLength: 3, maxLength: 320 }),
      firstName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      lastName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      properties: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 200 })),
      topics: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 200, description: 'ids of the topics the contact is subscribed to' })),
    }, { additionalProperties: false }),
  }, { additionalProperties: false }),
]);
export type SimulateInput = Static<typeof SimulateBody>;

export const SimulationSchema = Type.Object({
  steps: Type.Array(Type.Object({
    stepId: Type.String(),
    type: Type.String(),
    at: Type.String({ description: 'time from entry, ISO 8601 (PT0S, P2D)' }),
    arm: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
    subject: Type.Optional(Nullable(Type.String())),
  })),
  exited: Nullable(Type.String({ description: 'why the run would end early (an exit step), or null' })),
});
export type Simulation = Static<typeof SimulationSchema>;
