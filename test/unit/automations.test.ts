import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AUTOMATION_OPERATIONS,
  AUTOMATION_STATUSES,
  RUN_OPERATIONS,
  RUN_STATUSES,
  automationStatusesFor,
  automationTransition,
  runStatusesFor,
  runTransition,
} from '../../src/integrations/automations/automations.state.js';
import { Program, checkSteps, checkTrigger, splitArm } from '../../src/integrations/automations/automations.steps.js';
import { triggeredBy } from '../../src/integrations/automations/automations.engine.js';
import type { FieldError } from '../../src/errors/errors.js';
import { expectRefused } from '../helpers/transitions.js';

const I = 'invalid_state';

describe('automation state machine', () => {
  const expected: Record<string, Record<string, string>> = {
    DRAFT: { activate: 'ACTIVE', pause: I, edit: 'DRAFT', delete: 'DRAFT' },
    ACTIVE: { activate: I, pause: 'PAUSED', edit: 'ACTIVE', delete: I },
    PAUSED: { activate: 'ACTIVE', pause: I, edit: 'PAUSED', delete: I },
  };
  for (const status of AUTOMATION_STATUSES) {
    for (const op of AUTOMATION_OPERATIONS) {
      const want = expected[status]![op]!;
      it(`${status} × ${op} → ${want}`, () => {
        if (want === I) expectRefused(() => automationTransition(status, op), I);
        else expect(automationTransition(status, op)).toBe(want);
      });
    }
  }
  it('statusesFor lists where each operation starts', () => {
    expect(automationStatusesFor('activate')).toEqual(['DRAFT', 'PAUSED']);
    expect(automationStatusesFor('pause')).toEqual(['ACTIVE']);
    expect(automationStatusesFor('delete')).toEqual(['DRAFT']);
  });
});

describe('automation run state machine', () => {
  const expected: Record<string, Record<string, string>> = {
    ACTIVE: { step: 'ACTIVE', wait: 'WAITING', complete: 'COMPLETED', exit: 'EXITED' },
    WAITING: { step: 'ACTIVE', wait: 'WAITING', complete: 'COMPLETED', exit: 'EXITED' },
    COMPLETED: { step: I, wait: I, complete: I, exit: I },
    EXITED: { step: I, wait: I, complete: I, exit: I },
  };
  for (const status of RUN_STATUSES) {
    for (const op of RUN_OPERATIONS) {
      const want = expected[status]![op]!;
      it(`${status} × ${op} → ${want}`, () => {
        if (want === I) expectRefused(() => runTransition(status, op), I);
        else expect(runTransition(status, op)).toBe(want);
      });
    }
  }
  it('only open runs move', () => expect(runStatusesFor('exit')).toEqual(['ACTIVE', 'WAITING']));
});

describe('the step tree', () => {
  const tree = checkSteps(
    [
      { id: 'a', type: 'send', emailContent: { subject: 'x' } },
      { id: 'b', type: 'branch', filter: { all: [] }, then: [{ id: 'c', type: 'wait', duration: 'P1D' }], else: [] },
      {
        id: 'd',
        type: 'split',
        arms: [
          { percent: 30, steps: [] },
          {
            percent: 70,
            steps: [
              { id: 'e', type: 'exit' },
              { id: 'f', type: 'update', properties: { x: 1 } },
            ],
          },
        ],
      },
      { id: 'g', type: 'topic', topicId: 'topic_1', subscribed: false },
    ],
    [],
  );

  it('goes after a branch or split to the step that follows it, from every arm', () => {
    const p = new Program(tree);
    expect(p.first).toBe('a');
    expect(p.after('a')).toBe('b');
    expect(p.after('b', 'then')).toBe('c');
    expect(p.after('b', 'else')).toBe('d');
    expect(p.after('c')).toBe('d');
    expect(p.after('d', 0)).toBe('g');
    expect(p.after('d', 1)).toBe('e');
    expect(p.after('f')).toBe('g');
    expect(p.after('g')).toBeNull();
    expect(p.node('f')!.path).toBe('/steps/2/arms/1/steps/1');
  });

  it('gives steps without an id one, unique', () => {
    const steps = checkSteps(
      [{ type: 'exit' }, { type: 'branch', filter: { all: [] }, then: [{ type: 'exit' }], else: [{ type: 'exit' }] }],
      [],
    );
    const ids = new Program(steps).all().map((n) => n.step.id);
    expect(new Set(ids).size).toBe(4);
  });

  it('reports problems with their paths and refuses unknown fields', () => {
    const errors: FieldError[] = [];
    checkSteps(
      [
        { type: 'wait', duration: 'PT0S' },
        { type: 'update', properties: {} },
        { type: 'webhook', url: 'ftp://x' },
        { type: 'exit', extra: 1 },
      ],
      errors,
    );
    expect(errors.map((e) => e.path)).toEqual([
      '/steps/0/duration',
      '/steps/1/properties',
      '/steps/2/url',
      '/steps/3/extra',
    ]);
    const t: FieldError[] = [];
    checkTrigger({ type: 'event' }, t);
    checkTrigger({ type: 'form.submitted', formGroupId: 'fgrp_1', topicId: 'x' }, t);
    expect(t.map((e) => e.path)).toEqual(['/trigger/name', '/trigger/topicId']);
  });

  it('assigns split arms stably, in proportion', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (c, s) => splitArm(c, s, [50, 50]) === splitArm(c, s, [50, 50])));
    const counts = [0, 0, 0];
    for (let i = 0; i < 20_000; i++) counts[splitArm(`ct_${i}`, 'split', [20, 30, 50])]!++;
    expect(counts[0]! / 20_000).toBeCloseTo(0.2, 1);
    expect(counts[1]! / 20_000).toBeCloseTo(0.3, 1);
    expect(counts[2]! / 20_000).toBeCloseTo(0.5, 1);
  });
});

describe('triggers', () => {
  const ev = (type: string, data: Record<string, unknown> = {}) => ({
    id: 'evt',
    workspaceId: 'ws',
    type: type as never,
    contactId: 'ct',
    occurredAt: '2026-01-01T00:00:00.000Z',
    data,
  });
  it('match their event type and fields', () => {
    expect(
      triggeredBy({ type: 'form.submitted', formGroupId: 'g1' }, ev('form.submitted', { formGroupId: 'g1' })),
    ).toBe(true);
    expect(
      triggeredBy({ type: 'form.submitted', formGroupId: 'g1' }, ev('form.submitted', { formGroupId: 'g2' })),
    ).toBe(false);
    expect(triggeredBy({ type: 'contact.subscribed' }, ev('contact.subscribed'))).toBe(true);
    expect(triggeredBy({ type: 'contact.subscribed' }, ev('contact.subscribed', { topicId: 't' }))).toBe(false);
    expect(triggeredBy({ type: 'contact.subscribed', topicId: 't' }, ev('contact.subscribed', { topicId: 't' }))).toBe(
      true,
    );
    expect(triggeredBy({ type: 'event', name: 'x' }, ev('event.tracked', { name: 'x' }))).toBe(true);
    expect(triggeredBy({ type: 'event', name: 'x' }, ev('event.tracked', { name: 'y' }))).toBe(false);
    expect(triggeredBy({ type: 'api' }, ev('contact.created'))).toBe(false);
  });
});
