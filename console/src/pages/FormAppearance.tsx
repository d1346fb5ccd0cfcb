/**
 * The form editor's look and questions (docs/forms.md): `settings.appearance` (heading, intro, button, consent,
 * brand colour, logo, theme) with a live preview, `settings.fields` (label, type, options, required, placeholder),
 * and the Results tab: the per-question summary of the submissions.
 */
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { api, unwrap } from '../api/client';
import { formKeys } from '../api/keys';
import { Button, Checkbox, EmptyState, Input, QueryState, Select, Textarea } from '../components';
import { FormPreview } from '../components/FormPreview';
import { DEFAULT_BRAND, contrastRatio, textOn, type FieldDefinition, type FieldType, type FormAppearance, type Form as FormLook } from '@formcast/form-appearance';
import { formatNumber } from '../lib/format';
import '../styles/forms.css';

type Theme = NonNullable<FormAppearance['theme']>;

export interface AppearanceDraft {
  heading: string;
  intro: string;
  buttonLabel: string;
  consentText: string;
  brandColor: string;
  logoUrl: string;
  theme: Theme;
}

export function appearanceDraft(a: FormAppearance | undefined): AppearanceDraft {
  return {
    heading: a?.heading ?? '', intro: a?.intro ?? '', buttonLabel: a?.buttonLabel ?? '', consentText: a?.consentText ?? '',
    brandColor: a?.brandColor ?? '', logoUrl: a?.logoUrl ?? '', theme: a?.theme ?? 'light',
  };
}

/** The appearance to send: empty texts left out; null when nothing differs from the defaults. */
export function appearanceBody(d: AppearanceDraft): FormAppearance | null {
  const out: FormAppearance = {};
  if (d.heading.trim()) out.heading = d.heading.trim();
  if (d.intro.trim()) out.intro = d.intro.trim();
  if (d.buttonLabel.trim()) out.buttonLabel = d.buttonLabel.trim();
  if (d.consentText.trim()) out.consentText = d.consentText.trim();
  if (d.brandColor.trim()) out.brandColor = d.brandColor.trim();
  if (d.logoUrl.trim()) out.logoUrl = d.logoUrl.trim();
  if (d.theme !== 'light') out.theme = d.theme;
  return Object.keys(out).length ? out : null;
}

export interface QuestionRow {
  key: number;
  name: string;
  label: string;
  type: FieldType;
  /** One option a line. */
  options: string;
  required: boolean;
  placeholder: string;
}

let questionKey = 1;
const CHOICES: FieldType[] = ['select', 'radio', 'checkbox'];
export const FIELD_TYPE_OPTIONS: { value: FieldType; label: string }[] = [
  { value: 'text', label: 'Short text' }, { value: 'email', label: 'Email' }, { value: 'textarea', label: 'Long text' },
  { value: 'select', label: 'Drop-down (one answer)' }, { value: 'radio', label: 'Radio buttons (one answer)' },
  { value: 'checkbox', label: 'Checkboxes (with options: several answers; without: one box)' },
  { value: 'number', label: 'Number' }, { value: 'date', label: 'Date' },
];

export function questionRows(fields: Record<string, FieldDefinition> | undefined): QuestionRow[] {
  return Object.entries(fields ?? {}).map(([name, f]) => ({
    key: questionKey++, name, label: f.label, type: f.type, options: (f.options ?? []).join('\n'), required: f.required ?? false, placeholder: f.placeholder ?? '',
  }));
}

export function questionsBody(rows: QuestionRow[]): Record<string, FieldDefinition> | null {
  const out: Record<string, FieldDefinition> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (!name) continue;
    const options = r.options.split('\n').map((o) => o.trim()).filter(Boolean);
    const def: FieldDefinition = { label: r.label.trim(), type: r.type };
    if (options.length && CHOICES.includes(r.type)) def.options = options;
    if (r.required) def.required = true;
    if (r.placeholder.trim() && r.type !== 'radio' && r.type !== 'checkbox') def.placeholder = r.placeholder.trim();
    out[name] = def;
  }
  return Object.keys(out).length ? out : null;
}

const HEX = /^#[0-9a-fA-F]{6}$/;

/* ---------------------------------------------------------------- Appearance */

