import type { FastifyBaseLogger } from 'fastify';
import { changeByAutomation, getContact, contactMatches, getSegment, type Filter } from '../../audience/index.js';
import type { Db, Executor } from '../../db/connection.js';
import type { ContactStatus } from '../../db/schema.js';
import { insertRunDelivery } from '../../sending/index.js';
import { recordEvents } from '../../outbox/index.js';
import type { WebhooksService } from '../webhooks/webhooks.service.js';
import * as repo from './automations.repository.js';
import type { ClaimedRun, RoutedEvent, VersionTargets } from './automations.repository.js';
import { runTransition } from './automations.state.js';
import { Program, durationMs, splitArm, type Trigger } from './automations.steps.js';

/**
 * The automations' two jobs (CONTEXT.md), run by `formcast serve` and every `formcast worker`:
 * - **intake**: takes the events automations react to (written with their change, `routed = 0`) and, in the same
 *   transaction that marks them, starts the runs their triggers call for and ends the runs of contacts that left;
 * - **runs**: claims due runs with a lease and walks each through its steps, one transaction per step, until it
 *   waits or ends. A step's effects (a queued message, a topic, a property, a webhook delivery, the run's next
 *   position, its row in automation_run_steps) commit together, so a worker that dies mid-step leaves nothing of it
 *   and whoever takes the run over does it once.
 */

export interface EngineOptions {
  workerId: string;
  /** How long a claim holds without renewal: a dead worker's runs are taken over after it. */
  leaseMs: number;
  /** Runs claimed per round. */
  batchSize: number;
  /** Events the intake takes per transaction. */
  intakeBatch: number;
  /** Steps one run goes through per claim (one transaction) before it lets others have a turn. */
  stepsPerClaim: number;
  /** Runs walked at once on PostgreSQL (SQLite: one). */
  concurrency: number;
  /** The time (tests give theirs). */
  clock: () => number;
  /**
   * A contact whose run of an automation ended (completed or exited) enters that automation again only this long after
   * (AUTOMATION_REENTRY_COOLDOWN_SECONDS; 0: at once). The loop guard against what the cycle detector cannot follow,
   * such as a webhook step whose receiver changes the contact through the API; short (10 minutes by default), so that
   * it stops tight loops but not a second real trigger the same day (the cycle detector and the daily cap bound the rest).
   */
  reentryCooldownMs: number;
  /**
   * Messages the automations may queue for one contact in 24 hours, all of them together
   * (AUTOMATION_MAX_EMAILS_PER_CONTACT_PER_DAY): a send step past it stops its run (`guard: daily cap`).
   */
  maxMessagesPerContactPerDay: number;
}

export const DEFAULT_ENGINE = {
  leaseMs: 60_000,
  batchSize: 200,
  intakeBatch: 500,
  stepsPerClaim: 20,
  concurrency: 8,
  reentryCooldownMs: 600_000,
  maxMessagesPerContactPerDay: 10,
};

/**
 * The cycle detector's limit: a run started by a step of another run (an update or a topic change that is a trigger)
 * inherits the chain of automations that led to it; a chain longer than this, or one that holds the automation it
 * would start, starts nothing (a run written EXITED at once says so: `guard: depth` or `guard: cycle`).
 */
export const MAX_CAUSE_DEPTH = 5;
const DAY_MS = 86_400_000;
export type GuardKind = 'cycle' | 'depth' | 'cooldown' | 'daily_cap';

/** Contact statuses that end a run (contract §15: unsubscribed, bounced, complained; deleted is its own case). */
const LEAVING: Partial<Record<ContactStatus, string>> = {
  UNSUBSCRIBED: 'unsubscribed',
  BOUNCED: 'bounced',
  COMPLAINED: 'complained',
};
/** Events that mean the contact left: its runs end at once (they would at their next step anyway). */
function leaveReason(e: RoutedEvent): string | null {
  if (e.type === 'contact.unsubscribed' && e.data.topicId === undefined) return 'unsubscribed';
  if (e.type === 'email.bounced') return 'bounced';
  if (e.type === 'email.complained') return 'complained';
  if (e.type === 'contact.deleted') return 'deleted';
  return null;
}
/** The contact became SUBSCRIBED (a double opt-in confirmed, or set so): its runs waiting for that go on now. */
function confirmed(e: RoutedEvent): boolean {
  return e.type === 'contact.subscribed' && e.data.topicId === undefined;
}
/** The events after which a contact may have entered a segment (its fields, status or topics changed). */
const SEGMENT_EVENTS = new Set([
  'contact.created',
  'contact.updated',
  'contact.subscribed',
  'contact.unsubscribed',
  'contact.deleted',
]);

