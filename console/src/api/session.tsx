/**
 * The signed-in person: GET /v1/session once at start. 401 sends the browser to /app/login?next=…;
 * `grants`, every scope the session's role grants by the API's own rule, decide what the UI enables.
 */
import { createContext, useContext, type ReactNode } from 'react';
import { api, unwrap } from './client';
import { can as roleCan, rolesThatCan, type Action, type Role as AnyRole } from '../lib/roles';
import type { paths } from './generated/schema';

type SessionInfo = paths['/v1/session']['get']['responses'][200]['content']['application/json'];

/** A scope the API checks (or one only a console session holds, such as `manage:people`). */
export type Scope = SessionInfo['grants'][number];
export type Role = NonNullable<SessionInfo['role']>;

/** A console session: a signed-in person's (GET /v1/session answers an API key with these fields null). */
export type Session = SessionInfo & { user: NonNullable<SessionInfo['user']>; csrfToken: string; expiresAt: string };

export async function loadSession(): Promise<Session> {
  const s = unwrap(await api.GET('/v1/session'));
  const { user, csrfToken, expiresAt } = s;
  if (!user || csrfToken === null || expiresAt === null)
    throw new Error('The console works with a signed-in session only.');
  return { ...s, user, csrfToken, expiresAt };
}

const SessionContext = createContext<Session | null>(null);
const UpdateContext = createContext<(user: Partial<Session['user']>) => void>(() => {});

export function SessionProvider({
  session,
  onUserChange,
  children,
}: {
  session: Session;
  /** The signed-in person changed their name or email (the profile page): the shell shows the new ones. */
  onUserChange?: (user: Partial<Session['user']>) => void;
  children: ReactNode;
}) {
  return (
    <SessionContext.Provider value={session}>
      <UpdateContext.Provider value={onUserChange ?? (() => {})}>{children}</UpdateContext.Provider>
    </SessionContext.Provider>
  );
}

/** Tells the shell that the signed-in person's name or email changed. */
export function useUpdateSessionUser(): (user: Partial<Session['user']>) => void {
  return useContext(UpdateContext);
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

// The session's roles and scopes are the ones lib/roles.ts knows (a compile error here when the API gains one).
const sameRoles: [Role] extends [AnyRole] ? ([AnyRole] extends [Role] ? true : never) : never = true;
const sameActions: [Scope] extends [Action] ? true : never = true;
void sameRoles;
void sameActions;

/** Whether the signed-in person's role allows `action` (lib/roles.ts `can`; the API answers 403 otherwise). */
export function useCan(): (action: Action) => boolean {
  const s = useSession();
  return (action) => roleCan(s.role, action);
}

export type Manager = Session['managers'][number];

/** Whom to ask for `action`: the workspace's owners and admins who may do it (owners first), at most three. */
export function useAskWhom(action: Action): Manager[] {
  const s = useSession();
  const roles = rolesThatCan(action);
  return s.managers.filter((m) => roles.includes(m.role) && m.email !== s.user.email).slice(0, 3);
}
