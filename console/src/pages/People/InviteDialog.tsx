/** An invitation by email, with the role it gives. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { userKeys } from '../../api/keys';
import { useCan, type Role } from '../../api/session';
import { Button, Dialog, ErrorSummary, Input, Select, useToast } from '../../components';
import { problemOf } from '../../lib/forms';
import { ROLES } from './Users';

export function InviteDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const qc = useQueryClient();
  const toast = useToast();
  const can = useCan();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const invite = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v1/invitations', { body: { email: email.trim(), role } })),
    onSuccess: (inv) => {
      void qc.invalidateQueries({ queryKey: userKeys.invitations() });
      toast.success(
        inv.emailSent === false
          ? `Invitation created, but no email could be sent to ${inv.email}.`
          : `Invitation sent to ${inv.email}.`,
      );
      setEmail('');
      onClose();
    },
  });
  const { fields, message, rest } = problemOf(invite.error, { '/email': 'Email', '/role': 'Role' });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    invite.mutate();
  };
  // Only a holder of `admin` (an owner) gives the owner role, as the API checks.
  const roles = can('admin') ? ROLES : ROLES.filter((r) => r.value !== 'owner');
  return (
    <Dialog
      open={open}
      title="Invite a person"
      onClose={onClose}
      busy={invite.isPending}
      footer={
        <>
          <Button onClick={onClose} disabled={invite.isPending}>
            Cancel
          </Button>
          <Button type="submit" form="invite" variant="primary" loading={invite.isPending} disabled={!email.trim()}>
            Send invitation
          </Button>
        </>
      }
    >
      <form id="invite" className="stack" onSubmit={submit} noValidate>
        <ErrorSummary message={message} errors={rest} />
        <Input
          label="Email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fields['/email']}
          hint="They get a link, valid 7 days, to choose their name and password."
          data-autofocus
        />
        <Select
          label="Role"
          value={role}
          onChange={(e) => setRole(e.target.value as Role)}
          options={roles}
          error={fields['/role']}
        />
      </form>
    </Dialog>
  );
}
