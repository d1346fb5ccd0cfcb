/**
 * The forms of an automation's parts: the trigger (type, its form / topic / segment / event, an optional
 * entry filter in the FilterBuilder) and each step type (the selected step's inspector beside the flow).
 * Problems come keyed by the field's pointer inside the step (`/from`, `/emailContent/subject`, `/arms/1/percent`)
 * and show under their field; the rest at the top of the form.
 */
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import {
  DURATION_UNITS,
  joinDuration,
  newArm,
  newPropRow,
  STEP_TYPES,
  TRIGGER_TYPES,
  type DraftStep,
  type DraftTrigger,
  type DurationUnit,
  type PropKind,
  type TriggerType,
} from '../lib/automations';
import { Button } from './Button';
import { Dialog } from './Dialog';
import { EmailPreview } from './EmailPreview';
import {
  EmailContentEditor,
  isBlockDocument,
  useModeSwitch,
  type BlockDocument,
  type EmailContentValue,
} from './email-editor';
import { useWorkspaceLook } from './email-editor/workspace';
import { SaveAsTemplate } from './SaveAsTemplate';
import { TemplateGallery } from './TemplateGallery';
import { countBlocks } from './email-editor/operations';
import { Checkbox, ErrorSummary, Input, Select } from './Field';
import { FilterBuilder, newGroup } from './FilterBuilder';
import { count } from '../lib/format';

export interface Option {
  id: string;
  name: string;
}

/* ------------------------------------------------------------------ Trigger */

