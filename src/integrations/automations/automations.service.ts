import { insertAutomationMessage } from '../../sending/index.js';
import {
  getContact,
  contactEmail,
  unknownFilterReferences,
  type Filter,
  contactMatches,
  getSegment,
  imaginedContactMatches,
  matchingContactIds,
  existingTopicIds,
  listTopics,
} from '../../audience/index.js';
import type { Db, Executor } from '../../db/connection.js';
import type { AutomationRunStatus, AutomationStatus } from '../../db/schema.js';
import { findDomainByName } from '../../mail-setup/index.js';
import {
  conflict,
  insufficientScope,
  notFound,
  unprocessable,
  validationFailed,
  type FieldError,
} from '../../errors/errors.js';
import { listGroupVersions } from '../../forms/index.js';
import { grants } from '../../http/scopes.js';
import { newId } from '../../lib/ids.js';
import { parseMailbox } from '../../lib/email.js';
import { renderTemplate } from '../../lib/liquid.js';
import { isBlockDocument } from '../../mail/blocks/grammar.js';
import { withRenderedDocument, workspaceScope, type DocumentSettings } from '../../mail/documents.js';
import { nowIso } from '../../lib/time.js';
import { endpointByUrl } from '../webhooks/webhooks.repository.js';
import type { WebhooksService } from '../webhooks/webhooks.service.js';
import { getWorkspace } from '../../access/index.js';
import type { AutomationEngine } from './automations.engine.js';
import * as repo from './automations.repository.js';
import type {
  Automation,
  CreateAutomationInput,
  Simulation,
  SimulateInput,
  UpdateAutomationInput,
} from './automations.schemas.js';
import { automationTransition } from './automations.state.js';
import {
  Program,
  checkSteps,
  checkTrigger,
  durationMs,
  isoDuration,
  splitArm,
  type Step,
  type Trigger,
} from './automations.steps.js';

const changedMeanwhile = () => conflict('invalid_state', 'the automation changed meanwhile; read it again');

