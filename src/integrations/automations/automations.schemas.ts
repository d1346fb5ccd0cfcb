import { Type, type Static, type TSchema } from 'typebox';
import { FilterSchema } from '../../audience/index.js';
import {
  checkedByService,
  ListQuery,
  Nullable,
  PathId,
  StrictRecord,
  StringEnum,
  Timestamp,
} from '../../http/schema-helpers.js';
import { AUTOMATION_STATUSES, RUN_STATUSES } from './automations.state.js';
import { MAX_STEP_DEPTH, MAX_STEPS, STEP_TYPES, type Step } from './automations.steps.js';

/**
 * The automations API's shapes (docs/automations.md, contract §15). The trigger and the step tree are checked by
 * automations.steps.ts, which reports every problem with its JSON Pointer (a recursive tree with per-type fields
 * says more that way than a JSON Schema's oneOf errors would): their schemas here are for the OpenAPI document and
 * the types generated from it (checkedByService), in two forms: as a request may give them (ids, optional fields and
 * arms may be left out) and as the API answers them (everything filled in).
 */

const Id = Type.String({ minLength: 1, maxLength: 64 });
const StepId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

/**
 * The trigger's forms, one per type, with `filter` as given (optional) or as answered (always there, null when none),
 * and contact.subscribed's `topicId` as given (null or absent: none) or as answered (absent: none).
 */
function triggers<F extends TSchema, T extends TSchema>(filter: F, topicId: T) {
  return [
    Type.Object(
      {
        type: Type.Literal('form.submitted'),
        formGroupId: Type.String({ ...Id, description: 'any version of the form submits' }),
        filter,
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('contact.subscribed'), topicId, filter }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('contact.created'), filter }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('segment.entered'), segmentId: Id, filter }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('event'),
        name: Type.String({
          pattern: '^[A-Za-z0-9][A-Za-z0-9 ._:/-]{0,63}$',
          description: 'the event name of POST /v1/events/track',
        }),
        filter,
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('api'), filter }, { additionalProperties: false }),
  ] as const;
}

// The segment filter's definitions sit beside the trigger's and the steps' (a recursive schema nested inside another's
// definitions would be named after both in the document), so each schema holds them once.
const TopicId = Type.String({ ...Id, description: 'subscribes to this topic; none: becomes subscribed' });
const TRIGGER =
  'What makes a contact enter: form.submitted (formGroupId), contact.subscribed (topicId?), contact.created, segment.entered (segmentId), event (name), api. ' +
  '`filter`: a segment filter the contact must also match (null: none).';
const TriggerInput = checkedByService(
  Type.Cyclic(
    {
      AutomationTriggerInput: Type.Union(
        [
          ...triggers(
            Type.Optional(Type.Union([Type.Ref('SegmentFilter'), Type.Null()])),
            Type.Optional(Nullable(TopicId)),
          ),
        ],
        { description: TRIGGER },
      ),
      ...FilterSchema.$defs,
    },
    'AutomationTriggerInput',
  ),
);
export const TriggerSchema = checkedByService(
  Type.Cyclic(
    {
      AutomationTrigger: Type.Union(
        [...triggers(Type.Union([Type.Ref('SegmentFilter'), Type.Null()]), Type.Optional(TopicId))],
        { description: TRIGGER },
      ),
      ...FilterSchema.$defs,
    },
    'AutomationTrigger',
  ),
);

const STEPS = `The steps, in order; branches and splits nest (at most ${MAX_STEP_DEPTH} deep, ${MAX_STEPS} steps in all; docs/automations.md).`;
const WAIT = Type.String({
  description:
    'an ISO 8601 duration of weeks, days, hours, minutes or seconds (P2D, PT3H), more than 0 and at most 366 days',
});
const PERCENT = Type.Integer({ minimum: 1, maximum: 99, description: "the arms' percents sum to 100" });
const URL = Type.String({
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://',
  description: 'where a signed POST goes',
});
const PROPERTIES = StrictRecord(
  '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  {
    minProperties: 1,
    description: 'contact properties to set; null removes one',
  },
);
const TEXT = (max: string) => Nullable(Type.String({ description: `at most ${max}; Liquid` }));