export function TriggerFields({
  trigger,
  onChange,
  errors,
  disabled,
  forms,
  topics,
  segments,
  idPrefix = 'trigger',
  hideFilter = false,
}: {
  trigger: DraftTrigger;
  onChange: (t: DraftTrigger) => void;
  /** Keyed by pointer from the body's root: `/trigger/formGroupId`, `/trigger/filter/all/0/value`. */
  errors: Record<string, string>;
  disabled: boolean;
  forms: { data?: Option[]; isPending: boolean };
  topics: { data?: Option[]; isPending: boolean };
  segments: { data?: Option[]; isPending: boolean };
  idPrefix?: string;
  /** Without the entry filter (the new-automation dialog: it is set on the automation's page). */
  hideFilter?: boolean;
}) {
  const set = (patch: Partial<DraftTrigger>) => onChange({ ...trigger, ...patch });
  const info = TRIGGER_TYPES.find((t) => t.value === trigger.type);
  const filterErrors = Object.fromEntries(
    Object.entries(errors)
      .filter(([p]) => p.startsWith('/trigger/filter'))
      .map(([p, m]) => [p.slice('/trigger'.length), m]),
  );
  const known = (list: Option[] | undefined, id: string) => !id || (list ?? []).some((o) => o.id === id);
  return (
    <div className="stack-sm">
      <div className="grid-2">
        <Select
          id={`${idPrefix}-type`}
          label="Starts when"
          value={trigger.type}
          onChange={(e) => set({ type: e.target.value as TriggerType })}
          disabled={disabled}
          options={TRIGGER_TYPES.map((t) => ({ value: t.value, label: t.label }))}
          hint={info?.hint}
          error={errors['/trigger/type'] ?? errors['/trigger']}
        />
        {trigger.type === 'form.submitted' && (
          <Select
            id={`${idPrefix}-form`}
            label="Form"
            value={trigger.formGroupId}
            onChange={(e) => set({ formGroupId: e.target.value })}
            disabled={disabled || forms.isPending}
            error={errors['/trigger/formGroupId']}
            hint={<Link to="/forms">Your forms</Link>}
            options={[
              { value: '', label: forms.isPending ? 'Loading…' : 'Choose a form…' },
              ...(known(forms.data, trigger.formGroupId)
                ? []
                : [{ value: trigger.formGroupId, label: `${trigger.formGroupId} (not found)` }]),
              ...(forms.data ?? []).map((f) => ({ value: f.id, label: f.name })),
            ]}
          />
        )}
        {trigger.type === 'contact.subscribed' && (
          <Select
            id={`${idPrefix}-topic`}
            label="Topic"
            value={trigger.topicId}
            onChange={(e) => set({ topicId: e.target.value })}
            disabled={disabled || topics.isPending}
            error={errors['/trigger/topicId']}
            hint="Without a topic: the contact becoming subscribed at all."
            options={[
              { value: '', label: 'Any: the contact becomes subscribed' },
              ...(known(topics.data, trigger.topicId)
                ? []
                : [{ value: trigger.topicId, label: `${trigger.topicId} (not found)` }]),
              ...(topics.data ?? []).map((t) => ({ value: t.id, label: `Subscribes to ${t.name}` })),
            ]}
          />
        )}
        {trigger.type === 'segment.entered' && (
          <Select
            id={`${idPrefix}-segment`}
            label="Segment"
            value={trigger.segmentId}
            onChange={(e) => set({ segmentId: e.target.value })}
            disabled={disabled || segments.isPending}
            error={errors['/trigger/segmentId']}
            hint={<Link to="/segments/new">Build a segment</Link>}
            options={[
              { value: '', label: segments.isPending ? 'Loading…' : 'Choose a segment…' },
              ...(known(segments.data, trigger.segmentId)
                ? []
                : [{ value: trigger.segmentId, label: `${trigger.segmentId} (not found)` }]),
              ...(segments.data ?? []).map((s) => ({ value: s.id, label: s.name })),
            ]}
          />
        )}
        {trigger.type === 'event' && (
          <Input
            id={`${idPrefix}-event`}
            label="Event name"
            value={trigger.name}
            onChange={(e) => set({ name: e.target.value })}
            disabled={disabled}
            maxLength={200}
            error={errors['/trigger/name']}
            placeholder="trial_started"
            hint={
              <>
                Sent with <code>POST /v1/events/track</code>.
              </>
            }
          />
        )}
      </div>
      {!hideFilter && (
        <Checkbox
          id={`${idPrefix}-use-filter`}
          label="Only contacts who match a filter enter"
          checked={trigger.useFilter}
          disabled={disabled}
          onChange={(e) =>
            set({
              useFilter: e.target.checked,
              tree: trigger.tree.kind === 'group' ? trigger.tree : newGroup('all', []),
            })
          }
          hint="Checked when the trigger happens: the contact as it is then."
        />
      )}
      {!hideFilter && trigger.useFilter && (
        <FilterBuilder
          root={trigger.tree}
          onChange={(tree) => set({ tree })}
          topics={topics.data ?? []}
          errors={filterErrors}
          disabled={disabled}
        />
      )}
    </div>
  );
}

/* ------------------------------------------------------------------ Steps */

interface StepCtx {
  editable: boolean;
  problems: Record<string, string>;
  topics: { data?: Option[]; isPending: boolean };
  verifiedDomains?: string[];
  /** A send step's email in the visual editor: the autosave's state, and whether the editor is open (it autosaves then). */
  email?: { status: ReactNode; onEditing: (open: boolean) => void };
}

const PROP_KINDS: { value: PropKind; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'number', label: 'Number' },
  { value: 'boolean', label: 'Yes/no' },
  { value: 'remove', label: 'Remove it' },
];