export function AppearanceFieldset({ draft, onChange, preview, errors, disabled }: {
  draft: AppearanceDraft; onChange: (d: AppearanceDraft) => void; preview: FormLook; errors: Record<string, string>; disabled: boolean;
}) {
  const set = <K extends keyof AppearanceDraft>(k: K, v: AppearanceDraft[K]) => onChange({ ...draft, [k]: v });
  const colorId = useId();
  const brand = HEX.test(draft.brandColor) ? draft.brandColor.toLowerCase() : DEFAULT_BRAND;
  const on = textOn(brand);
  const err = (k: string) => errors[`/settings/appearance/${k}`];
  return (
    <fieldset disabled={disabled} className="card stack">
      <legend>Appearance</legend>
      <p className="muted small">What visitors see on the hosted page and in the embeds. The form’s name stays internal.</p>
      <div className="appearance-grid">
        <div className="stack">
          <Input label="Heading" value={draft.heading} onChange={(e) => set('heading', e.target.value)} maxLength={200} placeholder={preview.type === 'SURVEY' ? 'We would love your feedback' : 'Subscribe to our newsletter'} error={err('heading')} hint={`${[...draft.heading].length}/200`} />
          <Textarea label="Introduction" value={draft.intro} onChange={(e) => set('intro', e.target.value)} rows={3} maxLength={2000} error={err('intro')} hint="Plain text; line breaks are kept." />
          <div className="grid-2">
            <Input label="Button label" value={draft.buttonLabel} onChange={(e) => set('buttonLabel', e.target.value)} maxLength={60} placeholder={preview.type === 'SURVEY' ? 'Send' : 'Subscribe'} error={err('buttonLabel')} />
            <Select label="Theme" value={draft.theme} onChange={(e) => set('theme', e.target.value as Theme)} error={err('theme')}
              options={[{ value: 'light', label: 'Light' }, { value: 'dark', label: 'Dark' }, { value: 'auto', label: 'Auto (follows the visitor’s system)' }]} />
          </div>
          <div className="field">
            <label htmlFor={colorId}>Brand colour</label>
            <div className="color-row">
              <input id={`${colorId}-picker`} type="color" className="color-swatch" value={brand} onChange={(e) => set('brandColor', e.target.value)} aria-label="Pick the brand colour" />
              <input id={colorId} className="input mono" value={draft.brandColor} onChange={(e) => set('brandColor', e.target.value)} placeholder={DEFAULT_BRAND} maxLength={7}
                aria-invalid={err('brandColor') ? true : undefined} aria-describedby={`${colorId}-hint${err('brandColor') ? ` ${colorId}-error` : ''}`} />
              {draft.brandColor && <Button size="sm" variant="ghost" onClick={() => set('brandColor', '')}>Reset</Button>}
            </div>
            <div className="hint" id={`${colorId}-hint`}>Buttons, focus rings and selected choices. Text on it: {on === '#ffffff' ? 'white' : 'black'} (contrast {contrastRatio(brand, on).toFixed(1)}:1).</div>
            {err('brandColor') && <div className="error" id={`${colorId}-error`}>{err('brandColor')}</div>}
          </div>
          <Input label="Logo URL" type="url" value={draft.logoUrl} onChange={(e) => set('logoUrl', e.target.value)} placeholder="https://example.com/logo.png" error={err('logoUrl')} hint="An https address; shown above the heading." />
          <Textarea label="Consent text" value={draft.consentText} onChange={(e) => set('consentText', e.target.value)} rows={2} maxLength={1000} error={err('consentText')}
            hint="Shown beside a checkbox visitors must tick. Its acceptance and this text are kept with each submission." />
        </div>
        <div className="stack-sm appearance-preview">
          <span className="cell-main">Live preview</span>
          <FormPreview form={preview} />
          <p className="muted small">Theme “auto” follows your own system setting here.</p>
        </div>
      </div>
    </fieldset>
  );
}

/* ----------------------------------------------------------------- Questions */

