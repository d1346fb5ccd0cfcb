/** What the server found checking the form's HTML against its field mapping. */
import { formatDateTime } from '../../lib/format';
import type { Form } from '../Forms/form';

type Validation = NonNullable<Form['htmlValidation']>;

export function ValidationPanel({ validation }: { validation: Validation | null | undefined }) {
  if (!validation)
    return (
      <div className="callout callout-info">
        The service renders the form from its fields. Deploy custom HTML to see its cross-validation here.
      </div>
    );
  return (
    <div className="stack-sm" aria-live="polite">
      <div className={`callout ${validation.valid ? 'callout-success' : 'callout-danger'}`}>
        <strong>
          {validation.valid ? 'The HTML matches the form’s fields.' : 'The HTML does not match the form’s fields.'}
        </strong>
        <div className="small">Checked {formatDateTime(validation.checkedAt)}</div>
      </div>
      {validation.errors.length > 0 && (
        <div>
          <h3>Errors (block publishing)</h3>
          <ul className="small">
            {validation.errors.map((e, i) => (
              <li key={i}>
                <code>{e.code}</code> on <code>{e.field}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {validation.warnings.length > 0 && (
        <div>
          <h3>Warnings</h3>
          <ul className="small">
            {validation.warnings.map((e, i) => (
              <li key={i}>
                <code>{e.code}</code> on <code>{e.field}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