function SendFields({
  step,
  set,
  ctx,
}: {
  step: DraftStep & { type: 'send' };
  set: (p: Partial<DraftStep & { type: 'send' }>) => void;
  ctx: StepCtx;
}) {
  const p = ctx.problems;
  const [preview, setPreview] = useState(false);
  const [editing, setEditing] = useState(false);
  const [gallery, setGallery] = useState(false);
  const openEditor = (open: boolean) => {
    setEditing(open);
    ctx.email?.onEditing(open);
  };
  const visual = isBlockDocument(step.editorContent);
  const content: EmailContentValue = { html: step.html, text: step.text, editorContent: step.editorContent };
  const change = (v: EmailContentValue) =>
    set({ html: v.html ?? '', text: v.text ?? '', editorContent: v.editorContent });
  const look = useWorkspaceLook();
  const doc = visual ? (step.editorContent as BlockDocument) : null;
  const modes = useModeSwitch(content, change, doc, look.brandColor);
  const contentErrors = Object.fromEntries(
    Object.entries(p)
      .filter(
        ([k]) => k.startsWith('/emailContent/') && k !== '/emailContent/subject' && k !== '/emailContent/previewText',
      )
      .map(([k, m]) => [k.slice('/emailContent'.length), m]),
  );
  const domains = ctx.verifiedDomains;
  const fromHint =
    domains === undefined ? null : domains.length ? (
      <>
        On a verified domain:{' '}
        {domains.map((n, i) => (
          <span key={n}>
            {i > 0 && ', '}
            <code>{n}</code>
          </span>
        ))}
        .
      </>
    ) : (
      <>
        No verified domain yet: <Link to="/domains">add and verify one</Link> to send.
      </>
    );
  return (
    <>
      <Input
        id="step-from"
        label="From"
        value={step.from}
        onChange={(e) => set({ from: e.target.value })}
        error={p['/from']}
        hint={fromHint}
        placeholder="Acme <news@example.com>"
        disabled={!ctx.editable}
      />
      <Input
        id="step-reply-to"
        label="Reply-to"
        type="email"
        value={step.replyTo}
        onChange={(e) => set({ replyTo: e.target.value })}
        error={p['/replyTo']}
        hint="Optional: where replies go."
        disabled={!ctx.editable}
      />
      <Input
        id="step-subject"
        label="Subject"
        value={step.subject}
        onChange={(e) => set({ subject: e.target.value })}
        error={p['/emailContent/subject'] ?? p['/emailContent']}
        maxLength={998}
        disabled={!ctx.editable}
        placeholder='Welcome, {{ contact.firstName | default: "friend" }}'
      />
      <Input
        id="step-preview-text"
        label="Preview text"
        value={step.previewText}
        onChange={(e) => set({ previewText: e.target.value })}
        error={p['/emailContent/previewText']}
        maxLength={500}
        disabled={!ctx.editable}
        hint="Shown after the subject in most inboxes."
      />
      {visual ? (
        <div className="field">
          <span className="label" id="step-email-label">
            Email
          </span>
          <div className="hint" id="step-email-hint">
            Made in the visual editor: {count(doc ? countBlocks(doc) : 0, 'block')}.
            {Object.keys(contentErrors).length > 0 && ' It has problems to fix: open it.'}
          </div>
          <div className="row">
            <Button
              variant={ctx.editable ? 'primary' : 'secondary'}
              aria-describedby="step-email-hint"
              onClick={() => openEditor(true)}
            >
              {ctx.editable ? 'Edit the email' : 'View the email'}
            </Button>
            {ctx.editable && (
              <Button variant="ghost" onClick={() => setGallery(true)}>
                Start from a template…
              </Button>
            )}
            {ctx.editable && (
              <Button variant="ghost" onClick={modes.askToCode}>
                Write HTML instead…
              </Button>
            )}
            <SaveAsTemplate
              content={{
                subject: step.subject || null,
                html: step.html,
                text: step.text,
                editorContent: step.editorContent,
              }}
              defaultName={step.subject || 'Automation email'}
              variant="ghost"
            />
            {modes.dialogs}
          </div>
          <TemplateGallery
            open={gallery}
            title="Start this email from a template"
            onClose={() => setGallery(false)}
            onPick={(picked) => {
              // The template's content replaces the email's (and its subject, when the step has none yet).
              set({
                html: picked.content.html ?? '',
                text: picked.content.text ?? '',
                editorContent: picked.content.editorContent ?? null,
                ...(step.subject.trim() ? {} : { subject: picked.content.subject ?? '' }),
              });
              setGallery(false);
            }}
          />
          <Dialog
            wide
            open={editing}
            title={ctx.editable ? 'Edit the email of this step' : 'The email of this step'}
            onClose={() => openEditor(false)}
            footer={
              <Button variant="primary" onClick={() => openEditor(false)}>
                Done
              </Button>
            }
          >
            <EmailContentEditor
              value={content}
              onChange={change}
              readOnly={!ctx.editable}
              errors={contentErrors}
              status={ctx.email?.status}
              idPrefix={`step-${step.id}`}
            />
          </Dialog>
        </div>
      ) : (
        <div className="stack-sm">
          <EmailContentEditor
            value={content}
            onChange={change}
            readOnly={!ctx.editable}
            errors={contentErrors}
            idPrefix={`step-${step.id}`}
            preview={false}
          />
          <div>
            <Button size="sm" variant="ghost" aria-expanded={preview} onClick={() => setPreview((x) => !x)}>
              {preview ? 'Hide the preview' : 'Preview the HTML'}
            </Button>
          </div>
          {preview &&
            (step.html.trim() ? (
              <EmailPreview
                html={step.html}
                title="Preview of this step's HTML (Liquid not rendered)"
                className="preview-frame step-preview"
              />
            ) : (
              <p className="muted small">No HTML yet.</p>
            ))}
        </div>
      )}
    </>
  );
}