function present(a: repo.AutomationRow): Automation {
  // A stored trigger is checkTrigger's: one of the forms TriggerSchema lists (test/unit/automations.test.ts).
  return {
    id: a.id,
    name: a.name,
    status: a.status,
    trigger: a.trigger as Automation['trigger'],
    steps: a.steps,
    version: a.version,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** Trigger and steps as given: their shape checked (422 validation_failed with every problem's path). */
function parse(input: { trigger?: unknown; steps?: unknown }): { trigger?: Trigger; steps?: Step[] } {
  const errors: FieldError[] = [];
  const trigger = input.trigger !== undefined ? (checkTrigger(input.trigger, errors) ?? undefined) : undefined;
  const steps = input.steps !== undefined ? checkSteps(input.steps, errors) : undefined;
  if (errors.length) throw validationFailed(errors);
  return { trigger, steps };
}

/**
 * Each send step whose `editorContent` is a block document (checked by parse) gets the html and text rendered from it
 * (contract §16), in place of any the request sent; a rendering that is not a valid Liquid template is 422 at its step.
 */
async function renderDocuments(
  steps: readonly Step[] | undefined,
  settings: DocumentSettings,
  lang: () => Promise<string | undefined>,
): Promise<void> {
  if (!steps) return;
  for (const { step, path } of new Program(steps).all())
    if (step.type === 'send' && isBlockDocument(step.emailContent.editorContent))
      step.emailContent = await withRenderedDocument(step.emailContent, `${path}/emailContent`, settings, lang);
}

const MAX_SIMULATED_STEPS = 200;

/** Who asks (an API key's scopes, or a console session's role's: req.auth). */
export interface Caller {
  scopes: readonly string[];
}

/**
 * A `webhook` step posts contacts' data to its URL and registers a webhook endpoint of the workspace: it takes
 * write:webhooks, as POST /v1/webhooks does, through every path (issue 29). A caller without it cannot write a webhook
 * step whose URL the automation did not have already (create, PUT: 403 insufficient_scope); keeping one an admin wrote
 * is allowed (an editor may change the emails of an automation that has one). The registering side is checked in
 * prepare: a version whose webhook step would register a new endpoint cannot be made runnable by such a caller.
 */
const mayWriteWebhooks = (caller: Caller) => grants(caller.scopes, 'write:webhooks');

function checkWebhookSteps(caller: Caller, steps: readonly Step[], current: readonly Step[] = []): void {
  if (mayWriteWebhooks(caller)) return;
  const known = new Set(new Program(current).all().flatMap((n) => (n.step.type === 'webhook' ? [n.step.url] : [])));
  for (const { step } of new Program(steps).all())
    if (step.type === 'webhook' && !known.has(step.url)) throw insufficientScope('write:webhooks');
}

/**
 * Automations (docs/automations.md, CONTEXT.md): the API's rules. Runs are walked by the engine
 * (automations.engine.ts); this service starts one only for the `api` trigger, through the engine's entry rule.
 */
export class AutomationsService {
  constructor(
    private readonly db: Db,
    private readonly webhooks: WebhooksService,
    private readonly engine: AutomationEngine,
    private readonly settings: DocumentSettings,
  ) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /** The workspace's locale: the language a block document is rendered in (its footer's words, `<html lang>`). */
  private async localeOf(workspaceId: string): Promise<string | undefined> {
    return (await getWorkspace(this.db.kysely, workspaceId))?.settings.locale;
  }

  private async mustGet(db: Executor, workspaceId: string, id: string): Promise<repo.AutomationRow> {
    const a = await repo.getAutomation(db, workspaceId, id);
    if (!a) throw notFound('automation');
    return a;
  }

  /** Ids the trigger and steps name must be of the workspace (422 invalid_reference), whatever the status. */
  private async checkReferences(
    db: Executor,
    workspaceId: string,
    trigger: Trigger,
    steps: readonly Step[],
  ): Promise<void> {
    const errors: FieldError[] = [];
    if (trigger.type === 'form.submitted' && !(await listGroupVersions(db, workspaceId, trigger.formGroupId!)).length)
      errors.push({ path: '/trigger/formGroupId', message: 'names no form group of this workspace' });
    if (trigger.type === 'segment.entered' && !(await getSegment(db, workspaceId, trigger.segmentId!)))
      errors.push({ path: '/trigger/segmentId', message: 'names no segment of this workspace' });
    const topicPaths: { id: string; path: string }[] = [];
    if (trigger.topicId) topicPaths.push({ id: trigger.topicId, path: '/trigger/topicId' });
    // The filters' topics and broadcasts (an engagement condition on a broadcast that does not exist would be true of
    // everyone with `happened: false`).
    const filters: { filter: Filter; path: string }[] = [];
    if (trigger.filter) filters.push({ filter: trigger.filter, path: '/trigger/filter' });
    for (const n of new Program(steps).all()) {
      if (n.step.type === 'topic') topicPaths.push({ id: n.step.topicId, path: `${n.path}/topicId` });
      if (n.step.type === 'branch') filters.push({ filter: n.step.filter, path: `${n.path}/filter` });
    }
    const known = await existingTopicIds(
      db,
      workspaceId,
      topicPaths.map((t) => t.id),
    );
    for (const t of topicPaths)
      if (!known.has(t.id)) errors.push({ path: t.path, message: 'names no topic of this workspace' });
    for (const f of filters)
      for (const u of await unknownFilterReferences(db, workspaceId, f.filter, f.path))
        errors.push({ path: u.path, message: `names no ${u.what} of this workspace` });
    if (errors.length)
      throw unprocessable('invalid_reference', errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; '), errors);
  }

  /**
   * What a version needs to run (activation, and a new version of an ACTIVE or PAUSED automation): every send step
   * has a `from` on a VERIFIED domain, a subject, and an html or text body; every webhook step's URL passes the SSRF
   * guard. One error per problem, at its step's path (422 automation_incomplete).
   */
  private async checkComplete(workspaceId: string, steps: readonly Step[]): Promise<void> {
    const errors: FieldError[] = [];
    const db = this.db.kysely;
    for (const { step, path } of new Program(steps).all()) {
      if (step.type === 'send') {
        const domain = step.from ? parseMailbox(step.from)?.domain : undefined;
        if (!step.from) errors.push({ path: `${path}/from`, message: 'is required' });
        else if (!domain || (await findDomainByName(db, workspaceId, domain))?.status !== 'VERIFIED')
          errors.push({ path: `${path}/from`, message: 'is not on a verified domain of this workspace' });
        if (!step.emailContent.subject?.trim())
          errors.push({ path: `${path}/emailContent/subject`, message: 'is required' });
        if (!step.emailContent.html?.trim() && !step.emailContent.text?.trim())
          errors.push({ path: `${path}/emailContent/html`, message: 'html or text is required' });
      } else if (step.type === 'webhook') {
        try {
          await this.webhooks.checkStepUrl(step.url, `${path}/url`);
        } catch (err) {
          errors.push({
            path: `${path}/url`,
            message: (err as { errors?: FieldError[] }).errors?.[0]?.message ?? 'is refused',
          });
        }
      }
    }
    if (errors.length)
      throw unprocessable(
        'automation_incomplete',
        `the automation cannot run: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        errors,
      );
  }

  /**
   * Makes a version runnable, in the caller's transaction: a broadcast row for each send step (the message the
   * delivery pipeline sends), an endpoint for each webhook step; and, for a segment.entered trigger, the segment's
   * members as they are now (only contacts that enter it from now on start a run).
   */
  private async prepare(
    trx: Executor,
    a: { id: string; workspaceId: string; name: string },
    version: number,
    trigger: Trigger,
    steps: readonly Step[],
    now: string,
    caller: Caller,
  ): Promise<void> {
    // The members first: a webhook step's new endpoint takes the workspace's listeners lock (db/listeners-lock.ts),
    // which holds every event writer of the workspace until this transaction commits; a segment's members are read
    // over the whole workspace, 5,000 at a time.
    if (trigger.type === 'segment.entered') {
      const segment = await getSegment(trx, a.workspaceId, trigger.segmentId!);
      let after: string | undefined;
      let first = true;
      for (;;) {
        const ids = segment
          ? await matchingContactIds(trx, this.db.dialect, a.workspaceId, segment.filter as Filter, {
              afterId: after,
              limit: 5000,
            })
          : [];
        await repo.replaceMembers(trx, a.id, ids, first);
        first = false;
        if (ids.length < 5000) break;
        after = ids[ids.length - 1];
      }
    }
    const current = await repo.getVersion(trx, a.workspaceId, a.id, version);
    if (!current?.targets) {
      // Registering an endpoint is managing webhooks: not for a caller without write:webhooks (an editor activating a
      // draft whose webhook URL no endpoint has, or one an admin deleted meanwhile).
      if (!mayWriteWebhooks(caller)) {
        for (const { step } of new Program(steps).all())
          if (step.type === 'webhook' && !(await endpointByUrl(trx, a.workspaceId, step.url)))
            throw insufficientScope('write:webhooks');
      }
      const settings = (await getWorkspace(trx, a.workspaceId))?.settings;
      const tracking = settings?.tracking ?? { opens: true, clicks: true };
      const targets: repo.VersionTargets = { send: {}, webhook: {} };
      for (const { step } of new Program(steps).all()) {
        if (step.type === 'send') {
          const id = newId('bc');
          await insertAutomationMessage(
            trx,
            a.workspaceId,
            id,
            {
              name: `${a.name} · ${step.id}`.slice(0, 255),
              from: step.from,
              replyTo: step.replyTo,
              emailContent: step.emailContent,
              tracking,
              automationId: a.id,
              stepId: step.id,
            },
            now,
          );
          targets.send[step.id] = id;
        } else if (step.type === 'webhook') {
          targets.webhook[step.id] = await this.webhooks.stepEndpoint(
            trx,
            a.workspaceId,
            step.url,
            `Automation "${a.name}", step ${step.id}`,
          );
        }
      }
      await repo.setVersionTargets(trx, a.workspaceId, a.id, version, targets);
    }
  }

  async create(workspaceId: string, input: CreateAutomationInput, caller: Caller): Promise<Automation> {
    const { trigger, steps } = parse({ trigger: input.trigger, steps: input.steps ?? [] });
    await renderDocuments(steps, this.settings, () => this.localeOf(workspaceId));
    checkWebhookSteps(caller, steps!);
    const id = newId('aut');
    await this.tx(async (trx) => {
      await this.checkReferences(trx, workspaceId, trigger!, steps!);
      await repo.insertAutomation(
        trx,
        { id, workspaceId, name: input.name, trigger: trigger!, steps: steps! },
        nowIso(),
      );
    });
    return this.get(workspaceId, id);
  }

  async get(workspaceId: string, id: string): Promise<Automation> {
    return present(await this.mustGet(this.db.kysely, workspaceId, id));
  }

  async list(
    workspaceId: string,
    opts: { status?: AutomationStatus; limit: number; beforeId?: string },
  ): Promise<Automation[]> {
    return (await repo.listAutomations(this.db.kysely, workspaceId, opts)).map(present);
  }

  /**
   * PUT (partial). A DRAFT changes in place. On an ACTIVE or PAUSED automation, a new trigger or new steps make a
   * new version, checked as activation checks (runs in progress finish on theirs); a new name alone does not.
   */
  async update(workspaceId: string, id: string, input: UpdateAutomationInput, caller: Caller): Promise<Automation> {
    if (input.id !== undefined && input.id !== id)
      throw validationFailed([{ path: '/id', message: 'must equal the automation id in the path' }]);
    const parsed = parse(input);
    await renderDocuments(parsed.steps, this.settings, () => this.localeOf(workspaceId));
    const current = await this.mustGet(this.db.kysely, workspaceId, id);
    automationTransition(current.status, 'edit');
    if (parsed.steps) checkWebhookSteps(caller, parsed.steps, current.steps);
    const trigger = parsed.trigger ?? current.trigger;
    const steps = parsed.steps ?? current.steps;
    const changesProgram = parsed.trigger !== undefined || parsed.steps !== undefined;
    if (current.status !== 'DRAFT' && changesProgram) await this.checkComplete(workspaceId, steps);
    await this.tx(async (trx) => {
      await this.checkReferences(trx, workspaceId, trigger, steps);
      const now = nowIso();
      const version = changesProgram && current.status !== 'DRAFT' ? current.version + 1 : current.version;
      // First, guarded by what was read: a concurrent change makes this one 409, before anything else is written.
      if (!(await repo.updateAutomation(trx, workspaceId, id, current, { name: input.name, version }, now)))
        throw changedMeanwhile();
      if (changesProgram && current.status === 'DRAFT')
        await repo.replaceVersion(trx, workspaceId, id, version, trigger, steps);
      else if (changesProgram) {
        await repo.insertVersion(trx, workspaceId, id, version, trigger, steps, now);
        await this.prepare(
          trx,
          { id, workspaceId, name: input.name ?? current.name },
          version,
          trigger,
          steps,
          now,
          caller,
        );
      }
    });
    return this.get(workspaceId, id);
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    const current = await this.mustGet(this.db.kysely, workspaceId, id);
    automationTransition(current.status, 'delete');
    if (!(await repo.deleteAutomation(this.db.kysely, workspaceId, id, current.status))) throw changedMeanwhile();
  }

  /** DRAFT or PAUSED → ACTIVE, once the steps are complete (422 automation_incomplete). */
  async activate(workspaceId: string, id: string, caller: Caller): Promise<Automation> {
    const current = await this.mustGet(this.db.kysely, workspaceId, id);
    const next = automationTransition(current.status, 'activate');
    await this.checkComplete(workspaceId, current.steps);
    await this.tx(async (trx) => {
      const now = nowIso();
      // Guarded by what was read and checked: a PUT that got in between makes this 409 (its steps were not checked).
      if (!(await repo.updateAutomation(trx, workspaceId, id, current, { status: next }, now)))
        throw changedMeanwhile();
      await this.checkReferences(trx, workspaceId, current.trigger, current.steps);
      await this.prepare(trx, current, current.version, current.trigger, current.steps, now, caller);
    });
    return this.get(workspaceId, id);
  }

  async pause(workspaceId: string, id: string): Promise<Automation> {
    const current = await this.mustGet(this.db.kysely, workspaceId, id);
    const next = automationTransition(current.status, 'pause');
    if (!(await repo.updateAutomation(this.db.kysely, workspaceId, id, current, { status: next }, nowIso())))
      throw changedMeanwhile();
    return this.get(workspaceId, id);
  }

  /** POST …/trigger: the contact enters an ACTIVE automation with an `api` trigger (its open run if it has one). */
  async trigger(workspaceId: string, id: string, contactId: string): Promise<{ runId: string; started: boolean }> {
    const a = await this.mustGet(this.db.kysely, workspaceId, id);
    if (a.trigger.type !== 'api')
      throw conflict('invalid_state', `the automation starts on ${a.trigger.type}, not through the API`);
    if (a.status !== 'ACTIVE') throw conflict('invalid_state', `the automation is ${a.status}; activate it first`);
    return this.tx(async (trx) => {
      const contact = await getContact(trx, workspaceId, contactId);
      if (!contact) throw notFound('contact');
      const open = await repo.openRunOf(trx, workspaceId, id, contactId);
      if (open) return { runId: open, started: false };
      const now = nowIso();
      const runId = await this.engine.enter(trx, a, contactId, null, now);
      // A concurrent trigger (or the intake) started one meanwhile: that run is the contact's.
      const raced = runId ? undefined : await repo.openRunOf(trx, workspaceId, id, contactId);
      if (raced) return { runId: raced, started: false };
      if (!runId && (await this.engine.inCooldown(trx, workspaceId, id, contactId, now)))
        throw conflict(
          'invalid_state',
          'the contact went through this automation within the re-entry cooldown (AUTOMATION_REENTRY_COOLDOWN_SECONDS, docs/automations.md); it can enter again once that has passed',
        );
      if (!runId)
        throw conflict(
          'invalid_state',
          `the contact cannot enter: it is ${contact.status}${a.trigger.filter ? " or does not match the trigger's filter" : ''}`,
        );
      return { runId, started: true };
    });
  }

  async runs(
    workspaceId: string,
    id: string,
    opts: { status?: AutomationRunStatus; contactId?: string; limit: number; beforeId?: string },
  ): Promise<repo.RunRecord[]> {
    await this.mustGet(this.db.kysely, workspaceId, id);
    return repo.listRuns(this.db.kysely, workspaceId, id, opts);
  }

  async stats(workspaceId: string, id: string): Promise<{ steps: repo.StepStats[] }> {
    const a = await this.mustGet(this.db.kysely, workspaceId, id);
    const counted = new Map((await repo.stepStats(this.db.kysely, workspaceId, id)).map((s) => [s.stepId, s]));
    // The current version's steps first, in their order (zeros for steps no run reached), then those of older versions.
    const ordered = new Program(a.steps)
      .all()
      .map(
        (n) =>
          counted.get(n.step.id) ?? { stepId: n.step.id, entered: 0, completed: 0, sent: 0, opened: 0, clicked: 0 },
      );
    const listed = new Set(ordered.map((s) => s.stepId));
    return { steps: [...ordered, ...[...counted.values()].filter((s) => !listed.has(s.stepId))] };
  }

  /**
   * A dry run of the current version (no write of any kind): the steps the contact would take, the arm of each
   * branch and split, the time from entry of each, and the rendered subject of each send. Branches are evaluated by
   * the segment's own SQL, against the contact as it is now (a real one) or as given (a made-up one).
   */
  async simulate(workspaceId: string, id: string, input: SimulateInput): Promise<Simulation> {
    const db = this.db.kysely;
    const a = await this.mustGet(db, workspaceId, id);
    let contact: {
      key: string;
      email: string;
      firstName: string | null;
      lastName: string | null;
      properties: Record<string, unknown>;
    };
    let matches: (filter: Filter) => Promise<boolean>;
    if ('contactId' in input) {
      const c = await getContact(db, workspaceId, input.contactId);
      if (!c) throw notFound('contact');
      contact = { key: c.id, email: c.email, firstName: c.firstName, lastName: c.lastName, properties: c.properties };
      matches = (f) => contactMatches(db, this.db.dialect, workspaceId, c.id, f);
    } else {
      const email = contactEmail(input.contact.email);
      if (!email)
        throw validationFailed([
          {
            path: '/contact/email',
            message: 'must be a valid email address',
            keyword: 'format',
            params: { format: 'email' },
          },
        ]);
      const subscribedTo = new Set(input.contact.topics ?? []);
      const topics = (await listTopics(db, workspaceId, { limit: 1000 })).map((t) => ({
        id: t.id,
        subscribed: subscribedTo.has(t.id),
      }));
      const imagined = {
        email,
        firstName: input.contact.firstName ?? null,
        lastName: input.contact.lastName ?? null,
        properties: input.contact.properties ?? {},
        status: 'SUBSCRIBED' as const,
        createdAt: nowIso(),
        topics,
      };
      contact = { key: email, ...imagined };
      matches = (f) => imaginedContactMatches(db, this.db.dialect, workspaceId, imagined, f);
    }
    const program = new Program(a.steps);
    const workspace = await getWorkspace(db, workspaceId);
    const scope = workspace ? workspaceScope(workspace) : null;
    const out: Simulation['steps'] = [];
    let at = 0;
    let stepId = program.first;
    let exited: string | null = null;
    while (stepId !== null && out.length < MAX_SIMULATED_STEPS) {
      const step = program.node(stepId)!.step;
      const entry: Simulation['steps'][number] = { stepId, type: step.type, at: isoDuration(at) };
      let arm: 'then' | 'else' | number | undefined;
      if (step.type === 'wait') at += durationMs(step.duration) ?? 0;
      else if (step.type === 'send') {
        let subject: string | null;
        try {
          subject = renderTemplate(step.emailContent.subject, {
            contact: {
              email: contact.email,
              firstName: contact.firstName,
              lastName: contact.lastName,
              properties: contact.properties,
            },
            workspace: scope,
          });
        } catch {
          subject = step.emailContent.subject;
        }
        entry.subject = subject;
      } else if (step.type === 'branch') arm = entry.arm = (await matches(step.filter)) ? 'then' : 'else';
      else if (step.type === 'split')
        arm = entry.arm = splitArm(
          contact.key,
          step.id,
          step.arms.map((x) => x.percent),
        );
      out.push(entry);
      if (step.type === 'exit') {
        exited = 'exit step';
        break;
      }
      stepId = program.after(step.id, arm);
    }
    return { steps: out, exited };
  }
}
