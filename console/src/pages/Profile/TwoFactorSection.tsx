/** The profile's two-factor sign-in: its state, setting it up, new recovery codes, turning it off. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import { Button, Dialog, ErrorSummary, Input, QueryState, StatusBadge, useToast } from '../../components';
import { formatDate } from '../../lib/format';
import { problemOf } from '../../lib/forms';
import { codeMessage, passwordMessage } from './messages';
import { RecoveryCodes, TwoFactorSetup } from './TwoFactorSetup';

type Action = 'off' | 'codes' | null;

export function TwoFactorSection() {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: userKeys.twoFactor(),
    queryFn: async () => unwrap(await api.GET('/v1/me/two-factor')),
  });
  const [setting, setSetting] = useState(false);
  const [action, setAction] = useState<Action>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: userKeys.twoFactor() });
  return (
    <section className="card stack" aria-labelledby="tfa-h">
      <div className="card-header">
        <h2 id="tfa-h">Two-factor sign-in</h2>
        {q.data && (
          <StatusBadge
            status="two-factor"
            tone={q.data.enabled ? 'success' : 'neutral'}
            label={q.data.enabled ? 'On' : 'Off'}
          />
        )}
      </div>
      <QueryState query={q}>
        {(s) =>
          setting ? (
            <TwoFactorSetup
              onCancel={() => setSetting(false)}
              onEnabled={refresh}
              onDone={() => {
                setSetting(false);
                refresh();
              }}
            />
          ) : s.enabled ? (
            <div className="stack">
              <p>
                Signing in asks for a code from your authenticator app after your password. On since{' '}
                {formatDate(s.enrolledAt)}.{' '}
                {s.recoveryCodesLeft === 1 ? '1 recovery code' : `${s.recoveryCodesLeft} recovery codes`} left.
              </p>
              {s.recoveryCodesLeft <= 3 && (
                <div className="callout callout-warning">
                  Few recovery codes are left: make new ones so that losing your phone does not lock you out.
                </div>
              )}
              {s.required && <p className="muted small">This workspace requires two-factor sign-in of everyone.</p>}
              <div className="row">
                <Button onClick={() => setAction('codes')}>New recovery codes</Button>
                <Button variant="danger" onClick={() => setAction('off')}>
                  Turn off
                </Button>
              </div>
            </div>
          ) : (
            <div className="stack">
              <p>
                Protect your account with a second step: after your password, signing in asks for a code from an
                authenticator app on your phone.
              </p>
              {s.required && <div className="callout callout-warning">This workspace requires two-factor sign-in.</div>}
              <Button variant="primary" onClick={() => setSetting(true)}>
                Set up two-factor sign-in
              </Button>
            </div>
          )
        }
      </QueryState>
      <CheckDialog
        action={action}
        required={q.data?.required ?? false}
        onClose={() => setAction(null)}
        onDone={refresh}
      />
    </section>
  );
}

/** Turning off or new recovery codes: the current password and a code. */
function CheckDialog({
  action,
  required,
  onClose,
  onDone,
}: {
  action: Action;
  required: boolean;
  onClose: () => void;
  onDone: () => void;
}) {
  const toast = useToast();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const run = useMutation({
    mutationFn: async () => {
      const body = { currentPassword: password, code: code.trim() };
      if (action === 'off') {
        unwrap(await api.POST('/v1/me/two-factor/disable', { body }));
        return null;
      }
      return unwrap(await api.POST('/v1/me/two-factor/recovery-codes', { body })).recoveryCodes;
    },
    onSuccess: (codes) => {
      setPassword('');
      setCode('');
      onDone();
      if (!codes) {
        toast.success('Two-factor sign-in is off.');
        close();
      }
    },
  });
  const close = () => {
    run.reset();
    setPassword('');
    setCode('');
    onClose();
  };
  const { fields, message } = problemOf(run.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate();
  };
  const formId = 'tfa-check-form';
  if (run.data)
    return (
      <Dialog open={action !== null} title="New recovery codes" onClose={close}>
        <RecoveryCodes codes={run.data} onDone={close} />
      </Dialog>
    );
  return (
    <Dialog
      open={action !== null}
      title={action === 'off' ? 'Turn off two-factor sign-in' : 'New recovery codes'}
      onClose={close}
      busy={run.isPending}
      footer={
        <>
          <Button onClick={close} disabled={run.isPending}>
            Cancel
          </Button>
          <Button
            type="submit"
            form={formId}
            variant={action === 'off' ? 'danger' : 'primary'}
            loading={run.isPending}
            disabled={!password || !code.trim()}
          >
            {action === 'off' ? 'Turn off' : 'Make new codes'}
          </Button>
        </>
      }
    >
      <form id={formId} className="stack" onSubmit={submit} noValidate>
        <p>
          {action === 'off'
            ? required
              ? 'This workspace requires two-factor sign-in: after turning it off you will be asked to set it up again before you can go on.'
              : 'Signing in will ask for your password only.'
            : 'Your current recovery codes stop working, and new ones are shown once.'}
        </p>
        <ErrorSummary message={run.isError && !fields['/currentPassword'] && !fields['/code'] ? message : null} />
        <Input
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={passwordMessage(fields['/currentPassword'])}
        />
        <Input
          label={action === 'off' ? 'Code from your app, or a recovery code' : 'Code from your app'}
          autoComplete="one-time-code"
          maxLength={40}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={codeMessage(fields['/code'])}
        />
      </form>
    </Dialog>
  );
}
