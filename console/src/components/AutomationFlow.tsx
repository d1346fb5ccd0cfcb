/**
 * An automation's steps as a vertical flow: a card per step, joined by connectors that each carry a "+" to add
 * a step there (a menu of the step types). A branch's two arms and a split's paths stand side by side in
 * columns under their step, and the steps after it continue below, where the arms join again. Each card shows
 * a summary, its live problems, its stats and, after a simulation, whether the contact passed it and when.
 * Cards are selected to be edited beside the flow (the inspector); move up/down and remove act in place.
 */
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import {
  describeDuration,
  describeFilter,
  durationSeconds,
  joinDuration,
  STEP_TYPES,
  stepLabel,
  type DraftStep,
  type ListId,
  type SimulatedStep,
  type StepProblems,
  type StepStats,
  type StepType,
} from '../lib/automations';
import { count as countOf, formatNumber, percent } from '../lib/format';
import { Button } from './Button';
import { toFilter } from './FilterBuilder';
import { Icon } from './Icon';

export interface FlowProps {
  steps: DraftStep[];
  editable: boolean;
  selected: string | null;
  onSelect: (id: string) => void;
  onInsert: (listId: ListId, index: number, type: StepType) => void;
  onMove: (id: string, delta: number) => void;
  onRemove: (id: string) => void;
  problems: StepProblems;
  stats: Map<string, StepStats> | null;
  /** The simulated path, by step id. */
  path: Map<string, SimulatedStep> | null;
  numbers: Map<string, number>;
  topicName: (id: string) => string;
}

const ICON: Record<StepType, string> = {
  send: 'mail',
  wait: 'clock',
  branch: 'automations',
  split: 'split',
  topic: 'topics',
  update: 'edit',
  webhook: 'webhooks',
  exit: 'exit',
};

function Glyph({ type }: { type: StepType }) {
  return (
    <span className={`flow-glyph flow-glyph-${type}`} aria-hidden="true">
      <Icon name={ICON[type]} className="flow-icon" />
    </span>
  );
}

/** One line about what a step does. */
export function stepSummary(s: DraftStep, topicName: (id: string) => string): string {
  switch (s.type) {
    case 'send':
      return s.subject.trim() ? s.subject : 'No subject yet';
    case 'wait': {
      const iso = joinDuration(s.amount, s.unit);
      return iso ? `Wait ${describeDuration(iso)}` : 'How long?';
    }
    case 'topic':
      return s.topicId
        ? `${s.subscribed ? 'Subscribe to' : 'Unsubscribe from'} ${topicName(s.topicId)}`
        : 'No topic chosen';
    case 'update': {
      const names = s.rows.map((r) => r.name.trim()).filter(Boolean);
      return names.length
        ? `Set ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`
        : 'No property yet';
    }
    case 'branch':
      return `If ${describeFilter(toFilter(s.tree))}`;
    case 'split':
      return s.arms.map((a, i) => `${String.fromCharCode(65 + i)} ${a.percent || '?'}%`).join(' · ');
    case 'webhook': {
      try {
        return `POST to ${new URL(s.url).host}`;
      } catch {
        return s.url.trim() ? s.url : 'No URL yet';
      }
    }
    default:
      return 'The run ends here';
  }
}

/** "At entry", "After 2 days" for the simulator's `at` (`+P2D`). */
export function simWhen(at: string): string {
  const s = durationSeconds(at.replace(/^\+/, ''));
  if (s === 0) return 'At entry';
  return `After ${describeDuration(at)}`;
}

function armWords(arm: SimulatedStep['arm']): string | null {
  if (arm === undefined || arm === null) return null;
  if (arm === 'then') return 'went down Yes';
  if (arm === 'else') return 'went down No';
  return `went down path ${String.fromCharCode(65 + Number(arm))}`;
}

