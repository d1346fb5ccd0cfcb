/** A new API key and its scopes; the key is shown once. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { apiKeyKeys } from '../../api/keys';
import type { paths } from '../../api/generated/schema';
import { useCan } from '../../api/session';
import { Button, Checkbox, CopyField, Dialog, ErrorSummary, Input, notAllowedText } from '../../components';
import { problemOf } from '../../lib/forms';

type Scope = NonNullable<paths['/v1/api-keys']['post']['requestBody']>['content']['application/json']['scopes'][number];
type Created = paths['/v1/api-keys']['post']['responses'][201]['content']['application/json'];

const AREAS = ['forms', 'contacts', 'broadcasts', 'domains', 'webhooks'] as const;

export function CreateKeyDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const can = useCan();
  const [name, setName] = useState('');
  // Nothing is ticked to begin with: a key gets exactly what its creator chose.
  const [scopes, setScopes] = useState<Set<Scope>>(new Set());
  const [created, setCreated] = useState<Created | null>(null);
  const create = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/v1/api-keys', { body: { name: name.trim(), scopes: [...scopes] } })),
    onSuccess: (key) => {
      setCreated(key);
      void qc.invalidateQueries({ queryKey: apiKeyKeys.list() });
    },
  });
  const close = () => {
    setName('');
    setScopes(new Set());
    setCreated(null);
    create.reset();
    onClose();
  };
  const toggle = (s: Scope, on: boolean) =>
    setScopes((prev) => {
      // Admin grants everything: ticked, it replaces the other scopes (a key "read:forms, admin" says less than it can).
      if (s === 'admin') return new Set(on ? ['admin'] : []);
      const next = new Set(prev);
      if (on) next.add(s);
      else next.delete(s);
      return next;
    });
  const admin = scopes.has('admin');
  const { fields, message, rest } = problemOf(create.error, { '/name': 'Name', '/scopes': 'Permissions' });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };

  if (created) {
    return (
      <Dialog
        open={open}
        title="Your new API key"
        onClose={close}
        footer={
          <Button variant="primary" onClick={close} data-autofocus>
            Done
          </Button>
        }
      >
        <div className="stack-sm">
          <div className="secret-box stack-sm">
            <strong>Copy this key now: it is shown only once.</strong>
            <CopyField value={created.key ?? ''} what="API key" />
          </div>
          <p className="muted small">
            “{created.name}” can: {created.scopes.join(', ')}. Send it as <code>Authorization: Bearer …</code>.
          </p>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog
      open={open}
      title="Create an API key"
      onClose={close}
      busy={create.isPending}
      footer={
        <>
          <Button onClick={close} disabled={create.isPending}>
            Cancel
          </Button>
          <Button
            variant="primary"
            type="submit"
            form="create-key"
            loading={create.isPending}
            disabled={scopes.size === 0 || !name.trim()}
          >
            Create key
          </Button>
        </>
      }
    >
      <form id="create-key" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Name"
          hint="Who or what uses it, e.g. “Website sign-up”."
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
          error={fields['/name']}
          data-autofocus
        />
        <fieldset>
          <legend>Permissions</legend>
          <div className="stack-sm">
            <Checkbox
              label="Admin (everything, including keys and workspace settings)"
              checked={admin}
              onChange={(e) => toggle('admin', e.target.checked)}
              hint={
                admin
                  ? 'Admin already includes every permission below: they are cleared and cannot be ticked with it.'
                  : undefined
              }
            />
            {AREAS.map((a) => (
              <div key={a} className="row">
                <span className="cell-main" style={{ minWidth: '7rem' }}>
                  {a[0]!.toUpperCase() + a.slice(1)}
                </span>
                <Checkbox
                  label="Read"
                  checked={scopes.has(`read:${a}` as Scope)}
                  onChange={(e) => toggle(`read:${a}` as Scope, e.target.checked)}
                  disabled={admin}
                  aria-label={`Read ${a}`}
                />
                <Checkbox
                  label="Write"
                  checked={scopes.has(`write:${a}` as Scope)}
                  onChange={(e) => toggle(`write:${a}` as Scope, e.target.checked)}
                  disabled={admin}
                  aria-label={`Write ${a}`}
                />
              </div>
            ))}
            <Checkbox
              label="Send transactional email"
              checked={scopes.has('send:emails')}
              onChange={(e) => toggle('send:emails', e.target.checked)}
              disabled={admin || !can('send:emails')}
              hint={
                can('send:emails')
                  ? 'Receipts, password resets and other messages of one application, through the API or SMTP; it also reads what was sent.'
                  : notAllowedText('send:emails', 'give a key the right to send transactional email')
              }
            />
            {fields['/scopes'] ? (
              <p className="error">{fields['/scopes']}</p>
            ) : (
              scopes.size === 0 && (
                <p className="muted small">Tick what the key may do: a key needs at least one permission.</p>
              )
            )}
          </div>
        </fieldset>
      </form>
    </Dialog>
  );
}