export function QuestionsFieldset({ rows, onChange, mapped, errors, disabled }: {
  rows: QuestionRow[]; onChange: (rows: QuestionRow[]) => void; mapped: string[]; errors: Record<string, string>; disabled: boolean;
}) {
  const update = (key: number, patch: Partial<QuestionRow>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rows];
    const [row] = next.splice(i, 1);
    next.splice(i + by, 0, row!);
    onChange(next);
  };
  const errorsOf = (name: string) => Object.entries(errors).filter(([p]) => p === `/settings/fields/${name}` || p.startsWith(`/settings/fields/${name}/`));
  return (
    <fieldset disabled={disabled} className="card stack">
      <legend>Questions</legend>
      <p className="muted small">
        Labels, types and choices of the form’s fields. A field named like one in “Fields” above fills that contact property;
        any other name is a question whose answer is kept with the submission (surveys). Fields without a question here are labelled from their names.
      </p>
      {rows.length === 0 && <p className="muted">No questions yet.</p>}
      <ol className="question-list">
        {rows.map((r, i) => {
          const problems = errorsOf(r.name.trim());
          const choice = CHOICES.includes(r.type);
          return (
            <li key={r.key} className="question-row" aria-label={`Question ${i + 1}`}>
              <div className="grid-3">
                <Input label="Field name" value={r.name} onChange={(e) => update(r.key, { name: e.target.value })} placeholder="e.g. plan" list="mapped-fields"
                  hint={r.name.trim() && mapped.includes(r.name.trim()) ? 'Fills a contact property' : 'Kept with the submission'} />
                <Input label="Label" value={r.label} onChange={(e) => update(r.key, { label: e.target.value })} maxLength={500} placeholder="What visitors read" />
                <Select label="Type" value={r.type} onChange={(e) => update(r.key, { type: e.target.value as FieldType })} options={FIELD_TYPE_OPTIONS} />
              </div>
              <div className="grid-2">
                {choice
                  ? <Textarea label="Options" value={r.options} onChange={(e) => update(r.key, { options: e.target.value })} rows={3} hint={r.type === 'checkbox' ? 'One a line. Leave empty for a single yes/no box.' : 'One a line.'} />
                  : <Input label="Placeholder" value={r.placeholder} onChange={(e) => update(r.key, { placeholder: e.target.value })} maxLength={200} />}
                <div className="stack-sm question-side">
                  {r.type === 'select' && <Input label="Placeholder" value={r.placeholder} onChange={(e) => update(r.key, { placeholder: e.target.value })} maxLength={200} placeholder="Choose…" />}
                  <Checkbox label="Required" checked={r.required} onChange={(e) => update(r.key, { required: e.target.checked })} />
                  <div className="row">
                    <Button size="sm" variant="ghost" onClick={() => move(i, -1)} disabled={i === 0} aria-label={`Move question ${i + 1} up`}>↑</Button>
                    <Button size="sm" variant="ghost" onClick={() => move(i, 1)} disabled={i === rows.length - 1} aria-label={`Move question ${i + 1} down`}>↓</Button>
                    <Button size="sm" variant="ghost" onClick={() => onChange(rows.filter((x) => x.key !== r.key))} aria-label={`Remove question ${r.label || r.name || i + 1}`}>Remove</Button>
                  </div>
                </div>
              </div>
              {problems.length > 0 && <ul className="error small" role="alert">{problems.map(([p, m]) => <li key={p}>{p.replace(`/settings/fields/${r.name.trim()}`, '') || r.name}: {m}</li>)}</ul>}
            </li>
          );
        })}
      </ol>
      <datalist id="mapped-fields">{mapped.map((m) => <option key={m} value={m} />)}</datalist>
      <div>
        <Button size="sm" onClick={() => onChange([...rows, { key: questionKey++, name: '', label: '', type: 'text', options: '', required: false, placeholder: '' }])}>Add question</Button>
      </div>
    </fieldset>
  );
}

/* ------------------------------------------------------------------- Results */

export function ResultsTab({ formId }: { formId: string }) {
  const q = useQuery({
    queryKey: formKeys.summary(formId),
    queryFn: async () => unwrap(await api.GET('/v1/forms/{formId}/submissions/summary', { params: { path: { formId } } })),
  });
  return (
    <QueryState query={q}>{(s) => (
      s.total === 0
        ? <div className="card"><EmptyState title="No answers yet">Once people submit the form, each question’s answers are summed up here.</EmptyState></div>
        : (
          <div className="stack">
            <p className="muted">{formatNumber(s.total)} {s.total === 1 ? 'submission' : 'submissions'}, every version of this form.</p>
            <div className="results-grid">
              {s.questions.map((question) => (
                <section key={question.field} className="card stack-sm result-card" aria-labelledby={`result-${question.field}`}>
                  <h3 id={`result-${question.field}`}>{question.label}</h3>
                  <p className="muted small">{formatNumber(question.answered)} of {formatNumber(s.total)} answered ({Math.round((question.answered / s.total) * 100)}%)</p>
                  {question.options && (
                    <ul className="result-bars">
                      {question.options.map((o) => {
                        const pct = question.answered ? Math.round((o.count / question.answered) * 100) : 0;
                        return (
                          <li key={o.value}>
                            <div className="result-label"><span>{o.value}</span><span className="muted">{formatNumber(o.count)} · {pct}%</span></div>
                            <div className="result-track" aria-hidden="true"><div className="result-fill" style={{ width: `${pct}%` }} /></div>
                          </li>
                        );
                      })}
                      {(question.other ?? 0) > 0 && <li className="muted small">{formatNumber(question.other)} gave an answer that is no longer an option</li>}
                    </ul>
                  )}
                </section>
              ))}
            </div>
          </div>
        )
    )}</QueryState>
  );
}