/** The steps as a request gives them: `id` made up when left out, a send's fields null when left out, arms empty. */
const StepsInput = checkedByService(
  Type.Array(
    Type.Cyclic(
      {
        AutomationStepInput: Type.Union(
          [
            Type.Object(
              { id: Type.Optional(StepId), type: Type.Literal('wait'), duration: WAIT },
              { additionalProperties: false },
            ),
            Type.Object(
              {
                id: Type.Optional(StepId),
                type: Type.Literal('send'),
                from: Type.Optional(Nullable(Type.String())),
                replyTo: Type.Optional(Nullable(Type.String())),
                emailContent: Type.Optional(Nullable(Type.Ref('AutomationEmailContentInput'))),
              },
              { additionalProperties: false },
            ),
            Type.Object(
              { id: Type.Optional(StepId), type: Type.Literal('topic'), topicId: Id, subscribed: Type.Boolean() },
              { additionalProperties: false },
            ),
            Type.Object(
              { id: Type.Optional(StepId), type: Type.Literal('update'), properties: PROPERTIES },
              { additionalProperties: false },
            ),
            Type.Object(
              {
                id: Type.Optional(StepId),
                type: Type.Literal('branch'),
                filter: Type.Ref('SegmentFilter'),
                then: Type.Optional(Type.Array(Type.Ref('AutomationStepInput'))),
                else: Type.Optional(Type.Array(Type.Ref('AutomationStepInput'))),
              },
              { additionalProperties: false },
            ),
            Type.Object(
              {
                id: Type.Optional(StepId),
                type: Type.Literal('split'),
                arms: Type.Array(
                  Type.Object(
                    { percent: PERCENT, steps: Type.Optional(Type.Array(Type.Ref('AutomationStepInput'))) },
                    { additionalProperties: false },
                  ),
                  { minItems: 2, maxItems: 5 },
                ),
              },
              { additionalProperties: false },
            ),
            Type.Object(
              { id: Type.Optional(StepId), type: Type.Literal('webhook'), url: URL },
              { additionalProperties: false },
            ),
            Type.Object({ id: Type.Optional(StepId), type: Type.Literal('exit') }, { additionalProperties: false }),
          ],
          {
            description:
              'One step; `id` (letters, digits, - and _) is made up when left out and is unique within the automation.',
          },
        ),
        AutomationEmailContentInput: Type.Object(
          {
            subject: Type.Optional(TEXT('998 characters')),
            previewText: Type.Optional(TEXT('500 characters')),
            html: Type.Optional(TEXT('2 MiB')),
            text: Type.Optional(TEXT('2 MiB')),
            editorContent: Type.Optional(Type.Unknown({ description: 'kept as given, for an editor' })),
          },
          { additionalProperties: false },
        ),
        ...FilterSchema.$defs,
      },
      'AutomationStepInput',
    ),
    { maxItems: MAX_STEPS, description: STEPS },
  ),
);

/** The steps as the API answers them: every field there. */
export const StepsSchema = checkedByService(
  Type.Array(
    Type.Cyclic(
      {
        AutomationStep: Type.Union([
          Type.Object({ id: StepId, type: Type.Literal('wait'), duration: WAIT }),
          Type.Object({
            id: StepId,
            type: Type.Literal('send'),
            from: Nullable(Type.String()),
            replyTo: Nullable(Type.String()),
            emailContent: Type.Ref('AutomationEmailContent'),
          }),
          Type.Object({ id: StepId, type: Type.Literal('topic'), topicId: Id, subscribed: Type.Boolean() }),
          Type.Object({ id: StepId, type: Type.Literal('update'), properties: PROPERTIES }),
          Type.Object({
            id: StepId,
            type: Type.Literal('branch'),
            filter: Type.Ref('SegmentFilter'),
            then: Type.Array(Type.Ref('AutomationStep')),
            else: Type.Array(Type.Ref('AutomationStep')),
          }),
          Type.Object({
            id: StepId,
            type: Type.Literal('split'),
            arms: Type.Array(Type.Object({ percent: PERCENT, steps: Type.Array(Type.Ref('AutomationStep')) })),
          }),
          Type.Object({ id: StepId, type: Type.Literal('webhook'), url: URL }),
          Type.Object({ id: StepId, type: Type.Literal('exit') }),
        ]),
        AutomationEmailContent: Type.Object({
          subject: TEXT('998 characters'),
          previewText: TEXT('500 characters'),
          html: TEXT('2 MiB'),
          text: TEXT('2 MiB'),
          editorContent: Type.Unknown({ description: 'kept as given, for an editor' }),
        }),
        ...FilterSchema.$defs,
      },
      'AutomationStep',
    ),
    { description: STEPS },
  ),
);