function WaitFields({
  step,
  set,
  ctx,
}: {
  step: DraftStep & { type: 'wait' };
  set: (p: Partial<DraftStep & { type: 'wait' }>) => void;
  ctx: StepCtx;
}) {
  const iso = joinDuration(step.amount, step.unit);
  const error = ctx.problems['/duration'];
  return (
    <fieldset className="wait-fields" aria-describedby="wait-hint">
      <legend>Wait for</legend>
      <div className="row">
        <input
          id="wait-amount"
          className="input wait-amount"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          value={step.amount}
          onChange={(e) => set({ amount: e.target.value })}
          disabled={!ctx.editable}
          aria-label="Wait: how many"
          aria-invalid={error ? true : undefined}
        />
        <select
          id="wait-unit"
          className="select wait-unit"
          value={step.unit}
          onChange={(e) => set({ unit: e.target.value as DurationUnit })}
          disabled={!ctx.editable}
          aria-label="Wait: unit"
        >
          {DURATION_UNITS.map((u) => (
            <option key={u.value} value={u.value}>
              {u.label}
            </option>
          ))}
        </select>
      </div>
      <div className="hint muted small" id="wait-hint">
        {iso ? (
          <>
            Sent to the API as <code>{iso}</code>. A wait that ended while the automation was paused goes on at once.
          </>
        ) : (
          'A whole number of minutes, hours, days or weeks.'
        )}
      </div>
      {error && <div className="error small">{error}</div>}
    </fieldset>
  );
}

function UpdateFields({
  step,
  set,
  ctx,
}: {
  step: DraftStep & { type: 'update' };
  set: (p: Partial<DraftStep & { type: 'update' }>) => void;
  ctx: StepCtx;
}) {
  const p = ctx.problems;
  const rows = step.rows;
  const update = (key: number, patch: Partial<(typeof rows)[number]>) =>
    set({ rows: rows.map((r) => (r.key === key ? { ...r, ...patch } : r)) });
  return (
    <div className="stack-sm">
      <p className="muted small">Merged into the contact's properties: other properties stay as they are.</p>
      {p['/properties'] && <div className="error small">{p['/properties']}</div>}
      {rows.map((r, i) => (
        <div key={r.key} className="update-row">
          <Input
            label="Property"
            value={r.name}
            onChange={(e) => update(r.key, { name: e.target.value })}
            disabled={!ctx.editable}
            aria-label={`Property ${i + 1} key`}
            error={p[`row:${r.key}`] ?? (r.name.trim() ? p[`/properties/${r.name.trim()}`] : undefined)}
            placeholder="onboarded"
          />
          <Select
            label="Type"
            value={r.kind}
            onChange={(e) =>
              update(r.key, {
                kind: e.target.value as PropKind,
                value: e.target.value === 'boolean' ? 'true' : r.value,
              })
            }
            disabled={!ctx.editable}
            aria-label={`Property ${i + 1} type`}
            options={PROP_KINDS}
          />
          {r.kind === 'boolean' ? (
            <Select
              label="Value"
              value={r.value}
              onChange={(e) => update(r.key, { value: e.target.value })}
              disabled={!ctx.editable}
              aria-label={`Property ${i + 1} value`}
              options={[
                { value: 'true', label: 'Yes (true)' },
                { value: 'false', label: 'No (false)' },
              ]}
            />
          ) : r.kind === 'remove' ? (
            <div className="field">
              <span className="label">Value</span>
              <span className="muted small update-remove">The key is removed.</span>
            </div>
          ) : (
            <Input
              label="Value"
              value={r.value}
              inputMode={r.kind === 'number' ? 'decimal' : undefined}
              onChange={(e) => update(r.key, { value: e.target.value })}
              disabled={!ctx.editable}
              aria-label={`Property ${i + 1} value`}
            />
          )}
          {ctx.editable && (
            <Button
              variant="ghost"
              size="sm"
              className="update-remove-btn"
              onClick={() => set({ rows: rows.filter((x) => x.key !== r.key) })}
              aria-label={`Remove property ${r.name || i + 1}`}
            >
              ✕
            </Button>
          )}
        </div>
      ))}
      {ctx.editable && (
        <div>
          <Button size="sm" onClick={() => set({ rows: [...rows, newPropRow()] })}>
            + Property
          </Button>
        </div>
      )}
    </div>
  );
}

