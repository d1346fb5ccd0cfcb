/** An automation's name, trigger and flow of steps, the selected step's form and the simulator beside it; saved, activated, paused. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '../../api/client';
import { automationKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { AutomationFlow } from '../../components/AutomationFlow';
import { StepFields, TriggerFields } from '../../components/AutomationEditors';
import { SaveIndicator, useAutosave } from '../../components/email-editor';
import { useWorkspaceLook } from '../../components/email-editor/workspace';
import {
  Button,
  ConfirmDialog,
  EmptyState,
  ErrorSummary,
  Input,
  PageHeader,
  StatusBadge,
  Tabs,
  useToast,
} from '../../components';
import {
  allSteps,
  automationsApi,
  checkSteps,
  checkTrigger,
  childLists,
  findStep,
  insertStep,
  mapServerErrors,
  mapStep,
  moveStep,
  newStep,
  newStepId,
  stepLabel,
  stepPointers,
  toDraft,
  triggerSummary,
  toDraftTrigger,
  toStep,
  toTrigger,
  type Automation,
  type DraftStep,
  type DraftTrigger,
  type ListId,
  type ServerProblems,
  type Simulation,
  type StepInput,
  type StepProblems,
  type StepType,
  type TriggerInput,
} from '../../lib/automations';
import { useDefaultFrom, useFormGroups } from '../../lib/automation-hooks';
import { useSegments, useTopics, useVerifiedDomains } from '../../lib/audience';
import { count, formatDateTime } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { describeError } from '../../lib/problems';
import { Simulator } from './Simulator';
import { RunsPanel } from './RunsPanel';

const NO_PROBLEMS: ServerProblems = { steps: {}, other: {} };

/** How many field errors (`errors[]`) a failed request carries. */
function fieldErrorCount(err: unknown): number {
  return err instanceof ApiError ? (err.problem.errors?.length ?? 0) : 0;
}

/** What a save would send, and its JSON (what tells changes apart). */
interface Parts {
  name: string;
  trigger: string;
  steps: string;
  body: { trigger: TriggerInput; steps: StepInput[] };
}

function partsOf(name: string, trigger: DraftTrigger, steps: DraftStep[]): Parts {
  const body = { trigger: toTrigger(trigger), steps: steps.map(toStep) };
  return { name: name.trim(), trigger: JSON.stringify(body.trigger), steps: JSON.stringify(body.steps), body };
}

