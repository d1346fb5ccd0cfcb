/** A dry run for a contact or a made-up one: the path taken, with each step's time and rendered subject. */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { simWhen, stepSummary } from '../../components/AutomationFlow';
import { Button, Checkbox, ErrorSummary, Input, Select, Textarea } from '../../components';
import {
  allSteps,
  automationsApi,
  stepLabel,
  type Automation,
  type DraftStep,
  type Simulation,
} from '../../lib/automations';
import { useRecentContacts } from '../../lib/automation-hooks';
import { useTopics } from '../../lib/audience';
import { problemOf } from '../../lib/forms';

export function Simulator({
  automation,
  ensureSaved,
  result,
  onResult,
  numbers,
  steps,
  stale,
  topicName,
}: {
  automation: Automation;
  ensureSaved: () => Promise<void>;
  result: Simulation | null;
  onResult: (r: Simulation | null) => void;
  numbers: Map<string, number>;
  steps: DraftStep[];
  stale: boolean;
  topicName: (id: string) => string;
}) {
  const topics = useTopics();
  const contacts = useRecentContacts();
  const [mode, setMode] = useState<'contact' | 'madeup'>('contact');
  const [pick, setPick] = useState('');
  const [email, setEmail] = useState('ada@example.com');
  const [firstName, setFirstName] = useState('Ada');
  const [props, setProps] = useState('{\n  "plan": "pro"\n}');
  const [subscribed, setSubscribed] = useState<string[]>([]);
  let propsError: string | null = null;
  let parsedProps: Record<string, unknown> | undefined;
  if (props.trim()) {
    try {
      const v: unknown = JSON.parse(props);
      if (!v || typeof v !== 'object' || Array.isArray(v))
        propsError = 'Properties are a JSON object, such as { "plan": "pro" }.';
      else parsedProps = v as Record<string, unknown>;
    } catch (e) {
      propsError = `Not valid JSON: ${(e as Error).message}`;
    }
  }
  const run = useMutation({
    mutationFn: async () => {
      await ensureSaved();
      if (mode === 'contact') return automationsApi.simulate(automation.id, { contactId: pick });
      return automationsApi.simulate(automation.id, {
        contact: {
          email: email.trim(),
          ...(firstName.trim() ? { firstName: firstName.trim() } : {}),
          ...(parsedProps ? { properties: parsedProps } : {}),
          topics: subscribed,
        },
      });
    },
    onSuccess: (r) => onResult(r),
  });
  const { fields, message, rest } = problemOf(run.error, {
    '/contactId': 'Contact',
    '/contact/email': 'Email',
    '/contact/firstName': 'First name',
    '/contact/properties/**': 'Properties',
    '/contact/properties': 'Properties',
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate();
  };
  const byId = new Map(allSteps(steps).map((s) => [s.id, s]));
  const ready = mode === 'contact' ? !!pick : !!email.trim() && !propsError;
  return (
    <div className="stack">
      <p className="muted small">
        A dry run through the saved steps: nothing is sent or changed. The path lights up in the flow.
      </p>
      <form className="stack-sm" onSubmit={submit} noValidate aria-label="Simulate">
        <fieldset className="sim-mode">
          <legend>Who</legend>
          <label className="fb-check">
            <input type="radio" name="sim-mode" checked={mode === 'contact'} onChange={() => setMode('contact')} /> A
            contact
          </label>
          <label className="fb-check">
            <input type="radio" name="sim-mode" checked={mode === 'madeup'} onChange={() => setMode('madeup')} /> A
            made-up contact
          </label>
        </fieldset>
        {mode === 'contact' ? (
          <Select
            id="sim-contact"
            label="Contact"
            value={pick}
            onChange={(e) => setPick(e.target.value)}
            disabled={contacts.isPending}
            error={fields['/contactId']}
            hint="Your 50 newest contacts, as they are now."
            options={[
              {
                value: '',
                label: contacts.isPending
                  ? 'Loading…'
                  : contacts.data?.length
                    ? 'Choose a contact…'
                    : 'No contacts yet',
              },
              ...(contacts.data ?? []).map((c) => ({
                value: c.id,
                label: [c.email, [c.firstName, c.lastName].filter(Boolean).join(' ')].filter(Boolean).join(' — '),
              })),
            ]}
          />
        ) : (
          <>
            <Input
              id="sim-email"
              label="Email"
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              error={fields['/contact/email']}
            />
            <Input
              id="sim-first-name"
              label="First name"
              value={firstName}
              onChange={(e) => setFirstName(e.target.value)}
              error={fields['/contact/firstName']}
            />
            <Textarea
              id="sim-properties"
              label="Properties (JSON)"
              value={props}
              onChange={(e) => setProps(e.target.value)}
              rows={4}
              className="mono-field"
              error={
                propsError ??
                fields['/contact/properties'] ??
                Object.entries(fields).find(([k]) => k.startsWith('/contact/properties/'))?.[1]
              }
            />
            {(topics.data ?? []).length > 0 && (
              <fieldset>
                <legend>Subscribed to</legend>
                <div className="stack-sm">
                  {(topics.data ?? []).map((t) => (
                    <Checkbox
                      key={t.id}
                      label={t.name}
                      checked={subscribed.includes(t.id)}
                      onChange={(e) =>
                        setSubscribed((xs) => (e.target.checked ? [...xs, t.id] : xs.filter((x) => x !== t.id)))
                      }
                    />
                  ))}
                </div>
              </fieldset>
            )}
          </>
        )}
        <ErrorSummary message={message} errors={rest} />
        <div className="row">
          <Button type="submit" variant="primary" loading={run.isPending} disabled={!ready}>
            Run the simulation
          </Button>
          {result && (
            <Button variant="ghost" onClick={() => onResult(null)}>
              Clear
            </Button>
          )}
        </div>
      </form>
      {result && (
        <section className="stack-sm sim-result" aria-labelledby="sim-h" aria-live="polite">
          <h3 id="sim-h">The path</h3>
          {stale && (
            <div className="callout callout-warning small" role="status">
              The steps changed since: run it again.
            </div>
          )}
          {result.steps.length === 0 ? (
            <p className="muted">No step: the automation has none yet.</p>
          ) : (
            <ol className="list-plain sim-steps">
              {result.steps.map((s, i) => {
                const d = byId.get(s.stepId);
                return (
                  <li key={`${s.stepId}-${i}`} className="sim-step">
                    <span className="sim-when">{simWhen(s.at)}</span>
                    <span>
                      <strong>
                        {numbers.get(s.stepId) ? `${numbers.get(s.stepId)}. ` : ''}
                        {stepLabel(s.type)}
                      </strong>
                      {d && s.type !== 'send' && <span className="muted"> — {stepSummary(d, topicName)}</span>}
                      {s.arm !== undefined && s.arm !== null && (
                        <span className="muted">
                          {' '}
                          →{' '}
                          {s.arm === 'then'
                            ? 'Yes'
                            : s.arm === 'else'
                              ? 'No'
                              : `path ${String.fromCharCode(65 + Number(s.arm))}`}
                        </span>
                      )}
                      {s.subject != null && (
                        <div className="sim-subject break" data-testid="sim-subject">
                          “{s.subject}”
                        </div>
                      )}
                    </span>
                  </li>
                );
              })}
            </ol>
          )}
          <p className={result.exited ? 'callout callout-info small' : 'muted small'}>
            {result.exited ? `The run exits: ${result.exited}.` : 'The run completes after the last step.'}
          </p>
        </section>
      )}
    </div>
  );
}
