/**
 * The schemas of the segment filter and of an automation's trigger and steps describe, for the OpenAPI document and the
 * types generated from it, what validateFilter, checkTrigger and checkSteps accept and what the API answers; those
 * checks, not the schemas, decide (checkedByService). Here: whatever the checks accept, the request schemas accept, and
 * what they make of it (what is stored and answered), the response schemas accept.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../../src/errors/errors.js';
import { OPS, validateFilter } from '../../src/audience/segments/segments.filter.js';
import { FilterSchema } from '../../src/audience/segments/segments.schemas.js';
import {
  CreateAutomationBody,
  TriggerSchema,
  StepsSchema,
} from '../../src/integrations/automations/automations.schemas.js';
import { checkSteps, checkTrigger } from '../../src/integrations/automations/automations.steps.js';

/** One Ajv per schema: each recursive schema carries its definitions, which Ajv may meet only once. */
function compile(schema: object) {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  return ajv.compile(schema);
}
const filterSchema = compile(FilterSchema);
const triggerInput = compile(CreateAutomationBody.properties.trigger);
const stepsInput = compile(CreateAutomationBody.properties.steps);
const triggerSchema = compile(TriggerSchema);
const stepsSchema = compile(StepsSchema);

const scalar = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('SUBSCRIBED', 'BOUNCED', '2026-11-21T10:00:00Z', '2026-02-30T10:00:00Z', 'x'.repeat(1001)),
);
const { filter } = fc.letrec<{ filter: unknown }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small' },
    fc.record(
      {
        field: fc.constantFrom(
          'email',
          'firstName',
          'lastName',
          'status',
          'createdAt',
          'properties.plan',
          'properties.9x',
          'properties.',
          'city',
        ),
        op: fc.constantFrom(...OPS, 'like'),
        value: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 })),
      },
      { requiredKeys: ['field', 'op'] },
    ),
    fc.record(
      {
        topic: fc.oneof(fc.string({ maxLength: 70 }), fc.integer()),
        subscribed: fc.oneof(fc.boolean(), fc.constant('yes')),
      },
      { requiredKeys: ['topic'] },
    ),
    fc.record({ all: fc.array(tie('filter'), { maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('filter'), { maxLength: 3 }) }),
    fc.record({ all: fc.array(tie('filter'), { maxLength: 2 }), any: fc.array(tie('filter'), { maxLength: 2 }) }),
  ),
}));

describe('the segment filter schema', () => {
  it('accepts every filter validateFilter accepts', () => {
    let accepted = 0;
    fc.assert(
      fc.property(filter, (f) => {
        if (validateFilter(f).length) return;
        accepted++;
        expect(filterSchema(f), JSON.stringify(filterSchema.errors)).toBe(true);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});

const group = {
  any: [
    { field: 'properties.plan', op: 'in', value: ['pro', 3, true] },
    { topic: 'topic_1', subscribed: false },
  ],
};
const TRIGGERS: unknown[] = [
  { type: 'form.submitted', formGroupId: 'fg_1' },
  { type: 'form.submitted', formGroupId: 'fg_1', filter: null },
  { type: 'contact.subscribed' },
  { type: 'contact.subscribed', topicId: 'topic_1', filter: group },
  { type: 'contact.subscribed', topicId: null },
  { type: 'contact.created', filter: { all: [] } },
  { type: 'segment.entered', segmentId: 'seg_1' },
  { type: 'event', name: 'trial: day 3/7', filter: { field: 'email', op: 'endsWith', value: '@example.com' } },
  { type: 'api' },
];
const STEPS: unknown[] = [
  [
    { type: 'send' },
    {
      id: 'a',
      type: 'send',
      from: 'News <news@example.com>',
      replyTo: null,
      emailContent: { subject: 'Hi {{ contact.firstName }}', html: null, editorContent: { blocks: [1] } },
    },
    { id: 'b', type: 'branch', filter: group, then: [{ id: 'c', type: 'wait', duration: 'P1DT2H' }] },
    { type: 'branch', filter: { all: [] }, else: [{ type: 'exit' }] },
    {
      id: 'd',
      type: 'split',
      arms: [
        { percent: 30 },
        {
          percent: 70,
          steps: [
            { id: 'e', type: 'webhook', url: 'HTTPS://hooks.example.com/x' },
            { type: 'update', properties: { plan: 'pro', score: 1.5, vip: true, old: null } },
          ],
        },
      ],
    },
    { id: 'g', type: 'topic', topicId: 'topic_1', subscribed: false },
    { id: 'h', type: 'exit' },
  ],
];

describe('the automation schemas', () => {
  it.each(TRIGGERS.map((t) => [JSON.stringify(t), t]))(
    'trigger %s: the request schema takes it, the response schema what is stored',
    (_, raw) => {
      const errors: FieldError[] = [];
      const stored = checkTrigger(raw, errors);
      expect(errors).toEqual([]);
      expect(triggerInput(raw), JSON.stringify(triggerInput.errors)).toBe(true);
      expect(triggerSchema(JSON.parse(JSON.stringify(stored))), JSON.stringify(triggerSchema.errors)).toBe(true);
    },
  );

  it.each(STEPS.map((s) => [JSON.stringify(s).slice(0, 60), s]))(
    'steps %s: the request schema takes them, the response schema what is stored',
    (_, raw) => {
      const errors: FieldError[] = [];
      const stored = checkSteps(raw, errors);
      expect(errors).toEqual([]);
      expect(stepsInput(raw), JSON.stringify(stepsInput.errors)).toBe(true);
      expect(stepsSchema(JSON.parse(JSON.stringify(stored))), JSON.stringify(stepsSchema.errors)).toBe(true);
    },
  );
});
