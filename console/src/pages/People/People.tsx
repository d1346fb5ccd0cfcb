/** People: the workspace's users and their roles, invitations, and the signed-in user's own sessions. */
import { useState } from 'react';
import { useCan } from '../../api/session';
import { Button, PageHeader } from '../../components';
import { Users } from './Users';
import { InviteDialog } from './InviteDialog';
import { Invitations } from './Invitations';
import { MySessions } from './MySessions';

export default function People() {
  const can = useCan();
  const [inviting, setInviting] = useState(false);
  return (
    <>
      <PageHeader
        title="People"
        description="Who can sign in to this workspace, with what role."
        actions={
          can('manage:people') && (
            <Button variant="primary" onClick={() => setInviting(true)}>
              Invite a person
            </Button>
          )
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