function SplitFields({
  step,
  set,
  ctx,
}: {
  step: DraftStep & { type: 'split' };
  set: (p: Partial<DraftStep & { type: 'split' }>) => void;
  ctx: StepCtx;
}) {
  const p = ctx.problems;
  const arms = step.arms;
  const sum = arms.reduce((a, x) => a + (Number(x.percent) || 0), 0);
  const even = () => {
    const base = Math.floor(100 / arms.length);
    set({ arms: arms.map((a, i) => ({ ...a, percent: String(base + (i < 100 - base * arms.length ? 1 : 0)) })) });
  };
  return (
    <fieldset>
      <legend>Paths</legend>
      <div className="stack-sm">
        <p className="muted small">
          A contact's path is a hash of the contact and this step: the same every time. The steps after the split run
          for every path.
        </p>
        {arms.map((a, i) => {
          const letter = String.fromCharCode(65 + i);
          return (
            <div key={a.key} className="row split-row">
              <label htmlFor={`arm-${a.key}`} className="split-label">
                Path {letter}
              </label>
              <input
                id={`arm-${a.key}`}
                className="input split-percent"
                type="number"
                min={1}
                max={99}
                step={1}
                value={a.percent}
                disabled={!ctx.editable}
                onChange={(e) =>
                  set({ arms: arms.map((x) => (x.key === a.key ? { ...x, percent: e.target.value } : x)) })
                }
                aria-invalid={p[`/arms/${i}/percent`] ? true : undefined}
                aria-describedby={p[`/arms/${i}/percent`] ? `arm-${a.key}-err` : undefined}
              />
              <span aria-hidden="true">%</span>
              <span className="muted small">{count(a.steps.length, 'step')}</span>
              {ctx.editable && arms.length > 2 && (
                <Button
                  size="sm"
                  variant="ghost"
                  onClick={() => set({ arms: arms.filter((x) => x.key !== a.key) })}
                  aria-label={`Remove path ${letter}${a.steps.length ? ` and its ${count(a.steps.length, 'step')}` : ''}`}
                >
                  Remove
                </Button>
              )}
              {p[`/arms/${i}/percent`] && (
                <div className="error small split-error" id={`arm-${a.key}-err`}>
                  {p[`/arms/${i}/percent`]}
                </div>
              )}
            </div>
          );
        })}
        <div className={sum === 100 ? 'small muted' : 'small error'} aria-live="polite">
          Total: {sum}%{sum === 100 ? '' : ' (must be 100)'}
        </div>
        {p['/arms'] && sum === 100 && <div className="error small">{p['/arms']}</div>}
        {ctx.editable && (
          <div className="row">
            <Button size="sm" disabled={arms.length >= 5} onClick={() => set({ arms: [...arms, newArm(0)] })}>
              + Path
            </Button>
            <Button size="sm" variant="ghost" onClick={even}>
              Split evenly
            </Button>
          </div>
        )}
      </div>
    </fieldset>
  );
}

