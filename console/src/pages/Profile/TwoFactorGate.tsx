/**
 * What a person sees after signing in to a workspace that requires two-factor sign-in while they have not set it
 * up: the set-up and nothing else (the API answers nothing else either), then the console.
 */
import { useSession } from '../../api/session';
import { TwoFactorSetup } from './TwoFactorSetup';

export function TwoFactorGate() {
  const session = useSession();
  return (
    <main id="main" className="gate">
      <div className="gate-head">
        <div className="sidebar-brand">
          <span className="brand-mark" aria-hidden="true">
            F
          </span>
          Formcast
        </div>
        <form method="post" action="/app/logout">
          <input type="hidden" name="_csrf" value={session.csrfToken} />
          <button type="submit" className="btn btn-ghost">
            Sign out
          </button>
        </form>
      </div>
      <section className="card stack" aria-labelledby="gate-h">
        <h1 id="gate-h">Set up two-factor sign-in</h1>
        <p>
          {session.workspace.name} requires two-factor sign-in of everyone. Set it up for {session.user.email} to go on
          to the console.
        </p>
        <TwoFactorSetup onDone={() => location.assign('/app')} />
      </section>
    </main>
  );
}
