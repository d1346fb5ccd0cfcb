/** A contact's fields and properties, edited in place. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { contactKeys } from '../../api/keys';
import { Button, ErrorSummary, Input, Select, useToast } from '../../components';
import { CONTACT_STATUSES, statusLabel, type Contact, type ContactStatus } from '../../lib/audience';
import { nullable, problemOf } from '../../lib/forms';
import { timeZoneOptions } from '../../lib/zones';

type PropType = 'text' | 'number' | 'boolean';
interface PropRow {
  key: number;
  name: string;
  type: PropType;
  value: string;
}
let nextRow = 1;

function toRows(props: Record<string, unknown>): PropRow[] {
  return Object.entries(props).map(([name, v]) => ({
    key: nextRow++,
    name,
    type: typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'text',
    value: v === null || v === undefined ? '' : String(v),
  }));
}

function fromRows(rows: PropRow[]): {
  properties: Record<string, string | number | boolean>;
  errors: Record<number, string>;
} {
  const properties: Record<string, string | number | boolean> = {};
  const errors: Record<number, string> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (!name && !r.value) continue;
    if (!/^[a-zA-Z][a-zA-Z0-9_]{0,63}$/.test(name)) {
      errors[r.key] = 'A key starts with a letter, then letters, digits or _ (up to 64).';
      continue;
    }
    if (name in properties) {
      errors[r.key] = 'This key is listed twice.';
      continue;
    }
    if (r.type === 'number') {
      const n = Number(r.value);
      if (r.value.trim() === '' || !Number.isFinite(n)) {
        errors[r.key] = 'Enter a number.';
        continue;
      }
      properties[name] = n;
    } else if (r.type === 'boolean') properties[name] = r.value === 'true';
    else properties[name] = r.value;
  }
  return { properties, errors };
}

export function FieldsCard({ contact, editable }: { contact: Contact; editable: boolean }) {
  const qc = useQueryClient();
  const toast = useToast();
  const [email, setEmail] = useState(contact.email);
  const [firstName, setFirstName] = useState(contact.firstName ?? '');
  const [lastName, setLastName] = useState(contact.lastName ?? '');
  const [status, setStatus] = useState<ContactStatus>(contact.status);
  const [timezone, setTimezone] = useState(contact.timezone ?? '');
  const [rows, setRows] = useState<PropRow[]>(() => toRows(contact.properties));
  const [rowErrors, setRowErrors] = useState<Record<number, string>>({});

  const save = useMutation({
    mutationFn: async (properties: Record<string, string | number | boolean>) =>
      unwrap(
        await api.PUT('/v1/contacts/{contactId}', {
          params: { path: { contactId: contact.id } },
          body: {
            email: email.trim(),
            firstName: nullable(firstName),
            lastName: nullable(lastName),
            status,
            timezone: nullable(timezone),
            properties,
          },
        }),
      ),
    onSuccess: (c) => {
      qc.setQueryData(contactKeys.detail(contact.id), c);
      void qc.invalidateQueries({ queryKey: contactKeys.lists() });
      void qc.invalidateQueries({ queryKey: contactKeys.activity(contact.id) });
      setStatus(c.status);
      setEmail(c.email);
      toast.success(
        c.suppressed && status === 'SUBSCRIBED' && c.status !== 'SUBSCRIBED'
          ? 'Saved; the address is suppressed, so the status was kept.'
          : 'Contact saved.',
      );
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const { properties, errors } = fromRows(rows);
    setRowErrors(errors);
    if (Object.keys(errors).length) return;
    save.mutate(properties);
  };
  const { fields, message, rest } = problemOf(save.error, {
    '/email': 'Email',
    '/firstName': 'First name',
    '/lastName': 'Last name',
    '/status': 'Status',
    '/timezone': 'Time zone',
    '/properties/*': 'Property',
  });
  const update = (key: number, patch: Partial<PropRow>) =>
    setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const propError = (name: string) => Object.entries(fields).find(([p]) => p === `/properties/${name}`)?.[1];

  return (
    <section className="card" aria-labelledby="fields-h">
      <h2 id="fields-h">Details</h2>
      <form className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fields['/email']}
          disabled={!editable}
          required
        />
        <div className="grid-2">
          <Input
            label="First name"
            value={firstName}
            onChange={(e) => setFirstName(e.target.value)}
            error={fields['/firstName']}
            disabled={!editable}
            maxLength={200}
          />
          <Input
            label="Last name"
            value={lastName}
            onChange={(e) => setLastName(e.target.value)}
            error={fields['/lastName']}
            disabled={!editable}
            maxLength={200}
          />
        </div>
        <Select
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value as ContactStatus)}
          disabled={!editable}
          error={fields['/status']}
          options={CONTACT_STATUSES.map((s) => ({ value: s, label: statusLabel(s) }))}
          hint={
            contact.suppressed ? (
              <span className="suppressed-note">
                This address is on the suppression list: it gets no broadcast whatever its status, and setting it to
                Subscribed keeps it suppressed. Only removing it from the{' '}
                <Link to={`/suppressions?q=${encodeURIComponent(contact.email)}`}>suppression list</Link> (or the
                contact confirming a sign-up) lifts that.
              </span>
            ) : (
              'Only Subscribed contacts get broadcasts.'
            )
          }
        />
        <Select
          label="Time zone"
          value={timezone}
          onChange={(e) => setTimezone(e.target.value)}
          disabled={!editable}
          error={fields['/timezone']}
          options={timeZoneOptions(timezone, "The workspace's time zone")}
          hint="Broadcasts sent at local time reach this contact at the chosen hour in this zone."
        />
        <fieldset>
          <legend>Properties</legend>
          <div className="stack-sm">
            {rows.length === 0 && (
              <p className="muted small">No properties. Forms and imports add them; you can add your own.</p>
            )}
            {rows.map((r, i) => (
              <div className="prop-row" key={r.key}>
                <Input
                  label="Key"
                  value={r.name}
                  onChange={(e) => update(r.key, { name: e.target.value })}
                  disabled={!editable}
                  error={rowErrors[r.key] ?? propError(r.name)}
                  id={`prop-key-${r.key}`}
                  aria-label={`Property ${i + 1} key`}
                />
                <Select
                  label="Type"
                  value={r.type}
                  onChange={(e) =>
                    update(r.key, {
                      type: e.target.value as PropType,
                      value: e.target.value === 'boolean' ? 'true' : r.value,
                    })
                  }
                  disabled={!editable}
                  aria-label={`Property ${i + 1} type`}
                  options={[
                    { value: 'text', label: 'Text' },
                    { value: 'number', label: 'Number' },
                    { value: 'boolean', label: 'Yes/no' },
                  ]}
                />
                {r.type === 'boolean' ? (
                  <Select
                    label="Value"
                    value={r.value}
                    onChange={(e) => update(r.key, { value: e.target.value })}
                    disabled={!editable}
                    aria-label={`Property ${i + 1} value`}
                    options={[
                      { value: 'true', label: 'Yes (true)' },
                      { value: 'false', label: 'No (false)' },
                    ]}
                  />
                ) : (
                  <Input
                    label="Value"
                    value={r.value}
                    inputMode={r.type === 'number' ? 'decimal' : undefined}
                    onChange={(e) => update(r.key, { value: e.target.value })}
                    disabled={!editable}
                    aria-label={`Property ${i + 1} value`}
                  />
                )}
                {editable && (
                  <Button
                    variant="ghost"
                    className="prop-remove"
                    onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))}
                    aria-label={`Remove property ${r.name || i + 1}`}
                  >
                    Remove
                  </Button>
                )}
              </div>
            ))}
            {editable && (
              <div>
                <Button
                  size="sm"
                  onClick={() => setRows((rs) => [...rs, { key: nextRow++, name: '', type: 'text', value: '' }])}
                >
                  Add property
                </Button>
              </div>
            )}
          </div>
        </fieldset>
        {editable && (
          <div className="form-actions">
            <Button type="submit" variant="primary" loading={save.isPending}>
              Save contact
            </Button>
          </div>
        )}
      </form>
    </section>
  );
}
