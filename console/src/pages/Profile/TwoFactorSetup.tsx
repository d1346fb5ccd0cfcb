/**
 * Setting up two-factor sign-in: the current password, then the QR code (and the secret, for apps that cannot scan)
 * and a first code, then the recovery codes, shown this once. Used by the profile page and by the set-up a workspace
 * that requires it shows after sign-in.
 */
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { Button, CopyButton, CopyField, ErrorSummary, Input } from '../../components';
import { problemOf } from '../../lib/forms';
import { codeMessage, passwordMessage } from './messages';
import '../../styles/account.css';

export function TwoFactorSetup({
  onDone,
  onCancel,
  onEnabled,
}: {
  /** The recovery codes were seen: the set-up is over. */
  onDone: () => void;
  onCancel?: () => void;
  /** Two-factor sign-in is on (the recovery codes are shown now). */
  onEnabled?: () => void;
}) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const start = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/me/two-factor/setup', { body: { currentPassword: password } })),
    onSuccess: () => setPassword(''),
  });
  const confirm = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/me/two-factor/confirm', { body: { code: code.trim() } })),
    onSuccess: () => onEnabled?.(),
  });

  if (confirm.data) return <RecoveryCodes codes={confirm.data.recoveryCodes} onDone={onDone} />;

  if (!start.data) {
    const { fields, message } = problemOf(start.error);
    const submit = (e: FormEvent) => {
      e.preventDefault();
      start.mutate();
    };
    return (
      <form className="stack" onSubmit={submit} noValidate>
        <p>
          You will need an authenticator app on your phone, such as Google Authenticator, Microsoft Authenticator,
          1Password or Aegis. First, confirm it is you.
        </p>
        <ErrorSummary message={start.isError && !fields['/currentPassword'] ? message : null} />
        <Input
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={passwordMessage(fields['/currentPassword'])}
          required
        />
        <div className="form-actions">
          {onCancel && <Button onClick={onCancel}>Cancel</Button>}
          <Button type="submit" variant="primary" loading={start.isPending} disabled={!password}>
            Continue
          </Button>
        </div>
      </form>
    );
  }

  const { fields, message } = problemOf(confirm.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    confirm.mutate();
  };
  const grouped = start.data.secret.replace(/(.{4})/g, '$1 ').trim();
  return (
    <form className="stack" onSubmit={submit} noValidate>
      <div className="qr-setup">
        <img className="qr-code" src={start.data.qrCode} alt="QR code to scan with your authenticator app" />
        <div className="stack-sm">
          <p>
            <strong>1.</strong> Scan the QR code with your authenticator app.
          </p>
          <p className="muted small">Cannot scan it? Add an account by hand in the app with this key (time-based):</p>
          <CopyField value={grouped} what="the set-up key" />
          <p>
            <strong>2.</strong> Enter the 6-digit code the app now shows for Formcast.
          </p>
        </div>
      </div>
      <ErrorSummary message={confirm.isError && !fields['/code'] ? message : null} />
      <Input
        label="Code from the app"
        inputMode="numeric"
        autoComplete="one-time-code"
        maxLength={12}
        value={code}
        onChange={(e) => setCode(e.target.value)}
        error={codeMessage(fields['/code'])}
        required
      />
      <div className="form-actions">
        {onCancel && <Button onClick={onCancel}>Cancel</Button>}
        <Button type="submit" variant="primary" loading={confirm.isPending} disabled={!code.trim()}>
          Turn on two-factor sign-in
        </Button>
      </div>
    </form>
  );
}

/** Recovery codes, shown once: copy or download them before going on. */
export function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = `Formcast recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'formcast-recovery-codes.txt';
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div className="stack">
      <div className="callout callout-success" role="status">
        Two-factor sign-in is on.
      </div>
      <p>
        Keep these recovery codes somewhere safe, such as a password manager. Each one signs you in once if you lose
        your phone. <strong>They are shown only now.</strong>
      </p>
      <ul className="recovery-codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <div className="row">
        <CopyButton text={codes.join('\n')} label="Copy" what="the recovery codes" />
        <Button size="sm" onClick={download}>
          Download
        </Button>
      </div>
      <div className="form-actions">
        <Button variant="primary" onClick={onDone}>
          I have saved my codes
        </Button>
      </div>
    </div>
  );
}