/** Whether the event is the trigger (its type and its own fields; the trigger's filter is checked on entry). */
export function triggeredBy(t: Trigger, e: RoutedEvent): boolean {
  switch (t.type) {
    case 'form.submitted':
      return e.type === 'form.submitted' && e.data.formGroupId === t.formGroupId;
    case 'contact.created':
      return e.type === 'contact.created';
    case 'contact.subscribed':
      return (
        e.type === 'contact.subscribed' && (t.topicId ? e.data.topicId === t.topicId : e.data.topicId === undefined)
      );
    case 'event':
      return e.type === 'event.tracked' && e.data.name === t.name;
    default:
      return false;
  }
}

class LostRun extends Error {}

/** Whether the contact is gone or in a status that ends runs now. */
async function stillLeft(trx: Executor, workspaceId: string, contactId: string): Promise<boolean> {
  const c = await getContact(trx, workspaceId, contactId);
  return !c || LEAVING[c.status] !== undefined;
}

/**
 * A send step for a contact that has not confirmed its double opt-in waits; the confirmation's `contact.subscribed`
 * wakes it at once (the intake), and it looks again this often in case that event is missed (an automation paused
 * then)...
 */
export const PENDING_RECHECK_MS = 5 * 60_000;
/** ...for this long after the run started (a confirmation link's life, CONFIRMATION_TTL_MS of submissions), then the run exits. */
export const PENDING_GIVE_UP_MS = 7 * 86_400_000;

/** Walks of one run that may fail in a row before it exits (`failed: …`); between them it waits 1, 2, 4, 8 minutes. */
export const MAX_RUN_FAILURES = 5;

interface Compiled {
  program: Program;
  targets: VersionTargets | null;
}

