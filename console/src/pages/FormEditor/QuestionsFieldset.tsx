/** A form's questions (settings.fields): label, type, options, required, placeholder, in order. */
import { Button, Checkbox, Input, Select, Textarea } from '../../components';
import type { FieldDefinition, FieldType } from '@formcast/form-appearance';

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
  { value: 'text', label: 'Short text' },
  { value: 'email', label: 'Email' },
  { value: 'textarea', label: 'Long text' },
  { value: 'select', label: 'Drop-down (one answer)' },
  { value: 'radio', label: 'Radio buttons (one answer)' },
  { value: 'checkbox', label: 'Checkboxes (with options: several answers; without: one box)' },
  { value: 'number', label: 'Number' },
  { value: 'date', label: 'Date' },
];

export function questionRows(fields: Record<string, FieldDefinition> | undefined): QuestionRow[] {
  return Object.entries(fields ?? {}).map(([name, f]) => ({
    key: questionKey++,
    name,
    label: f.label,
    type: f.type,
    options: (f.options ?? []).join('\n'),
    required: f.required ?? false,
    placeholder: f.placeholder ?? '',
  }));
}

export function questionsBody(rows: QuestionRow[]): Record<string, FieldDefinition> | null {
  const out: Record<string, FieldDefinition> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (!name) continue;
    const options = r.options
      .split('\n')
      .map((o) => o.trim())
      .filter(Boolean);
    const def: FieldDefinition = { label: r.label.trim(), type: r.type };
    if (options.length && CHOICES.includes(r.type)) def.options = options;
    if (r.required) def.required = true;
    if (r.placeholder.trim() && r.type !== 'radio' && r.type !== 'checkbox') def.placeholder = r.placeholder.trim();
    out[name] = def;
  }
  return Object.keys(out).length ? out : null;
}

export function QuestionsFieldset({
  rows,
  onChange,
  mapped,
  errors,
  disabled,
}: {
  rows: QuestionRow[];
  onChange: (rows: QuestionRow[]) => void;
  mapped: string[];
  errors: Record<string, string>;
  disabled: boolean;
}) {
  const update = (key: number, patch: Partial<QuestionRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rows];
    const [row] = next.splice(i, 1);
    next.splice(i + by, 0, row!);
    onChange(next);
  };
  const errorsOf = (name: string) =>
    Object.entries(errors).filter(
      ([p]) => p === `/settings/fields/${name}` || p.startsWith(`/settings/fields/${name}/`),
    );
  return (
    <fieldset disabled={disabled} className="card stack">
      <legend>Questions</legend>
      <p className="muted small">
        Labels, types and choices of the form’s fields. A field named like one in “Fields” above fills that contact
        property; any other name is a question whose answer is kept with the submission (surveys). Fields without a
        question here are labelled from their names.
      </p>
      {rows.length === 0 && <p className="muted">No questions yet.</p>}
      <ol className="question-list">
        {rows.map((r, i) => {
          const problems = errorsOf(r.name.trim());
          const choice = CHOICES.includes(r.type);
          return (
            <li key={r.key} className="question-row" aria-label={`Question ${i + 1}`}>
              <div className="grid-3">
                <Input
                  label="Field name"
                  value={r.name}
                  onChange={(e) => update(r.key, { name: e.target.value })}
                  placeholder="e.g. plan"
                  list="mapped-fields"
                  hint={
                    r.name.trim() && mapped.includes(r.name.trim())
                      ? 'Fills a contact property'
                      : 'Kept with the submission'
                  }
                />
                <Input
                  label="Label"
                  value={r.label}
                  onChange={(e) => update(r.key, { label: e.target.value })}
                  maxLength={500}
                  placeholder="What visitors read"
                />
                <Select
                  label="Type"
                  value={r.type}
                  onChange={(e) => update(r.key, { type: e.target.value as FieldType })}
                  options={FIELD_TYPE_OPTIONS}
                />
              </div>
              <div className="grid-2">
                {choice ? (
                  <Textarea
                    label="Options"
                    value={r.options}
                    onChange={(e) => update(r.key, { options: e.target.value })}
                    rows={3}
                    hint={r.type === 'checkbox' ? 'One a line. Leave empty for a single yes/no box.' : 'One a line.'}
                  />
                ) : (
                  <Input
                    label="Placeholder"
                    value={r.placeholder}
                    onChange={(e) => update(r.key, { placeholder: e.target.value })}
                    maxLength={200}
                  />
                )}
                <div className="stack-sm question-side">
                  {r.type === 'select' && (
                    <Input
                      label="Placeholder"
                      value={r.placeholder}
                      onChange={(e) => update(r.key, { placeholder: e.target.value })}
                      maxLength={200}
                      placeholder="Choose…"
                    />
                  )}
                  <Checkbox
                    label="Required"
                    checked={r.required}
                    onChange={(e) => update(r.key, { required: e.target.checked })}
                  />
                  <div className="row">
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => move(i, -1)}
                      disabled={i === 0}
                      aria-label={`Move question ${i + 1} up`}
                    >
                      ↑
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => move(i, 1)}
                      disabled={i === rows.length - 1}
                      aria-label={`Move question ${i + 1} down`}
                    >
                      ↓
                    </Button>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => onChange(rows.filter((x) => x.key !== r.key))}
                      aria-label={`Remove question ${r.label || r.name || i + 1}`}
                    >
                      Remove
                    </Button>
                  </div>
                </div>
              </div>
              {problems.length > 0 && (
                <ul className="error small" role="alert">
                  {problems.map(([p, m]) => (
                    <li key={p}>
                      {p.replace(`/settings/fields/${r.name.trim()}`, '') || r.name}: {m}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ol>
      <datalist id="mapped-fields">
        {mapped.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      <div>
        <Button
          size="sm"
          onClick={() =>
            onChange([
              ...rows,
              { key: questionKey++, name: '', label: '', type: 'text', options: '', required: false, placeholder: '' },
            ])
          }
        >
          Add question
        </Button>
      </div>
    </fieldset>
  );
}
