import { sql } from 'kysely';
import type { Dialect, Executor } from '../../db/connection.js';
import type { AutomationRunStatus, AutomationStatus } from '../../db/schema.js';
import type { EventType } from '../../outbox/index.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import type { Step, Trigger } from './automations.steps.js';
import { OPEN_RUN_STATUSES } from './automations.state.js';

/**
 * Queries of automations (CONTEXT.md). Everything the API reads or changes names its workspace; the intake and the
 * run claim serve every workspace, so they look across workspaces by design (as the delivery pipeline's claim).
 */

// ---- automations and versions -------------------------------------------------------------------

export interface AutomationRow {
  id: string;
  workspaceId: string;
  name: string;
  status: AutomationStatus;
  version: number;
  trigger: Trigger;
  steps: Step[];
  createdAt: string;
  updatedAt: string;
}

/** What a version's runnable side refers to: the broadcast row of each send step, the endpoint of each webhook step. */
export interface VersionTargets {
  send: Record<string, string>;
  webhook: Record<string, string>;
}

export async function insertAutomation(
  db: Executor,
  a: { id: string; workspaceId: string; name: string; trigger: Trigger; steps: Step[] },
  now: string,
): Promise<void> {
  await db
    .insertInto('automations')
    .values({
      id: a.id,
      workspace_id: a.workspaceId,
      name: a.name,
      status: 'DRAFT',
      version: 1,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('automation_versions')
    .values({
      automation_id: a.id,
      version: 1,
      workspace_id: a.workspaceId,
      trigger: JSON.stringify(a.trigger),
      steps: JSON.stringify(a.steps),
      messages: null,
      created_at: now,
    })
    .execute();
}

const joined = (db: Executor) =>
  db
    .selectFrom('automations as a')
    .innerJoin('automation_versions as v', (j) =>
      j.onRef('v.automation_id', '=', 'a.id').onRef('v.version', '=', 'a.version'),
    )
    .select([
      'a.id',
      'a.workspace_id',
      'a.name',
      'a.status',
      'a.version',
      'a.created_at',
      'a.updated_at',
      'v.trigger',
      'v.steps',
    ]);

function toRow(r: {
  id: string;
  workspace_id: string;
  name: string;
  status: AutomationStatus;
  version: number;
  created_at: string;
  updated_at: string;
  trigger: string | object;
  steps: string | object;
}): AutomationRow {
  const parse = <T>(v: string | object): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    status: r.status,
    version: Number(r.version),
    trigger: parse<Trigger>(r.trigger),
    steps: parse<Step[]>(r.steps),
    createdAt: toIso(r.created_at),
    updatedAt: toIso(r.updated_at),
  };
}

export async function getAutomation(db: Executor, workspaceId: string, id: string): Promise<AutomationRow | undefined> {
  const r = await joined(db).where('a.workspace_id', '=', workspaceId).where('a.id', '=', id).executeTakeFirst();
  return r ? toRow(r) : undefined;
}

export async function listAutomations(
  db: Executor,
  workspaceId: string,
  opts: { status?: AutomationStatus; limit: number; beforeId?: string },
): Promise<AutomationRow[]> {
  let q = joined(db).where('a.workspace_id', '=', workspaceId);
  if (opts.status) q = q.where('a.status', '=', opts.status);
  if (opts.beforeId) q = q.where('a.id', '<', opts.beforeId);
  return (await q.orderBy('a.id', 'desc').limit(opts.limit).execute()).map(toRow);
}

/** Moves the automation from `expected` (a concurrent move wins: false) and sets the name and version given. */
export async function updateAutomation(
  db: Executor,
  workspaceId: string,
  id: string,
  expected: { status: AutomationStatus; version: number; updatedAt: string },
  set: { status?: AutomationStatus; name?: string; version?: number },
  now: string,
): Promise<boolean> {
  // Guarded by what the caller read (status, version, updated_at): of two concurrent changes, the second is refused.
  const res = await db
    .updateTable('automations')
    .set({ ...set, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', expected.status)
    .where('version', '=', expected.version)
    .where('updated_at', '=', expected.updatedAt)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** A DRAFT's edit: its (only) version changes in place. */
export async function replaceVersion(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
  trigger: Trigger,
  steps: Step[],
): Promise<void> {
  await db
    .updateTable('automation_versions')
    .set({ trigger: JSON.stringify(trigger), steps: JSON.stringify(steps) })
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', id)
    .where('version', '=', version)
    .execute();
}

export async function insertVersion(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
  trigger: Trigger,
  steps: Step[],
  now: string,
): Promise<void> {
  await db
    .insertInto('automation_versions')
    .values({
      automation_id: id,
      version,
      workspace_id: workspaceId,
      trigger: JSON.stringify(trigger),
      steps: JSON.stringify(steps),
      messages: null,
      created_at: now,
    })
    .execute();
}

export async function setVersionTargets(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
  targets: VersionTargets,
): Promise<void> {
  await db
    .updateTable('automation_versions')
    .set({ messages: JSON.stringify(targets) })
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', id)
    .where('version', '=', version)
    .execute();
}

export interface VersionRow {
  trigger: Trigger;
  steps: Step[];
  targets: VersionTargets | null;
}

export async function getVersion(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
): Promise<VersionRow | undefined> {
  const r = await db
    .selectFrom('automation_versions')
    .select(['trigger', 'steps', 'messages'])
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst();
  if (!r) return undefined;
  const parse = <T>(v: string | object | null): T | null =>
    v === null ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as T);
  return {
    trigger: parse<Trigger>(r.trigger)!,
    steps: parse<Step[]>(r.steps)!,
    targets: parse<VersionTargets>(r.messages),
  };
}

export async function deleteAutomation(
  db: Executor,
  workspaceId: string,
  id: string,
  expected: AutomationStatus,
): Promise<boolean> {
  const res = await db
    .deleteFrom('automations')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('status', '=', expected)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The ACTIVE automations of these workspaces with their current trigger (the intake). */
export async function activeAutomationsOf(
  db: Executor,
  workspaceIds: readonly string[],
): Promise<{ id: string; workspaceId: string; version: number; trigger: Trigger }[]> {
  if (!workspaceIds.length) return [];
  const rows = await joined(db)
    .where('a.status', '=', 'ACTIVE')
    .where('a.workspace_id', 'in', [...workspaceIds])
    .execute();
  return rows.map(toRow).map((a) => ({ id: a.id, workspaceId: a.workspaceId, version: a.version, trigger: a.trigger }));
}

// ---- the intake's events -------------------------------------------------------------------------

export interface RoutedEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  contactId: string | null;
  occurredAt: string;
  data: Record<string, unknown>;
}

/**
 * Takes up to `limit` events the automations have not looked at, oldest first, and marks them, in the caller's
 * transaction (the intake's: the runs they start are written in it too, so an event starts its runs exactly
 * once). PostgreSQL skips events another worker is taking (FOR UPDATE SKIP LOCKED).
 */
export async function claimUnroutedEvents(
  db: Executor,
  limit: number,
  opts: { skipLocked: boolean },
): Promise<RoutedEvent[]> {
  const rows = await db
    .updateTable('events')
    .set({ routed: 1 })
    .where('id', 'in', (eb) => {
      const oldest = eb.selectFrom('events').select('id').where('routed', '=', 0).orderBy('id').limit(limit);
      return opts.skipLocked ? oldest.forUpdate().skipLocked() : oldest;
    })
    .returning(['id', 'workspace_id', 'type', 'contact_id', 'occurred_at', 'data'])
    .execute();
  return rows
    .map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      type: r.type as EventType,
      contactId: r.contact_id,
      occurredAt: toIso(r.occurred_at),
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

// ---- runs ----------------------------------------------------------------------------------------

/**
 * Starts a run of the automation's current version for the contact, due now, unless the contact already has an
 * open one (the partial unique index decides, on both databases). Returns the new run's id, or undefined.
 */
export async function insertRun(
  db: Executor,
  r: {
    workspaceId: string;
    automationId: string;
    version: number;
    contactId: string;
    firstStepId: string | null;
    triggerEventId: string | null;
    /** The automations whose runs led to this one (the loop guard's chain), or null. */
    causeChain?: readonly string[] | null;
    /** A run refused by a loop guard: written EXITED at once, with this reason, so that the refusal shows in the runs. */
    refused?: string;
  },
  now: string,
): Promise<string | undefined> {
  const id = newId('run');
  const over = r.firstStepId === null || r.refused !== undefined;
  const res = await db
    .insertInto('automation_runs')
    .values({
      id,
      workspace_id: r.workspaceId,
      automation_id: r.automationId,
      version: r.version,
      contact_id: r.contactId,
      status: r.refused !== undefined ? 'EXITED' : over ? 'COMPLETED' : 'ACTIVE',
      step_id: over ? null : r.firstStepId,
      step_started_at: null,
      due_at: over ? null : now,
      lease_owner: null,
      lease_expires_at: null,
      trigger_event_id: r.triggerEventId,
      entered_at: now,
      updated_at: now,
      finished_at: over ? now : null,
      exit_reason: r.refused ?? null,
      cause_chain: r.causeChain?.length ? JSON.stringify(r.causeChain) : null,
    })
    .onConflict((oc) => oc.columns(['automation_id', 'contact_id']).where('finished_at', 'is', null).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0 ? id : undefined;
}

/** The automation of a run and the chain that led to it: what a run its step causes inherits (the loop guard). */
export async function causeOf(
  db: Executor,
  workspaceId: string,
  runId: string,
): Promise<{ automationId: string; chain: string[] } | undefined> {
  const r = await db
    .selectFrom('automation_runs')
    .select(['automation_id', 'cause_chain'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', runId)
    .executeTakeFirst();
  return r
    ? { automationId: r.automation_id, chain: r.cause_chain ? (JSON.parse(r.cause_chain) as string[]) : [] }
    : undefined;
}

/** The exit reason of a run the re-entry cooldown refused starts with this (such runs do not extend the cooldown). */
export const COOLDOWN_REASON = 'guard: cooldown: ';

/**
 * When the contact's last run of the automation that ended at or after `since` ended (the re-entry cooldown), or
 * undefined. Runs the cooldown itself refused do not count: a refusal must not push the cooldown further out.
 */
export async function lastEndSince(
  db: Executor,
  workspaceId: string,
  automationId: string,
  contactId: string,
  since: string,
): Promise<string | undefined> {
  const r = await db
    .selectFrom('automation_runs')
    .select('finished_at')
    .where('automation_id', '=', automationId)
    .where('contact_id', '=', contactId)
    .where('finished_at', '>=', since)
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('exit_reason', 'is', null), eb('exit_reason', 'not like', `${COOLDOWN_REASON}%`)]))
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r?.finished_at ? toIso(r.finished_at) : undefined;
}

/** Whether a run of the automation for the contact, refused with a reason starting with `prefix`, ended at or after `since`. */
export async function refusedSince(
  db: Executor,
  workspaceId: string,
  automationId: string,
  contactId: string,
  prefix: string,
  since: string,
): Promise<boolean> {
  const r = await db
    .selectFrom('automation_runs')
    .select('id')
    .where('automation_id', '=', automationId)
    .where('contact_id', '=', contactId)
    .where('finished_at', '>=', since)
    .where('workspace_id', '=', workspaceId)
    .where('exit_reason', 'like', `${prefix}%`)
    .limit(1)
    .executeTakeFirst();
  return r !== undefined;
}

/**
 * The messages automations queued for the contact since `since`, of every automation (the daily cap). PostgreSQL
 * first locks the contact's row, so that two walks of its runs count one after the other: the second sees the first's
 * message (it committed before the lock was let go), and the cap holds with runs walked in parallel. SQLite has one
 * writer at a time.
 */
export async function lockAndCountAutomatedMessages(
  db: Executor,
  dialect: Dialect,
  workspaceId: string,
  contactId: string,
  since: string,
): Promise<number> {
  if (dialect === 'postgres')
    await db
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', contactId)
      .forUpdate()
      .execute();
  const r = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('contact_id', '=', contactId)
    .where('automation_run_id', 'is not', null)
    .where('created_at', '>=', since)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function openRunOf(
  db: Executor,
  workspaceId: string,
  automationId: string,
  contactId: string,
): Promise<string | undefined> {
  return (
    await db
      .selectFrom('automation_runs')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('automation_id', '=', automationId)
      .where('contact_id', '=', contactId)
      .where('finished_at', 'is', null)
      .executeTakeFirst()
  )?.id;
}

/**
 * Ends the contact's open runs that started before it left (it unsubscribed, bounced, complained or was deleted, at
 * `leftAt`); a run it started since, once back, goes on. Returns how many.
 */
export async function exitRunsOfContact(
  db: Executor,
  workspaceId: string,
  contactId: string,
  reason: string,
  leftAt: string,
  now: string,
): Promise<number> {
  const res = await db
    .updateTable('automation_runs')
    .set({
      status: 'EXITED',
      exit_reason: reason,
      finished_at: now,
      updated_at: now,
      step_id: null,
      due_at: null,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', '=', contactId)
    .where('finished_at', 'is', null)
    .where('entered_at', '<=', leftAt)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * The contacts confirmed (became SUBSCRIBED): their runs that wait at a send step for that confirmation (WAITING with
 * no step start: a `wait` step has one) are due now instead of at their next recheck. Returns how many.
 */
export async function wakeRunsAwaitingConfirmation(
  db: Executor,
  workspaceId: string,
  contactIds: readonly string[],
  now: string,
): Promise<number> {
  if (!contactIds.length) return 0;
  const res = await db
    .updateTable('automation_runs')
    .set({ due_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', 'in', [...new Set(contactIds)])
    .where('finished_at', 'is', null)
    .where('status', '=', 'WAITING')
    .where('step_started_at', 'is', null)
    .where('due_at', '>', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export interface ClaimedRun {
  id: string;
  workspaceId: string;
  automationId: string;
  version: number;
  contactId: string;
  status: AutomationRunStatus;
  stepId: string;
  stepStartedAt: string | null;
  dueAt: string;
  enteredAt: string;
}

/**
 * Claims up to `limit` open runs that are due (a step to do, or a wait over) of ACTIVE automations, with a lease:
 * runs whose lease ran out too (their worker died mid-step; the step's transaction rolled back, so it is done again,
 * once). PostgreSQL skips runs other workers are claiming. One range of the partial (due_at) index.
 */
export async function claimRuns(
  db: Executor,
  dialect: Dialect,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<ClaimedRun[]> {
  let due = db
    .selectFrom('automation_runs')
    .select('id')
    .where('finished_at', 'is', null)
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
    .where('automation_id', 'in', (eb) => eb.selectFrom('automations').select('id').where('status', '=', 'ACTIVE'))
    .orderBy('due_at')
    .limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const rows = await db
    .updateTable('automation_runs')
    .set({ lease_owner: owner, lease_expires_at: leaseUntil })
    .where('id', 'in', due)
    .returning([
      'id',
      'workspace_id',
      'automation_id',
      'version',
      'contact_id',
      'status',
      'step_id',
      'step_started_at',
      'due_at',
      'entered_at',
    ])
    .execute();
  return rows
    .filter((r) => r.step_id !== null)
    .map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      automationId: r.automation_id,
      version: Number(r.version),
      contactId: r.contact_id,
      status: r.status,
      stepId: r.step_id!,
      stepStartedAt: toIso(r.step_started_at),
      dueAt: toIso(r.due_at!),
      enteredAt: toIso(r.entered_at),
    }));
}

/**
 * Moves a run on after a step, in the step's transaction, provided this worker still holds the run at that step
 * (its lease not run out, nobody took it over): false otherwise, and the caller rolls the step back.
 */
export async function moveRun(
  db: Executor,
  run: ClaimedRun,
  owner: string,
  now: string,
  set: {
    status: AutomationRunStatus;
    stepId: string | null;
    stepStartedAt: string | null;
    dueAt: string | null;
    exitReason?: string | null;
    keepLease?: boolean;
  },
): Promise<boolean> {
  const over = set.status === 'COMPLETED' || set.status === 'EXITED';
  const res = await db
    .updateTable('automation_runs')
    .set({
      status: set.status,
      step_id: set.stepId,
      step_started_at: set.stepStartedAt,
      due_at: set.dueAt,
      updated_at: now,
      failures: 0,
      ...(over
        ? { finished_at: now, exit_reason: set.exitReason ?? null, lease_owner: null, lease_expires_at: null }
        : {}),
      ...(!over && !set.keepLease ? { lease_owner: null, lease_expires_at: null } : {}),
    })
    .where('workspace_id', '=', run.workspaceId)
    .where('id', '=', run.id)
    .where('lease_owner', '=', owner)
    .where('lease_expires_at', '>', now)
    .where('step_id', '=', run.stepId)
    .where('finished_at', 'is', null)
    // Paused meanwhile: the walk rolls back, and the run waits where it was.
    .where('automation_id', 'in', (eb) => eb.selectFrom('automations').select('id').where('status', '=', 'ACTIVE'))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** A run's walk failed (an error, not a lost lease). Tried again later, with a growing pause; after `max` failures in a row it exits. */
export async function recordRunFailure(
  db: Executor,
  run: ClaimedRun,
  owner: string,
  error: string,
  max: number,
  now: string,
): Promise<void> {
  const row = await db
    .selectFrom('automation_runs')
    .select('failures')
    .where('workspace_id', '=', run.workspaceId)
    .where('id', '=', run.id)
    .executeTakeFirst();
  const failures = Number(row?.failures ?? 0) + 1;
  let q = db
    .updateTable('automation_runs')
    .where('workspace_id', '=', run.workspaceId)
    .where('id', '=', run.id)
    .where('lease_owner', '=', owner)
    .where('finished_at', 'is', null);
  if (failures >= max) {
    q = q.set({
      status: 'EXITED',
      exit_reason: `failed: ${error}`.slice(0, 500),
      finished_at: now,
      updated_at: now,
      step_id: null,
      due_at: null,
      lease_owner: null,
      lease_expires_at: null,
      failures,
    });
  } else {
    const due = new Date(Date.parse(now) + 60_000 * 2 ** (failures - 1)).toISOString();
    q = q.set({ failures, due_at: due, lease_owner: null, lease_expires_at: null, updated_at: now });
  }
  await q.execute();
}

/** Lets go of runs this worker claimed and did not get to (stopping): due as they were, claimable at once. */
export async function releaseRuns(db: Executor, owner: string, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await db
    .updateTable('automation_runs')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', owner)
    .execute();
}

/** Records that the run went through the step (its primary key: once per run); false if it already had. */
export async function insertRunStep(
  db: Executor,
  r: {
    runId: string;
    stepId: string;
    workspaceId: string;
    automationId: string;
    arm?: string | null;
    deliveryId?: string | null;
    completed: boolean;
  },
  now: string,
): Promise<void> {
  await db
    .insertInto('automation_run_steps')
    .values({
      run_id: r.runId,
      step_id: r.stepId,
      workspace_id: r.workspaceId,
      automation_id: r.automationId,
      entered_at: now,
      completed_at: r.completed ? now : null,
      arm: r.arm ?? null,
      delivery_id: r.deliveryId ?? null,
    })
    .execute();
}

export async function completeRunStep(db: Executor, runId: string, stepId: string, now: string): Promise<void> {
  await db
    .updateTable('automation_run_steps')
    .set({ completed_at: now })
    .where('run_id', '=', runId)
    .where('step_id', '=', stepId)
    .where('completed_at', 'is', null)
    .execute();
}

export interface RunRecord {
  id: string;
  contactId: string;
  version: number;
  status: AutomationRunStatus;
  stepId: string | null;
  dueAt: string | null;
  enteredAt: string;
  finishedAt: string | null;
  exitReason: string | null;
}

export async function listRuns(
  db: Executor,
  workspaceId: string,
  automationId: string,
  opts: { status?: AutomationRunStatus; contactId?: string; limit: number; beforeId?: string },
): Promise<RunRecord[]> {
  let q = db
    .selectFrom('automation_runs')
    .select(['id', 'contact_id', 'version', 'status', 'step_id', 'due_at', 'entered_at', 'finished_at', 'exit_reason'])
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', automationId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.contactId) q = q.where('contact_id', '=', opts.contactId);
  if (opts.beforeId) q = q.where('id', '<', opts.beforeId);
  return (await q.orderBy('id', 'desc').limit(opts.limit).execute()).map((r) => ({
    id: r.id,
    contactId: r.contact_id,
    version: Number(r.version),
    status: r.status,
    stepId: r.step_id,
    dueAt: toIso(r.due_at),
    enteredAt: toIso(r.entered_at),
    finishedAt: toIso(r.finished_at),
    exitReason: r.exit_reason,
  }));
}

export interface StepStats {
  stepId: string;
  entered: number;
  completed: number;
  sent: number;
  opened: number;
  clicked: number;
}

/**
 * Per step id, over every version: runs that entered and completed it (automation_run_steps), and for send steps
 * the messages sent, opened and clicked (unique per message, machines left out) from the deliveries and events of
 * the step's broadcast rows.
 */
export async function stepStats(db: Executor, workspaceId: string, automationId: string): Promise<StepStats[]> {
  const stats = new Map<string, StepStats>();
  const of = (stepId: string) => {
    let s = stats.get(stepId);
    if (!s) stats.set(stepId, (s = { stepId, entered: 0, completed: 0, sent: 0, opened: 0, clicked: 0 }));
    return s;
  };
  const steps = await db
    .selectFrom('automation_run_steps')
    .select(['step_id', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.count<number>('completed_at').as('c')])
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', automationId)
    .groupBy('step_id')
    .execute();
  for (const r of steps) Object.assign(of(r.step_id), { entered: Number(r.n), completed: Number(r.c) });
  const messages = await db
    .selectFrom('broadcasts')
    .select(['id', 'automation_step_id'])
    .where('workspace_id', '=', workspaceId)
    .where('automation_id', '=', automationId)
    .execute();
  if (!messages.length) return [...stats.values()];
  const stepOf = new Map(messages.map((m) => [m.id, m.automation_step_id!]));
  const ids = [...stepOf.keys()];
  const sent = await db
    .selectFrom('deliveries')
    .select(['broadcast_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', 'in', ids)
    .where('sent_at', 'is not', null)
    .groupBy('broadcast_id')
    .execute();
  for (const r of sent) of(stepOf.get(r.broadcast_id)!).sent += Number(r.n);
  const engaged = await db
    .selectFrom('events')
    .select(['broadcast_id', 'type', sql<number>`count(distinct delivery_id)`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('broadcast_id', 'in', ids)
    .where('type', 'in', ['email.opened', 'email.clicked'])
    .where('machine', '=', 0)
    .groupBy(['broadcast_id', 'type'])
    .execute();
  for (const r of engaged) {
    const s = of(stepOf.get(r.broadcast_id!)!);
    if (r.type === 'email.opened') s.opened += Number(r.n);
    else s.clicked += Number(r.n);
  }
  return [...stats.values()];
}

// ---- segment entry -------------------------------------------------------------------------------

/** The contacts counted as in the watched segment (a segment.entered trigger): entry is a move from out to in. */
export async function replaceMembers(
  db: Executor,
  automationId: string,
  contactIds: readonly string[],
  first: boolean,
): Promise<void> {
  if (first) await db.deleteFrom('automation_segment_members').where('automation_id', '=', automationId).execute();
  for (let i = 0; i < contactIds.length; i += 500) {
    await db
      .insertInto('automation_segment_members')
      .values(contactIds.slice(i, i + 500).map((c) => ({ automation_id: automationId, contact_id: c })))
      .onConflict((oc) => oc.columns(['automation_id', 'contact_id']).doNothing())
      .execute();
  }
}

/** Sets whether the contact is in the watched segment; returns whether it was before. */
export async function setMember(
  db: Executor,
  automationId: string,
  contactId: string,
  member: boolean,
): Promise<boolean> {
  if (member) {
    const res = await db
      .insertInto('automation_segment_members')
      .values({ automation_id: automationId, contact_id: contactId })
      .onConflict((oc) => oc.columns(['automation_id', 'contact_id']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 0;
  }
  const res = await db
    .deleteFrom('automation_segment_members')
    .where('automation_id', '=', automationId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export { OPEN_RUN_STATUSES };