export class AutomationEngine {
  private readonly versions = new Map<string, Compiled>();

  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhooksService,
    private readonly o: EngineOptions,
    private readonly log?: FastifyBaseLogger,
  ) {}

  private iso(ms = this.o.clock()): string {
    return new Date(ms).toISOString();
  }

  /** A version's program (immutable once it can run: cached). */
  private async compiled(
    db: Executor,
    workspaceId: string,
    automationId: string,
    version: number,
  ): Promise<Compiled | undefined> {
    const key = `${automationId}:${version}`;
    let c = this.versions.get(key);
    if (!c) {
      const v = await repo.getVersion(db, workspaceId, automationId, version);
      if (!v) return undefined;
      c = { program: new Program(v.steps), targets: v.targets };
      if (this.versions.size > 5000) this.versions.clear();
      this.versions.set(key, c);
    }
    return c;
  }

  /**
   * Starts a run of the automation for the contact, in the caller's transaction, if the contact may enter: it
   * exists, has not left (unsubscribed, bounced, complained), matches the trigger's filter, has no open run of
   * the automation, and no run of it that ended within the re-entry cooldown. Returns the new run's id.
   *
   * `chain`: the automations whose runs led here, when a run's step caused the trigger (the last is that run's). A
   * chain that holds this automation (it would start itself again) or is longer than MAX_CAUSE_DEPTH starts nothing:
   * the refusal is written as a run EXITED at once, with an `automation.run_stopped` event, in this transaction. So is
   * a refusal by the re-entry cooldown, but at most once per (automation, contact) per cooldown window, so that a flood
   * of triggers cannot grow the tables.
   */
  async enter(
    trx: Executor,
    a: { id: string; workspaceId: string; version: number; trigger: Trigger },
    contactId: string,
    eventId: string | null,
    now: string,
    chain: readonly string[] | null = null,
  ): Promise<string | undefined> {
    const contact = await getContact(trx, a.workspaceId, contactId);
    if (!contact || LEAVING[contact.status]) return undefined;
    if (
      a.trigger.filter &&
      !(await contactMatches(trx, this.db.dialect, a.workspaceId, contactId, a.trigger.filter as Filter))
    )
      return undefined;
    const c = await this.compiled(trx, a.workspaceId, a.id, a.version);
    if (!c) return undefined;
    const run = {
      workspaceId: a.workspaceId,
      automationId: a.id,
      version: a.version,
      contactId,
      firstStepId: c.program.first,
      triggerEventId: eventId,
      causeChain: chain,
    };
    const guard: GuardKind | null = !chain?.length
      ? null
      : chain.includes(a.id)
        ? 'cycle'
        : chain.length > MAX_CAUSE_DEPTH
          ? 'depth'
          : null;
    if (guard) {
      // Already in a run of it: nothing would start anyway, and there is nothing to stop.
      if (await repo.openRunOf(trx, a.workspaceId, a.id, contactId)) return undefined;
      const path = [...chain!, a.id].join(' → ');
      const reason =
        guard === 'cycle'
          ? `guard: cycle: the automation would start itself again through its own steps (${path})`
          : `guard: depth: more than ${MAX_CAUSE_DEPTH} automations in a row started one another (${path})`;
      const runId = await repo.insertRun(trx, { ...run, refused: reason }, now);
      if (runId)
        await this.recordStop(
          trx,
          { workspaceId: a.workspaceId, automationId: a.id, runId, contactId },
          guard,
          reason,
          now,
          { chain: [...chain!] },
        );
      return undefined;
    }
    if (this.o.reentryCooldownMs > 0) {
      const since = this.iso(Date.parse(now) - this.o.reentryCooldownMs);
      const ended = await repo.lastEndSince(trx, a.workspaceId, a.id, contactId, since);
      if (ended) {
        // Already in a run of it (nothing would start anyway), or this refusal already recorded in the window: silent.
        if (
          (await repo.openRunOf(trx, a.workspaceId, a.id, contactId)) ||
          (await repo.refusedSince(trx, a.workspaceId, a.id, contactId, repo.COOLDOWN_REASON, since))
        )
          return undefined;
        const seconds = this.o.reentryCooldownMs / 1000;
        const reason = `${repo.COOLDOWN_REASON}the contact's last run of this automation ended at ${ended}, within the re-entry cooldown of ${seconds} s (later triggers within it are not recorded again)`;
        const runId = await repo.insertRun(trx, { ...run, refused: reason }, now);
        if (runId)
          await this.recordStop(
            trx,
            { workspaceId: a.workspaceId, automationId: a.id, runId, contactId },
            'cooldown',
            reason,
            now,
            { cooldownSeconds: seconds, lastEndedAt: ended },
          );
        return undefined;
      }
    }
    return repo.insertRun(trx, run, now);
  }

  /** Whether the contact is in the automation's re-entry cooldown now (the api trigger's 409 says so). */
  async inCooldown(
    db: Executor,
    workspaceId: string,
    automationId: string,
    contactId: string,
    now: string,
  ): Promise<boolean> {
    return (
      this.o.reentryCooldownMs > 0 &&
      (await repo.lastEndSince(
        db,
        workspaceId,
        automationId,
        contactId,
        this.iso(Date.parse(now) - this.o.reentryCooldownMs),
      )) !== undefined
    );
  }

  /** A loop guard stopped a run (or refused one): its event, in the transaction that ends the run; and a log line. */
  private async recordStop(
    trx: Executor,
    run: { workspaceId: string; automationId: string; runId: string; contactId: string },
    guard: GuardKind,
    reason: string,
    now: string,
    extra: Record<string, unknown>,
  ): Promise<void> {
    await recordEvents(
      trx,
      run.workspaceId,
      [
        {
          type: 'automation.run_stopped',
          contactId: run.contactId,
          data: { automationId: run.automationId, runId: run.runId, guard, reason, ...extra },
        },
      ],
      now,
    );
    this.log?.warn(
      { workspaceId: run.workspaceId, automationId: run.automationId, runId: run.runId, guard },
      'an automation loop guard stopped a run',
    );
  }

  /**
   * The chain a run started by this event inherits: when a run's step made the change (its `runId` rides in the
   * event), that run's chain and its automation; otherwise null. Cached per intake batch.
   */
  private async chainOf(trx: Executor, e: RoutedEvent, cache: Map<string, string[] | null>): Promise<string[] | null> {
    const runId = e.data.source === 'automation' && typeof e.data.runId === 'string' ? e.data.runId : null;
    if (!runId) return null;
    if (!cache.has(runId)) {
      const cause = await repo.causeOf(trx, e.workspaceId, runId);
      cache.set(runId, cause ? [...cause.chain, cause.automationId] : null);
    }
    return cache.get(runId)!;
  }

  /** One round of the intake: returns how many events it took (0: none waiting). */
  async intake(): Promise<number> {
    const now = this.iso();
    return this.db.kysely.transaction().execute(async (trx) => {
      const events = await repo.claimUnroutedEvents(trx, this.o.intakeBatch, {
        skipLocked: this.db.dialect === 'postgres',
      });
      if (!events.length) return 0;
      const automations = await repo.activeAutomationsOf(trx, [...new Set(events.map((e) => e.workspaceId))]);
      const segments = new Map<string, Filter | null>();
      const chains = new Map<string, string[] | null>();
      const confirmedBy = new Map<string, string[]>();
      for (const e of events) {
        if (!e.contactId) continue;
        const reason = leaveReason(e);
        // Only if the contact is still gone (not back since), and only the runs it had then.
        if (reason && (reason === 'deleted' || (await stillLeft(trx, e.workspaceId, e.contactId))))
          await repo.exitRunsOfContact(trx, e.workspaceId, e.contactId, reason, e.occurredAt, now);
        // A send step waiting for the double opt-in: the confirmation wakes it (within the intake's round), rather
        // than the PENDING_RECHECK_MS recheck. Collected, and woken in one statement per workspace below.
        if (confirmed(e)) {
          const woken = confirmedBy.get(e.workspaceId);
          if (woken) woken.push(e.contactId);
          else confirmedBy.set(e.workspaceId, [e.contactId]);
        }
        for (const a of automations) {
          if (a.workspaceId !== e.workspaceId) continue;
          if (triggeredBy(a.trigger, e)) {
            await this.enter(trx, a, e.contactId, e.id, now, await this.chainOf(trx, e, chains));
          } else if (a.trigger.type === 'segment.entered' && SEGMENT_EVENTS.has(e.type)) {
            const segmentId = a.trigger.segmentId!;
            if (!segments.has(segmentId))
              segments.set(
                segmentId,
                ((await getSegment(trx, e.workspaceId, segmentId))?.filter as Filter | undefined) ?? null,
              );
            const filter = segments.get(segmentId);
            if (!filter) continue;
            const now_in =
              e.type !== 'contact.deleted' &&
              (await contactMatches(trx, this.db.dialect, e.workspaceId, e.contactId, filter));
            const was = await repo.setMember(trx, a.id, e.contactId, now_in);
            if (now_in && !was) await this.enter(trx, a, e.contactId, e.id, now, await this.chainOf(trx, e, chains));
          }
        }
      }
      for (const [workspaceId, contactIds] of confirmedBy)
        await repo.wakeRunsAwaitingConfirmation(trx, workspaceId, contactIds, now);
      return events.length;
    });
  }

  /** One round of runs: claims due runs and walks each as far as it goes now. Returns how many it claimed. */
  async runDue(): Promise<number> {
    const now = this.o.clock();
    const runs = await repo.claimRuns(
      this.db.kysely,
      this.db.dialect,
      this.o.workerId,
      this.iso(now),
      this.iso(now + this.o.leaseMs),
      this.o.batchSize,
    );
    // PostgreSQL runs several walks at once (each its own transaction and connection); SQLite has one writer.
    const lanes = this.db.dialect === 'postgres' ? Math.min(this.o.concurrency, runs.length) : 1;
    let next = 0;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (next < runs.length) {
          const run = runs[next++]!;
          try {
            await this.walk(run);
          } catch (err) {
            // The walk rolled back; the run stays where it was, tried again later, and exits after MAX_RUN_FAILURES.
            this.log?.error(
              { err, runId: run.id, automationId: run.automationId, stepId: run.stepId },
              'an automation step failed; it is tried again later',
            );
            await repo
              .recordRunFailure(
                this.db.kysely,
                run,
                this.o.workerId,
                err instanceof Error ? err.message : String(err),
                MAX_RUN_FAILURES,
                this.iso(),
              )
              .catch((e2: unknown) =>
                this.log?.error({ err: e2, runId: run.id }, 'could not record the failure of a run'),
              );
          }
        }
      }),
    );
    return runs.length;
  }

  /**
   * Walks the run through the steps that are due now (up to stepsPerClaim), in one transaction: each step's effects
   * and the cursor's moves commit together or not at all. One transaction per run rather than per step: a welcome's
   * send, branch, split and send are one commit, not four (the commit is most of a step's cost).
   */
  private async walk(claimed: ClaimedRun): Promise<void> {
    const more = await this.db.kysely
      .transaction()
      .execute(async (trx) => {
        let run = claimed;
        for (let n = 0; n < this.o.stepsPerClaim; n++) {
          const next = await this.step(trx, run);
          if (!next) return false;
          run = { ...run, stepId: next, stepStartedAt: null, status: 'ACTIVE' };
        }
        return true;
      })
      .catch((err) => {
        if (err instanceof LostRun) return false;
        throw err;
      });
    // Steps left: let go of it, due now, so other runs get their turn.
    if (more) await repo.releaseRuns(this.db.kysely, this.o.workerId, [claimed.id]);
  }

  /**
   * Does the run's current step, in `trx` (the walk's), and moves the run on. Returns the next step's id when the run goes on at
   * once, or null when it waits or is over.
   */
  private async step(trx: Executor, run: ClaimedRun): Promise<string | null> {
    const now = this.iso();
    const owner = this.o.workerId;
    const move = async (set: Parameters<typeof repo.moveRun>[4]) => {
      if (!(await repo.moveRun(trx, run, owner, now, set))) throw new LostRun();
    };
    const finish = async (op: 'complete' | 'exit', reason: string | null = null) => {
      await move({
        status: runTransition(run.status, op),
        stepId: null,
        stepStartedAt: null,
        dueAt: null,
        exitReason: reason,
      });
      return null;
    };
    const c = await this.compiled(trx, run.workspaceId, run.automationId, run.version);
    const node = c?.program.node(run.stepId);
    if (!c || !node) return finish('exit', 'its step no longer exists');
    const contact = await getContact(trx, run.workspaceId, run.contactId);
    if (!contact) return finish('exit', 'deleted');
    const leaving = LEAVING[contact.status];
    if (leaving) return finish('exit', leaving);

    const step = node.step;
    if (step.type === 'send' && contact.status === 'PENDING') {
      // Signed up through a double opt-in form and not confirmed yet: the message waits for the confirmation (it would
      // be skipped now). The confirmation wakes the run (intake); it is also looked at again every PENDING_RECHECK_MS,
      // for as long as a confirmation link lives. No step start: that is how the wake tells it from a `wait` step.
      if (Date.parse(now) - Date.parse(run.enteredAt) > PENDING_GIVE_UP_MS) return finish('exit', 'never confirmed');
      await move({
        status: runTransition(run.status, 'wait'),
        stepId: step.id,
        stepStartedAt: run.stepStartedAt,
        dueAt: this.iso(Date.parse(now) + PENDING_RECHECK_MS),
      });
      return null;
    }
    const base = { runId: run.id, stepId: step.id, workspaceId: run.workspaceId, automationId: run.automationId };
    let arm: 'then' | 'else' | number | undefined;
    switch (step.type) {
      case 'wait': {
        if (run.stepStartedAt === null) {
          await repo.insertRunStep(trx, { ...base, completed: false }, now);
          const due = this.iso(Date.parse(now) + durationMs(step.duration)!);
          await move({ status: runTransition(run.status, 'wait'), stepId: step.id, stepStartedAt: now, dueAt: due });
          return null;
        }
        await repo.completeRunStep(trx, run.id, step.id, now);
        break;
      }
      case 'send': {
        const broadcastId = c.targets?.send[step.id];
        if (!broadcastId) return finish('exit', 'the version was never activated');
        // The daily cap, counted with the contact locked (PostgreSQL): two walks of its runs cannot both pass it.
        const cap = this.o.maxMessagesPerContactPerDay;
        if (
          cap > 0 &&
          (await repo.lockAndCountAutomatedMessages(
            trx,
            this.db.dialect,
            run.workspaceId,
            contact.id,
            this.iso(Date.parse(now) - DAY_MS),
          )) >= cap
        ) {
          const reason = `guard: daily cap: ${cap} automated messages to this contact in 24 hours`;
          await this.recordStop(
            trx,
            { workspaceId: run.workspaceId, automationId: run.automationId, runId: run.id, contactId: contact.id },
            'daily_cap',
            reason,
            now,
            { stepId: step.id, limit: cap },
          );
          return finish('exit', reason);
        }
        const deliveryId = await insertRunDelivery(
          trx,
          run.workspaceId,
          broadcastId,
          run.id,
          { contactId: contact.id, email: contact.email },
          now,
        );
        await repo.insertRunStep(trx, { ...base, deliveryId, completed: true }, now);
        break;
      }
      case 'topic':
        await changeByAutomation(
          trx,
          run.workspaceId,
          contact.id,
          { topics: [{ id: step.topicId, subscribed: step.subscribed }] },
          now,
          { automationId: run.automationId, runId: run.id },
        );
        await repo.insertRunStep(trx, { ...base, completed: true }, now);
        break;
      case 'update':
        await changeByAutomation(trx, run.workspaceId, contact.id, { properties: step.properties }, now, {
          automationId: run.automationId,
          runId: run.id,
        });
        await repo.insertRunStep(trx, { ...base, completed: true }, now);
        break;
      case 'branch':
        arm = (await contactMatches(trx, this.db.dialect, run.workspaceId, contact.id, step.filter)) ? 'then' : 'else';
        await repo.insertRunStep(trx, { ...base, arm, completed: true }, now);
        break;
      case 'split':
        arm = splitArm(
          contact.id,
          step.id,
          step.arms.map((a) => a.percent),
        );
        await repo.insertRunStep(trx, { ...base, arm: String(arm), completed: true }, now);
        break;
      case 'webhook': {
        const endpointId = c.targets?.webhook[step.id];
        if (!endpointId) return finish('exit', 'the version was never activated');
        // Deleted since (DELETE /v1/webhooks/{id}): nowhere to post, so the run ends here rather than failing on and on.
        if (!(await this.webhooks.endpointExists(trx, run.workspaceId, endpointId)))
          return finish('exit', 'its webhook endpoint was deleted');
        await this.webhooks.queueStepDelivery(
          trx,
          run.workspaceId,
          endpointId,
          {
            type: 'automation.webhook',
            timestamp: now,
            data: {
              automationId: run.automationId,
              version: run.version,
              runId: run.id,
              stepId: step.id,
              contact: {
                id: contact.id,
                email: contact.email,
                firstName: contact.firstName,
                lastName: contact.lastName,
                properties: contact.properties,
              },
            },
          },
          now,
        );
        await repo.insertRunStep(trx, { ...base, completed: true }, now);
        break;
      }
      case 'exit':
        await repo.insertRunStep(trx, { ...base, completed: true }, now);
        return finish('exit', 'exit step');
    }
    const next = c.program.after(step.id, arm);
    if (next === null) return finish('complete');
    await move({
      status: runTransition(run.status, 'step'),
      stepId: next,
      stepStartedAt: null,
      dueAt: now,
      keepLease: true,
    });
    return next;
  }
}