/** The form of one step, by its type. */
export function StepFields({
  step,
  onChange,
  ctx,
}: {
  step: DraftStep;
  onChange: (s: DraftStep) => void;
  ctx: StepCtx;
}) {
  const set = (patch: Partial<DraftStep>) => onChange({ ...step, ...patch } as DraftStep);
  const p = ctx.problems;
  const shown = new Set([
    '/from',
    '/replyTo',
    '/emailContent',
    '/emailContent/subject',
    '/emailContent/previewText',
    '/emailContent/html',
    '/emailContent/text',
    '/duration',
    '/topicId',
    '/properties',
    '/arms',
    '/url',
  ]);
  const rest = Object.entries(p).filter(
    ([k]) =>
      !shown.has(k) &&
      !/^\/arms\/\d+\/percent$/.test(k) &&
      !k.startsWith('row:') &&
      !k.startsWith('/properties/') &&
      !k.startsWith('/emailContent/editorContent') &&
      !(step.type === 'branch' && k.startsWith('/filter')),
  );
  let body: ReactNode;
  switch (step.type) {
    case 'send':
      body = <SendFields step={step} set={set} ctx={ctx} />;
      break;
    case 'wait':
      body = <WaitFields step={step} set={set} ctx={ctx} />;
      break;
    case 'topic':
      body = (
        <>
          <Select
            id="step-topic"
            label="Topic"
            value={step.topicId}
            onChange={(e) => set({ topicId: e.target.value })}
            disabled={!ctx.editable || ctx.topics.isPending}
            error={p['/topicId']}
            options={[
              { value: '', label: ctx.topics.isPending ? 'Loading…' : 'Choose a topic…' },
              ...(ctx.topics.data ?? []).map((t) => ({ value: t.id, label: t.name })),
            ]}
            hint={<Link to="/topics">Your topics</Link>}
          />
          <Select
            id="step-subscribed"
            label="Action"
            value={step.subscribed ? 'true' : 'false'}
            onChange={(e) => set({ subscribed: e.target.value === 'true' })}
            disabled={!ctx.editable}
            options={[
              { value: 'true', label: 'Subscribe the contact' },
              { value: 'false', label: 'Unsubscribe the contact' },
            ]}
          />
        </>
      );
      break;
    case 'update':
      body = <UpdateFields step={step} set={set} ctx={ctx} />;
      break;
    case 'branch': {
      const filterErrors = Object.fromEntries(Object.entries(p).filter(([k]) => k.startsWith('/filter')));
      body = (
        <div className="stack-sm">
          <p className="muted small">
            Contacts who match go down <strong>Yes</strong>, everyone else down <strong>No</strong>; both go on with the
            steps after it. The contact as it is when it gets here.
          </p>
          <FilterBuilder
            root={step.tree}
            onChange={(tree) => set({ tree })}
            topics={ctx.topics.data ?? []}
            errors={filterErrors}
            disabled={!ctx.editable}
          />
        </div>
      );
      break;
    }
    case 'split':
      body = <SplitFields step={step} set={set} ctx={ctx} />;
      break;
    case 'webhook':
      body = (
        <Input
          id="step-url"
          label="URL"
          type="url"
          value={step.url}
          onChange={(e) => set({ url: e.target.value })}
          error={p['/url']}
          disabled={!ctx.editable}
          placeholder="https://hooks.example.com/onboarded"
          hint="A POST signed like the workspace's webhooks (Standard Webhooks), with the contact and the run."
        />
      );
      break;
    default:
      body = (
        <p className="muted">
          The run ends here: the contact leaves the automation. Steps after an exit on the same path are never reached.
        </p>
      );
  }
  return (
    <div className="stack">
      <ErrorSummary errors={rest.map(([, m]) => m)} />
      {body}
      <p className="muted small">
        {STEP_TYPES.find((t) => t.value === step.type)?.hint} Step id <code>{step.id}</code>: runs and stats name it.
      </p>
    </div>
  );
}