// The steps the service stores and answers (automations.steps.ts) are what the schema says: a change to one that the
// other lacks fails here (test/unit/automations.test.ts checks the trigger's, which the service types more loosely).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _stepTypesAgree: Same<Static<typeof StepsSchema>[number], Step> = true;

const Name = Type.String({ minLength: 1, maxLength: 255 });

export const CreateAutomationBody = Type.Object(
  { name: Name, trigger: TriggerInput, steps: Type.Optional(StepsInput) },
  { additionalProperties: false },
);
export type CreateAutomationInput = Static<typeof CreateAutomationBody>;

export const UpdateAutomationBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    name: Type.Optional(Name),
    trigger: Type.Optional(TriggerInput),
    steps: Type.Optional(StepsInput),
  },
  { additionalProperties: false },
);
export type UpdateAutomationInput = Static<typeof UpdateAutomationBody>;

const AutomationStatus = StringEnum(AUTOMATION_STATUSES);

export const AutomationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: AutomationStatus,
  trigger: TriggerSchema,
  steps: StepsSchema,
  version: Type.Integer({
    description:
      'grows when trigger or steps of an ACTIVE or PAUSED automation change; runs finish on the version they started',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Automation = Static<typeof AutomationSchema>;

export const AutomationParams = Type.Object({ automationId: PathId });
export const AutomationListQuery = Type.Object(
  { ...ListQuery.properties, status: Type.Optional(AutomationStatus) },
  { additionalProperties: false },
);

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
  exitReason: Nullable(
    Type.String({
      description:
        'unsubscribed, bounced, complained, deleted, exit step; a loop guard: guard: cycle: …, guard: depth: …, guard: cooldown: …, guard: daily cap: …',
    }),
  ),
});
export const RunListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(RunStatus),
    contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const StatsSchema = Type.Object({
  steps: Type.Array(
    Type.Object({
      stepId: Type.String(),
      entered: Type.Integer(),
      completed: Type.Integer(),
      sent: Type.Integer(),
      opened: Type.Integer({ description: 'unique, machines left out' }),
      clicked: Type.Integer({ description: 'unique, machines left out' }),
    }),
  ),
});

export const TriggerBody = Type.Object(
  { contactId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const TriggeredSchema = Type.Object({
  runId: Type.String(),
  started: Type.Boolean({ description: 'false: the contact was already in a run of the automation (its id)' }),
});

export const SimulateBody = Type.Union([
  Type.Object({ contactId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  Type.Object(
    {
      contact: Type.Object(
        {
          email: Type.String({ minLength: 3, maxLength: 320 }),
          firstName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
          lastName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
          properties: Type.Optional(
            Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 200 }),
          ),
          topics: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
              maxItems: 200,
              description: 'ids of the topics the contact is subscribed to',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
]);
export type SimulateInput = Static<typeof SimulateBody>;

export const SimulationSchema = Type.Object({
  steps: Type.Array(
    Type.Object({
      stepId: Type.String(),
      type: StringEnum(STEP_TYPES),
      at: Type.String({ description: 'time from entry, ISO 8601 (PT0S, P2D)' }),
      arm: Type.Optional(
        Type.Union([
          StringEnum(['then', 'else'] as const),
          Type.Integer({ description: "the index of a split's arm" }),
        ]),
      ),
      subject: Type.Optional(Nullable(Type.String())),
    }),
  ),
  exited: Nullable(Type.String({ description: 'why the run would end early (an exit step), or null' })),
});
export type Simulation = Static<typeof SimulationSchema>;