export function Editor({ automation }: { automation: Automation }) {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const editable = can('write:broadcasts');
  const forms = useFormGroups();
  const topics = useTopics();
  const segments = useSegments();
  const domains = useVerifiedDomains();
  const defaultFrom = useDefaultFrom();
  const look = useWorkspaceLook();

  const [name, setName] = useState(automation.name);
  const [trigger, setTrigger] = useState<DraftTrigger>(() => toDraftTrigger(automation.trigger));
  const [steps, setSteps] = useState<DraftStep[]>(() => automation.steps.map(toDraft));
  const [baseline, setBaseline] = useState<Parts>(() =>
    partsOf(automation.name, toDraftTrigger(automation.trigger), automation.steps.map(toDraft)),
  );
  const [server, setServer] = useState<ServerProblems>(NO_PROBLEMS);
  // `?step=<id>` (a contact's activity or the suppression list links an automation's email to its send step) opens it.
  const [searchParams] = useSearchParams();
  const [selected, setSelected] = useState<string | null>(() => {
    const asked = searchParams.get('step');
    return asked && findStep(automation.steps.map(toDraft), asked) ? asked : null;
  });
  useEffect(() => {
    if (!selected) return;
    document.querySelector(`[data-step-id="${CSS.escape(selected)}"]`)?.scrollIntoView({ block: 'center' });
    // Once, for the step the link asked for.
  }, []);
  const [tab, setTab] = useState('flow');
  const [side, setSide] = useState('step');
  const [simulation, setSimulation] = useState<{ result: Simulation; steps: string } | null>(null);
  const [removing, setRemoving] = useState<DraftStep | null>(null);
  const [deleting, setDeleting] = useState(false);
  const focusStep = useRef<string | null>(null);

  const current = useMemo(() => partsOf(name, trigger, steps), [name, trigger, steps]);
  const changed = {
    name: current.name !== baseline.name,
    trigger: current.trigger !== baseline.trigger,
    steps: current.steps !== baseline.steps,
  };
  const dirty = changed.name || changed.trigger || changed.steps;

  const numbers = useMemo(() => new Map(allSteps(steps).map((s, i) => [s.id, i + 1])), [steps]);
  const clientProblems = useMemo(
    () => checkSteps(steps, { verifiedDomains: domains.data ?? null }),
    [steps, domains.data],
  );
  const problems: StepProblems = useMemo(() => {
    const out: StepProblems = {};
    for (const id of new Set([...Object.keys(clientProblems), ...Object.keys(server.steps)]))
      out[id] = { ...clientProblems[id], ...server.steps[id] };
    return out;
  }, [clientProblems, server]);
  const triggerProblems = {
    ...checkTrigger(trigger),
    ...Object.fromEntries(Object.entries(server.other).filter(([p]) => p.startsWith('/trigger'))),
  };
  const nameProblem = server.other['/name'] ?? (name.trim() ? null : 'Give the automation a name.');
  const otherProblems = Object.entries(server.other)
    .filter(([p]) => p !== '/name' && !p.startsWith('/trigger'))
    .map(([, m]) => m);
  const problemCount =
    Object.values(problems).reduce((n, p) => n + Object.keys(p).length, 0) +
    Object.keys(triggerProblems).length +
    (nameProblem ? 1 : 0) +
    otherProblems.length;
  const problemSteps = allSteps(steps).filter((s) => problems[s.id]);

  const stats = useQuery({
    queryKey: automationKeys.stats(automation.id),
    queryFn: () => automationsApi.stats(automation.id),
    refetchInterval: automation.status === 'ACTIVE' ? 15_000 : false,
    retry: false,
  });
  const statsById = useMemo(
    () => (stats.data ? new Map(stats.data.steps.map((s) => [s.stepId, s])) : null),
    [stats.data],
  );

  const topicName = (id: string) => (topics.data ?? []).find((t) => t.id === id)?.name ?? id;

  useEffect(() => {
    const id = focusStep.current;
    if (!id) return;
    focusStep.current = null;
    document.querySelector<HTMLElement>(`[data-step-id="${CSS.escape(id)}"] .flow-card-select`)?.focus();
  });

  /* ---- edits */
  const clearServer = (id: string) =>
    setServer((s) =>
      s.steps[id] ? { ...s, steps: Object.fromEntries(Object.entries(s.steps).filter(([k]) => k !== id)) } : s,
    );
  const updateStep = (s: DraftStep) => {
    setSteps((xs) => mapStep(xs, s.id, () => s));
    clearServer(s.id);
  };
  const insert = (listId: ListId, index: number, type: StepType) => {
    const taken = new Set(allSteps(steps).map((s) => s.id));
    const lastFrom = [...allSteps(steps)]
      .reverse()
      .find((s): s is DraftStep & { type: 'send' } => s.type === 'send' && !!s.from.trim())?.from;
    const step = newStep(type, newStepId(taken), {
      from: lastFrom ?? defaultFrom.data ?? '',
      brandColor: look.brandColor,
    });
    setSteps((xs) => insertStep(xs, listId, index, step));
    setSelected(step.id);
    setSide('step');
    focusStep.current = step.id;
  };
  const move = (id: string, delta: number) => {
    setSteps((xs) => moveStep(xs, id, delta));
    focusStep.current = id;
  };
  const remove = (id: string) => {
    const s = findStep(steps, id);
    if (s && childLists(s).some((c) => c.steps.length > 0)) {
      setRemoving(s);
      return;
    }
    doRemove(id);
  };
  const doRemove = (id: string) => {
    const gone = new Set(allSteps([findStep(steps, id)!].filter(Boolean)).map((s) => s.id));
    setSteps((xs) => mapStep(xs, id, () => null));
    if (selected && gone.has(selected)) setSelected(null);
    setRemoving(null);
  };

  const sideRef = useRef<HTMLDivElement>(null);
  /** Selects a step; in the one-column layout (the side panel under the flow), brings its form into view. */
  const select = (id: string) => {
    setSelected(id);
    setSide('step');
    if (window.matchMedia('(max-width: 1100px)').matches)
      requestAnimationFrame(() => sideRef.current?.scrollIntoView({ block: 'start', behavior: 'smooth' }));
  };

  /* ---- the API */
  const refresh = (a: Automation) => {
    qc.setQueryData(automationKeys.detail(automation.id), a);
    void qc.invalidateQueries({ queryKey: automationKeys.lists() });
  };
  const takeErrors = (err: unknown, sent: DraftStep[]) => {
    if (err instanceof ApiError && err.problem.errors?.length)
      setServer(mapServerErrors(err.problem.errors, stepPointers(sent)));
    else setServer(NO_PROBLEMS);
  };
  /**
   * While a send step's email is open in the visual editor, a DRAFT automation saves its steps by itself a moment
   * after each change (the email's autosave; name and trigger still wait for Save). An ACTIVE or PAUSED one does not:
   * each save of its steps makes a new version, so that waits for Save.
   */
  const [editingEmail, setEditingEmail] = useState(false);
  const autosaves = editable && automation.status === 'DRAFT';
  const stepsNow = useRef(steps);
  stepsNow.current = steps;
  const stepsAutosave = useAutosave({
    value: current.steps,
    save: async (json: string) => {
      try {
        const a = await automationsApi.update(automation.id, { steps: JSON.parse(json) as StepInput[] });
        setBaseline((b) => ({ ...b, steps: json }));
        setServer(NO_PROBLEMS);
        refresh(a);
      } catch (err) {
        takeErrors(err, stepsNow.current);
        throw err;
      }
    },
    enabled: autosaves && editingEmail,
    savedAt: new Date(automation.updatedAt),
  });
  const emailStatus = autosaves ? (
    <SaveIndicator state={stepsAutosave.state} onRetry={stepsAutosave.retry} />
  ) : (
    <span className="muted small">
      {editable ? `Saved with Save (a change makes version ${automation.version + 1}).` : 'Read only.'}
    </span>
  );

  /** PUT of what changed (name, trigger, steps: a trigger or steps change of an ACTIVE or PAUSED one makes a new version). */
  const persist = async (): Promise<Automation | null> => {
    if (!dirty) return null;
    const sentSteps = steps;
    const sent = current;
    const body = {
      ...(changed.name ? { name: sent.name } : {}),
      ...(changed.trigger ? { trigger: sent.body.trigger } : {}),
      ...(changed.steps ? { steps: sent.body.steps } : {}),
    };
    try {
      const a = await stepsAutosave.run(() => automationsApi.update(automation.id, body));
      setBaseline(sent);
      stepsAutosave.markSaved(sent.steps);
      setServer(NO_PROBLEMS);
      refresh(a);
      return a;
    } catch (err) {
      takeErrors(err, sentSteps);
      throw err;
    }
  };
  const save = useMutation({
    mutationFn: persist,
    onSuccess: (a) => {
      if (a) toast.success(a.version !== automation.version ? `Saved as version ${a.version}.` : 'Automation saved.');
    },
    onError: (err) => {
      if (fieldErrorCount(err) > 0)
        toast.error(`Not saved: ${count(fieldErrorCount(err), 'problem')}, marked on the steps.`);
    },
  });
  const status = useMutation({
    mutationFn: async (what: 'activate' | 'pause') => {
      if (what === 'activate') {
        if (dirty) await persist();
        return automationsApi.activate(automation.id);
      }
      return automationsApi.pause(automation.id);
    },
    onSuccess: (a, what) => {
      setServer(NO_PROBLEMS);
      refresh(a);
      toast.success(
        what === 'activate'
          ? 'Active: contacts who meet the trigger now enter.'
          : 'Paused: runs stay where they are until you activate it again.',
      );
    },
    onError: (err, what) => {
      if (what !== 'activate') return;
      takeErrors(err, steps);
      // The first step the API names (the deepest step of each pointer) opens beside the flow.
      if (err instanceof ApiError && err.problem.errors?.length) {
        const named = mapServerErrors(err.problem.errors, stepPointers(steps)).steps;
        const first = allSteps(steps).find((s) => named[s.id]);
        if (first) {
          setSelected(first.id);
          setSide('step');
        }
      }
    },
  });
  const del = useMutation({
    mutationFn: () => automationsApi.remove(automation.id),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: automationKeys.all });
      toast.success('Automation deleted.');
      navigate('/automations');
    },
  });
  const saveError = problemOf(save.error);
  const statusError = problemOf(status.error);
  const ensureSaved = async () => {
    if (dirty && editable) await persist();
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const selectedStep = selected ? findStep(steps, selected) : null;
  const path = useMemo(
    () => (simulation ? new Map(simulation.result.steps.map((s) => [s.stepId, s])) : null),
    [simulation],
  );

  const description = (
    <span className="row">
      <StatusBadge status={automation.status} />
      <span className="muted small">
        version {automation.version} · updated {formatDateTime(automation.updatedAt)}
      </span>
    </span>
  );
  const actions = editable && (
    <>
      {automation.status === 'ACTIVE' ? (
        <Button onClick={() => status.mutate('pause')} loading={status.isPending && status.variables === 'pause'}>
          Pause
        </Button>
      ) : (
        <Button
          variant="primary"
          onClick={() => status.mutate('activate')}
          loading={status.isPending && status.variables === 'activate'}
        >
          {automation.status === 'PAUSED' ? 'Resume' : 'Activate'}
        </Button>
      )}
      {automation.status === 'DRAFT' && (
        <Button
          variant="danger"
          onClick={() => {
            del.reset();
            setDeleting(true);
          }}
        >
          Delete
        </Button>
      )}
    </>
  );

  const start = (
    <div className="flow-start">
      <span className="flow-start-label">Starts when</span>
      <span className="break">
        {triggerSummary(toTrigger(trigger), {
          forms: new Map((forms.data ?? []).map((f) => [f.id, f.name])),
          topics: new Map((topics.data ?? []).map((t) => [t.id, t.name])),
          segments: new Map((segments.data ?? []).map((s) => [s.id, s.name])),
        })}
      </span>
    </div>
  );

  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title={automation.name}
        description={description}
        back={{ to: '/automations', label: 'Automations' }}
        actions={actions}
      />
      {status.isError && (
        <div className="error-summary auto-status-error" role="alert">
          {fieldErrorCount(status.error) > 0 ? (
            <strong>
              {status.variables === 'activate' ? 'It cannot be activated yet' : 'That did not work'}:{' '}
              {count(fieldErrorCount(status.error), 'problem')}, marked below.
            </strong>
          ) : (
            <strong>{statusError.message}</strong>
          )}
          {otherProblems.length > 0 && (
            <ul>
              {otherProblems.map((m) => (
                <li key={m}>{m}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      {automation.status !== 'DRAFT' && editable && (
        <div
          className={`callout ${automation.status === 'ACTIVE' ? 'callout-info' : 'callout-warning'} auto-version-note`}
        >
          {automation.status === 'ACTIVE' ? 'Active.' : 'Paused: nothing moves until you resume it.'} Saving a change to
          the trigger or the steps makes version {automation.version + 1}; runs in progress finish on version{' '}
          {automation.version}.
        </div>
      )}
      <Tabs
        label="Automation"
        tabs={[
          { id: 'flow', label: 'Flow' },
          { id: 'runs', label: 'Runs' },
        ]}
        selected={tab}
        onSelect={setTab}
      >
        {tab === 'runs' ? (
          <RunsPanel automation={automation} numbers={numbers} steps={steps} />
        ) : (
          <div className="auto-layout">
            <form className="stack auto-main" onSubmit={submit} noValidate aria-label="Automation">
              <section className="card stack-sm" aria-labelledby="settings-h">
                <h2 id="settings-h">Name and trigger</h2>
                <ErrorSummary
                  message={save.isError && fieldErrorCount(save.error) === 0 ? saveError.message : null}
                  errors={status.isError ? [] : otherProblems}
                />
                <Input
                  id="automation-name"
                  label="Name"
                  value={name}
                  onChange={(e) => {
                    setName(e.target.value);
                    setServer((s) => ({
                      ...s,
                      other: Object.fromEntries(Object.entries(s.other).filter(([p]) => p !== '/name')),
                    }));
                  }}
                  error={nameProblem}
                  maxLength={255}
                  disabled={!editable}
                  required
                />
                <TriggerFields
                  trigger={trigger}
                  onChange={setTrigger}
                  errors={triggerProblems}
                  disabled={!editable}
                  forms={forms}
                  topics={topics}
                  segments={segments}
                />
              </section>
              <section className="card" aria-labelledby="steps-h">
                <div className="card-header">
                  <h2 id="steps-h">Steps</h2>
                  {stats.isError && <span className="muted small">Stats could not be loaded.</span>}
                </div>
                {problemSteps.length > 0 && (
                  <div className="callout callout-warning small flow-problem-note" role="status">
                    {problemSteps.length === 1 ? '1 step needs' : `${problemSteps.length} steps need`} attention before
                    the automation can run:{' '}
                    {problemSteps.slice(0, 8).map((s, i) => (
                      <span key={s.id}>
                        {i > 0 && ', '}
                        <button
                          type="button"
                          className="link-button"
                          onClick={() => {
                            setSelected(s.id);
                            setSide('step');
                            focusStep.current = s.id;
                          }}
                        >
                          step {numbers.get(s.id)}
                        </button>
                      </span>
                    ))}
                    .
                  </div>
                )}
                <div className="flow-scroll">
                  <AutomationFlow
                    start={start}
                    steps={steps}
                    editable={editable}
                    selected={selected}
                    onSelect={select}
                    onInsert={insert}
                    onMove={move}
                    onRemove={remove}
                    problems={problems}
                    stats={statsById}
                    path={path}
                    numbers={numbers}
                    topicName={topicName}
                  />
                </div>
              </section>
              {editable && (
                <div className="save-bar">
                  <span className="muted small" aria-live="polite">
                    {dirty ? 'Unsaved changes' : `Saved ${formatDateTime(automation.updatedAt)}`}
                    {problemCount > 0 && (
                      <span className="save-problems"> · {count(problemCount, 'problem')} to fix</span>
                    )}
                  </span>
                  <Button type="submit" variant="primary" loading={save.isPending} disabled={!dirty}>
                    Save
                  </Button>
                </div>
              )}
            </form>
            <div className="auto-side" ref={sideRef}>
              <div className="card">
                <Tabs
                  label="Side panel"
                  tabs={[
                    { id: 'step', label: selectedStep ? `Step ${numbers.get(selectedStep.id)}` : 'Step' },
                    { id: 'simulate', label: 'Simulator' },
                  ]}
                  selected={side}
                  onSelect={setSide}
                >
                  {side === 'simulate' ? (
                    <Simulator
                      automation={automation}
                      ensureSaved={ensureSaved}
                      result={simulation?.result ?? null}
                      numbers={numbers}
                      steps={steps}
                      stale={!!simulation && simulation.steps !== current.steps}
                      topicName={topicName}
                      onResult={(r) => setSimulation(r ? { result: r, steps: current.steps } : null)}
                    />
                  ) : selectedStep ? (
                    <div className="stack-sm">
                      <div className="row-between">
                        <h2 className="inspector-title">
                          {numbers.get(selectedStep.id)}. {stepLabel(selectedStep.type)}
                        </h2>
                        <Button size="sm" variant="ghost" onClick={() => setSelected(null)} aria-label="Close the step">
                          ✕
                        </Button>
                      </div>
                      <StepFields
                        key={selectedStep.id}
                        step={selectedStep}
                        onChange={updateStep}
                        ctx={{
                          editable,
                          problems: problems[selectedStep.id] ?? {},
                          topics,
                          verifiedDomains: domains.data,
                          email: { status: emailStatus, onEditing: setEditingEmail },
                        }}
                      />
                    </div>
                  ) : (
                    <EmptyState title="Select a step">
                      {editable ? 'Its settings show here. Add steps with + in the flow.' : 'Its settings show here.'}
                    </EmptyState>
                  )}
                </Tabs>
              </div>
            </div>
          </div>
        )}
      </Tabs>
      <ConfirmDialog
        open={!!removing}
        title={removing ? `Remove step ${numbers.get(removing.id)}?` : 'Remove the step?'}
        danger
        confirmLabel="Remove with its paths"
        onClose={() => setRemoving(null)}
        onConfirm={() => removing && doRemove(removing.id)}
      >
        <p>
          {removing &&
            `Its paths hold ${allSteps([removing]).length - 1} more step${allSteps([removing]).length === 2 ? '' : 's'}; they go too.`}{' '}
          Nothing is saved until you press Save.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={deleting}
        title={`Delete ${automation.name}?`}
        danger
        confirmLabel="Delete automation"
        busy={del.isPending}
        onClose={() => setDeleting(false)}
        onConfirm={() => del.mutate()}
      >
        <p>The draft and its steps are deleted. This cannot be undone.</p>
        {del.isError && <ErrorSummary message={describeError(del.error)} />}
      </ConfirmDialog>
    </>
  );
}
