/** Your profile: your name and sign-in address, your password, two-factor sign-in, and your sessions. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import { useSession, useUpdateSessionUser } from '../../api/session';
import { Button, ErrorSummary, Input, PageHeader, useToast } from '../../components';
import { problemOf } from '../../lib/forms';
import { MySessions } from '../People/MySessions';
import { fieldMessage, passwordMessage } from './messages';
import { TwoFactorSection } from './TwoFactorSection';
import '../../styles/account.css';

const PASSWORD_MIN = 10;

function Details() {
  const session = useSession();
  const updateUser = useUpdateSessionUser();
  const toast = useToast();
  const [name, setName] = useState(session.user.name ?? '');
  const [email, setEmail] = useState(session.user.email);
  const [password, setPassword] = useState('');
  const emailChanging = email.trim().toLowerCase() !== session.user.email;
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/v1/me', {
          body: {
            name: name.trim() || null,
            ...(emailChanging ? { email: email.trim(), currentPassword: password } : {}),
          },
        }),
      ),
    onSuccess: (u) => {
      updateUser({ name: u.name, email: u.email });
      setEmail(u.email);
      setPassword('');
      toast.success(u.emailChanged ? `Saved. You now sign in with ${u.email}.` : 'Saved.');
    },
  });
  const { fields, message } = problemOf(save.error);
  const conflict = save.error && 'code' in save.error && save.error.code === 'user_exists';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-labelledby="details-h">
      <h2 id="details-h">Your details</h2>
      <ErrorSummary
        message={
          save.isError && !conflict && !fields['/currentPassword'] && !fields['/email'] && !fields['/name']
            ? message
            : null
        }
      />
      <Input
        label="Name"
        autoComplete="name"
        maxLength={200}
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={fieldMessage('name', fields['/name'])}
      />
      <Input
        label="Email"
        type="email"
        autoComplete="email"
        hint="The address you sign in with. It changes at once; your old address gets a notice."
        value={email}
        onChange={(e) => setEmail(e.target.value)}
        error={
          conflict
            ? 'Another person of this workspace already signs in with this address.'
            : fieldMessage('email', fields['/email'])
        }
        required
      />
      {emailChanging && (
        <Input
          label="Current password"
          hint="Needed to change your email."
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={passwordMessage(fields['/currentPassword'])}
          required
        />
      )}
      <div className="form-actions">
        <Button type="submit" variant="primary" loading={save.isPending} disabled={emailChanging && !password}>
          Save
        </Button>
      </div>
    </form>
  );
}

function PasswordForm() {
  const toast = useToast();
  const qc = useQueryClient();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [shown, setShown] = useState(false);
  const tooShort = [...next].length < PASSWORD_MIN;
  const mismatch = again !== '' && again !== next;
  const change = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/v1/me/password', { body: { currentPassword: current, newPassword: next } })),
    onSuccess: (r) => {
      setCurrent('');
      setNext('');
      setAgain('');
      setShown(false);
      void qc.invalidateQueries({ queryKey: userKeys.sessions() });
      toast.success(
        r.sessionsEnded === 0
          ? 'Password changed.'
          : `Password changed. ${r.sessionsEnded === 1 ? 'Your other session was' : `Your ${r.sessionsEnded} other sessions were`} signed out.`,
      );
    },
  });
  const { fields, message } = problemOf(change.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setShown(true);
    if (tooShort || mismatch || !current || again !== next) return;
    change.mutate();
  };
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-labelledby="password-h">
      <h2 id="password-h">Password</h2>
      <p className="muted">Changing it signs you out everywhere else; this browser stays signed in.</p>
      <ErrorSummary
        message={change.isError && !fields['/currentPassword'] && !fields['/newPassword'] ? message : null}
      />
      <Input
        label="Current password"
        type="password"
        autoComplete="current-password"
        value={current}
        onChange={(e) => setCurrent(e.target.value)}
        error={
          passwordMessage(fields['/currentPassword']) ?? (shown && !current ? 'Enter your current password.' : null)
        }
        required
      />
      <Input
        label="New password"
        hint={`At least ${PASSWORD_MIN} characters.`}
        type="password"
        autoComplete="new-password"
        value={next}
        onChange={(e) => setNext(e.target.value)}
        error={
          fieldMessage('new password', fields['/newPassword']) ??
          (shown && tooShort ? `The new password must be at least ${PASSWORD_MIN} characters.` : null)
        }
        required
      />
      <Input
        label="New password again"
        type="password"
        autoComplete="new-password"
        value={again}
        onChange={(e) => setAgain(e.target.value)}
        error={shown && (mismatch || (again === '' && next !== '')) ? 'The two new passwords are not the same.' : null}
        required
      />
      <div className="form-actions">
        <Button type="submit" variant="primary" loading={change.isPending}>
          Change password
        </Button>
      </div>
    </form>
  );
}

export default function Profile() {
  return (
    <>
      <PageHeader title="Your profile" description="Your name, sign-in address, password and two-factor sign-in." />
      <div className="profile-grid">
        <Details />
        <PasswordForm />
        <TwoFactorSection />
        <MySessions />
      </div>
    </>
  );
}
