/** People: the workspace's users and their roles, invitations, and the signed-in user's own sessions. */
import { useState } from 'react';
import { useCan } from '../../api/session';
import { Button, NotAllowed, PageHeader } from '../../components';
import { Users } from './Users';
import { InviteDialog } from './InviteDialog';
import { Invitations } from './Invitations';
import { MySessions } from './MySessions';

export default function People() {
  const can = useCan();
  const [inviting, setInviting] = useState(false);
  if (!can('manage:people'))
    // Reached from the account menu ("Your sessions") or by its address: the person's own sessions only.
    return (
      <>
        <PageHeader title="People" description="The browsers you are signed in on, each signed out here." />
        <div className="stack">
          <NotAllowed action="manage:people" />
          <MySessions />
        </div>
      </>
    );
  return (
    <>
      <PageHeader
        title="People"
        description="Who can sign in to this workspace, with what role."
        actions={
          <Button variant="primary" onClick={() => setInviting(true)}>
            Invite a person
          </Button>
        }
      />
      <div className="stack">
        <Users />
        <Invitations onInvite={() => setInviting(true)} />
        <MySessions />
      </div>
      <InviteDialog open={inviting} onClose={() => setInviting(false)} />
    </>
  );
}
