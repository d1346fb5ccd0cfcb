import { type DomainError, conflict } from '../../errors/errors.js';
import type { AutomationRunStatus, AutomationStatus } from '../../db/schema.js';

/**
 * The two state machines of automations (CONTEXT.md), each in one table: every operation against every status is
 * the status it leads to or the error it answers; every status change goes through them.
 */

type Outcome<S> = S | (() => DomainError);
const invalid = (what: string) => () => conflict('invalid_state', what);

// ---- the automation ----------------------------------------------------------------------------

/**
 * - activate: POST …/activate (DRAFT or PAUSED → ACTIVE; its steps checked first: 422 automation_incomplete).
 * - pause: POST …/pause (runs stay where they are; nothing of them is claimed until the next activate).
 * - edit: PUT (a DRAFT changes in place; ACTIVE and PAUSED get a new version when trigger or steps change).
 * - delete: DELETE (DRAFT only: an automation that ran keeps its runs and stats; pause it instead).
 */
export const AUTOMATION_OPERATIONS = ['activate', 'pause', 'edit', 'delete'] as const;
export type AutomationOperation = (typeof AUTOMATION_OPERATIONS)[number];

export const AUTOMATION_TRANSITIONS: Record<
  AutomationStatus,
  Record<AutomationOperation, Outcome<AutomationStatus>>
> = {
  DRAFT: {
    activate: 'ACTIVE',
    pause: invalid('only an ACTIVE automation can be paused'),
    edit: 'DRAFT',
    delete: 'DRAFT',
  },
  ACTIVE: {
    activate: invalid('the automation is already ACTIVE'),
    pause: 'PAUSED',
    edit: 'ACTIVE',
    delete: invalid('an automation that ran keeps its runs and stats: pause it instead'),
  },
  PAUSED: {
    activate: 'ACTIVE',
    pause: invalid('the automation is already PAUSED'),
    edit: 'PAUSED',
    delete: invalid('an automation that ran keeps its runs and stats; it stays PAUSED'),
  },
};

/**
 * The statuses, in the table's order: the one list, from which the API's schema is built (automations.schemas.ts). The table is a
 * Record of the column's type (db/schema.ts), so it names each status once and none other.
 */
export const AUTOMATION_STATUSES = Object.keys(AUTOMATION_TRANSITIONS) as AutomationStatus[];

export function automationStatusesFor(op: AutomationOperation): AutomationStatus[] {
  return AUTOMATION_STATUSES.filter((s) => typeof AUTOMATION_TRANSITIONS[s][op] === 'string');
}

export function automationTransition(status: AutomationStatus, op: AutomationOperation): AutomationStatus {
  const outcome = AUTOMATION_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}

// ---- a run -------------------------------------------------------------------------------------

/**
 * - step: the run did a step and is due again now (ACTIVE).
 * - wait: the run reached a `wait` (WAITING until its due time; a claim wakes it then).
 * - complete: the run went past its last step.
 * - exit: an `exit` step, or its contact unsubscribed, bounced, complained or was deleted.
 */
export const RUN_OPERATIONS = ['step', 'wait', 'complete', 'exit'] as const;
export type RunOperation = (typeof RUN_OPERATIONS)[number];

const over = invalid('the run is over');
export const RUN_TRANSITIONS: Record<AutomationRunStatus, Record<RunOperation, Outcome<AutomationRunStatus>>> = {
  ACTIVE: { step: 'ACTIVE', wait: 'WAITING', complete: 'COMPLETED', exit: 'EXITED' },
  WAITING: { step: 'ACTIVE', wait: 'WAITING', complete: 'COMPLETED', exit: 'EXITED' },
  COMPLETED: { step: over, wait: over, complete: over, exit: over },
  EXITED: { step: over, wait: over, complete: over, exit: over },
};

/** A run's statuses, in the table's order, the same way. */
export const RUN_STATUSES = Object.keys(RUN_TRANSITIONS) as AutomationRunStatus[];

export function runStatusesFor(op: RunOperation): AutomationRunStatus[] {
  return RUN_STATUSES.filter((s) => typeof RUN_TRANSITIONS[s][op] === 'string');
}

export function runTransition(status: AutomationRunStatus, op: RunOperation): AutomationRunStatus {
  const outcome = RUN_TRANSITIONS[status][op];
  if (typeof outcome === 'function') throw outcome();
  return outcome;
}

/** The statuses of a run still going: the claim takes these, and one of them per automation and contact at most. */
export const OPEN_RUN_STATUSES: readonly AutomationRunStatus[] = ['ACTIVE', 'WAITING'];