function AddMenu({
  listId,
  index,
  label,
  onInsert,
}: {
  listId: ListId;
  index: number;
  label: string;
  onInsert: FlowProps['onInsert'];
}) {
  const [open, setOpen] = useState(false);
  const wrap = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menuId = useId();
  useEffect(() => {
    if (!open) return;
    const onDoc = (e: MouseEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener('mousedown', onDoc);
    document.addEventListener('keydown', onKey);
    wrap.current?.querySelector<HTMLButtonElement>('.flow-menu button')?.focus();
    return () => {
      document.removeEventListener('mousedown', onDoc);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  return (
    <div className="flow-add" ref={wrap}>
      <button
        ref={button}
        type="button"
        className="flow-add-btn"
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={label}
        title="Add a step here"
        onClick={() => setOpen((o) => !o)}
      >
        +
      </button>
      {open && (
        <div className="flow-menu" id={menuId} role="group" aria-label="Step types">
          {STEP_TYPES.map((t) => (
            <button
              key={t.value}
              type="button"
              className="flow-menu-item"
              onClick={() => {
                setOpen(false);
                onInsert(listId, index, t.value);
              }}
            >
              <Glyph type={t.value} />
              <span>
                <span className="flow-menu-label">{t.label}</span>
                <span className="muted small flow-menu-hint">{t.hint}</span>
              </span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

function Connector({ children, end = false }: { children?: ReactNode; end?: boolean }) {
  return <div className={end ? 'flow-connector flow-connector-end' : 'flow-connector'}>{children}</div>;
}

function StatsLine({ s, type }: { s: StepStats | undefined; type: StepType }) {
  if (!s) return null;
  return (
    <dl className="flow-stats">
      <div>
        <dt>Entered</dt>
        <dd>{formatNumber(s.entered)}</dd>
      </div>
      <div>
        <dt>Completed</dt>
        <dd>{formatNumber(s.completed)}</dd>
      </div>
      {type === 'send' && (
        <>
          <div>
            <dt>Sent</dt>
            <dd>{formatNumber(s.sent)}</dd>
          </div>
          <div>
            <dt>Opened</dt>
            <dd>
              {formatNumber(s.opened)}
              {s.sent > 0 && <span className="muted"> ({percent(s.opened, s.sent)})</span>}
            </dd>
          </div>
          <div>
            <dt>Clicked</dt>
            <dd>
              {formatNumber(s.clicked)}
              {s.sent > 0 && <span className="muted"> ({percent(s.clicked, s.sent)})</span>}
            </dd>
          </div>
        </>
      )}
    </dl>
  );
}

function StepCard({ step, index, count, ctx }: { step: DraftStep; index: number; count: number; ctx: FlowProps }) {
  const n = ctx.numbers.get(step.id) ?? 0;
  const name = `Step ${n}: ${stepLabel(step.type)}`;
  const problems = Object.values(ctx.problems[step.id] ?? {});
  const sim = ctx.path?.get(step.id);
  const selected = ctx.selected === step.id;
  const cls = [
    'flow-card',
    `flow-card-${step.type}`,
    selected && 'is-selected',
    problems.length > 0 && 'has-problems',
    sim && 'on-path',
    ctx.path && !sim && 'off-path',
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <article
      className={cls}
      aria-label={name}
      data-step-id={step.id}
      onClick={(e) => {
        if (!(e.target as HTMLElement).closest('button, a, input, select, textarea')) ctx.onSelect(step.id);
      }}
    >
      <div className="flow-card-head">
        <Glyph type={step.type} />
        <div className="flow-card-title">
          <button
            type="button"
            className="flow-card-select"
            aria-pressed={selected}
            onClick={() => ctx.onSelect(step.id)}
          >
            <span className="flow-card-num">{n}.</span> {stepLabel(step.type)}
          </button>
          <div className="flow-card-summary">{stepSummary(step, ctx.topicName)}</div>
        </div>
        {ctx.editable && (
          <span className="flow-tools">
            <Button
              size="sm"
              variant="ghost"
              onClick={() => ctx.onMove(step.id, -1)}
              disabled={index === 0}
              aria-label={`Move ${name} up`}
              title="Move up"
            >
              ↑
            </Button>
            <Button
              size="sm"
              variant="ghost"
              onClick={() => ctx.onMove(step.id, 1)}
              disabled={index === count - 1}
              aria-label={`Move ${name} down`}
              title="Move down"
            >
              ↓
            </Button>
            <Button
              size="sm"
              variant="ghost"
              onClick={() => ctx.onRemove(step.id)}
              aria-label={`Remove ${name}`}
              title="Remove"
            >
              ✕
            </Button>
          </span>
        )}
      </div>
      {problems.length > 0 && (
        <ul className="flow-problems" aria-label={countOf(problems.length, 'problem')}>
          {problems.slice(0, 3).map((m) => (
            <li key={m}>{m}</li>
          ))}
          {problems.length > 3 && <li>and {problems.length - 3} more</li>}
        </ul>
      )}
      <StatsLine s={ctx.stats?.get(step.id)} type={step.type} />
      {sim && (
        <div className="flow-sim" data-testid="sim-chip">
          <strong>{simWhen(sim.at)}</strong>
          {armWords(sim.arm) && <span> · {armWords(sim.arm)}</span>}
          {sim.subject && <div className="break">“{sim.subject}”</div>}
        </div>
      )}
    </article>
  );
}

function StepList({
  steps,
  listId,
  where,
  ctx,
}: {
  steps: DraftStep[];
  listId: ListId;
  where: string;
  ctx: FlowProps;
}) {
  const label = (index: number) => {
    const base = where ? `Add a step ${where},` : 'Add a step';
    if (steps.length === 0) return where ? `Add a step ${where}` : 'Add the first step';
    if (index === 0) return `${base} before step ${ctx.numbers.get(steps[0]!.id)}`;
    const prev = steps[index - 1]!;
    return `${base} after step ${ctx.numbers.get(prev.id)}${prev.type === 'branch' || prev.type === 'split' ? ' and its paths' : ''}`;
  };
  const add = (index: number) =>
    ctx.editable && <AddMenu listId={listId} index={index} onInsert={ctx.onInsert} label={label(index)} />;
  return (
    <ol className="flow-list">
      <li className="flow-gap">
        <Connector>{add(0)}</Connector>
      </li>
      {steps.map((s, i) => (
        <li key={s.id} className="flow-item">
          <StepCard step={s} index={i} count={steps.length} ctx={ctx} />
          {s.type === 'branch' && (
            <div className="flow-arms" role="group" aria-label={`The two paths of step ${ctx.numbers.get(s.id)}`}>
              <Arm
                label="Yes"
                detail="matches the filter"
                steps={s.then}
                listId={`${s.id}:then`}
                where={`to the Yes path of step ${ctx.numbers.get(s.id)}`}
                ctx={ctx}
                taken={ctx.path?.get(s.id)?.arm === 'then'}
              />
              <Arm
                label="No"
                detail="everyone else"
                steps={s.else}
                listId={`${s.id}:else`}
                where={`to the No path of step ${ctx.numbers.get(s.id)}`}
                ctx={ctx}
                taken={ctx.path?.get(s.id)?.arm === 'else'}
              />
            </div>
          )}
          {s.type === 'split' && (
            <div className="flow-arms" role="group" aria-label={`The paths of step ${ctx.numbers.get(s.id)}`}>
              {s.arms.map((a, n) => (
                <Arm
                  key={a.key}
                  label={`Path ${String.fromCharCode(65 + n)}`}
                  detail={`${a.percent || '?'}%`}
                  steps={a.steps}
                  listId={`${s.id}:arm:${n}`}
                  where={`to path ${String.fromCharCode(65 + n)} of step ${ctx.numbers.get(s.id)}`}
                  ctx={ctx}
                  taken={ctx.path?.get(s.id)?.arm === n}
                />
              ))}
            </div>
          )}
          <Connector>{add(i + 1)}</Connector>
        </li>
      ))}
    </ol>
  );
}

function Arm({
  label,
  detail,
  steps,
  listId,
  where,
  ctx,
  taken,
}: {
  label: string;
  detail: string;
  steps: DraftStep[];
  listId: ListId;
  where: string;
  ctx: FlowProps;
  taken: boolean;
}) {
  return (
    <div className={taken ? 'flow-arm is-taken' : 'flow-arm'} role="group" aria-label={`${label}: ${detail}`}>
      <div className="flow-arm-head">
        <span className="flow-arm-label">{label}</span> <span className="muted small">{detail}</span>
      </div>
      {steps.length === 0 && <p className="muted small flow-arm-empty">No steps: straight on.</p>}
      <StepList steps={steps} listId={listId} where={where} ctx={ctx} />
      <div className="flow-arm-rest" aria-hidden="true" />
    </div>
  );
}

/** The whole flow, from the trigger (`start`, rendered above it) to the end. */
export function AutomationFlow(props: FlowProps & { start: ReactNode }) {
  return (
    <div className="flow">
      {props.start}
      {props.steps.length === 0 && (
        <p className="muted small flow-empty">No steps yet{props.editable ? ': add the first with +.' : '.'}</p>
      )}
      <StepList steps={props.steps} listId="root" where="" ctx={props} />
      <div className="flow-end" aria-hidden="true">
        End
      </div>
    </div>
  );
}
