/**
 * The signed-in person: GET /v1/session once at start. 401 sends the browser to /app/login?next=…;
 * the scopes decide what the UI enables (`admin` grants everything, `write:X` implies `read:X`).
 */
import { createContext, useContext, type ReactNode } from 'react';
import { ApiError, devKey, request } from './client';

export type Role = 'viewer' | 'editor' | 'admin' | 'owner';

export interface Session {
  user: { id: string; email: string; name: string | null; role: Role; createdAt: string; lastLoginAt: string | null };
  workspace: { id: string; name: string };
  scopes: string[];
  csrfToken: string;
  expiresAt: string;
}

export async function loadSession(): Promise<Session> {
  try {
    return await request<Session>('GET', '/v1/session');
  } catch (err) {
    // Local development before the sign-in backend (npm run dev with an API key in localStorage).
    if (err instanceof ApiError && err.status === 404 && devKey()) {
      const ws = await request<{ id: string; name: string }>('GET', '/v1/workspace');
      return {
        user: { id: 'dev', email: 'dev@localhost', name: 'Developer (API key)', role: 'owner', createdAt: new Date().toISOString(), lastLoginAt: null },
        workspace: { id: ws.id, name: ws.name },
        scopes: ['admin', 'manage:keys', 'manage:people', 'manage:workspace'],
        csrfToken: '',
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      };
    }
    throw err;
  }
}

/** Whether the scopes grant `scope`. */
export function hasScope(scopes: readonly string[], scope: string): boolean {
  if (scopes.includes('admin') || scopes.includes(scope)) return true;
  if (scope.startsWith('read:')) return scopes.includes(`write:${scope.slice(5)}`);
  return false;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

export function useCan(): (scope: string) => boolean {
  const s = useSession();
  return (scope) => hasScope(s.scopes, scope);
}
