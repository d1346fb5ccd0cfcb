import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiError, setCsrfToken } from './api/client';
import { sessionKeys } from './api/keys';
import { describeError } from './lib/problems';
import { loadSession, SessionProvider, type Session } from './api/session';
import { Spinner } from './components/States';
import { ToastProvider } from './components/Toast';
import { router } from './router';
import './styles/app.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      refetchOnWindowFocus: false,
      // A 4xx will not get better by asking again.
      retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2,
    },
  },
});

// Asked for at once, while React mounts; the session query's first answer.
let sessionRequest: Promise<Session> | null = loadSession();
// Handled in Boot; this keeps a refusal (signed out) from counting as unhandled before Boot mounts.
sessionRequest.catch(() => undefined);

/**
 * The session is a query (sessionKeys.current): what changes it (renaming the workspace in Settings) invalidates it,
 * and the sidebar and top bar show the new name at once. A refetch that fails keeps the session shown.
 */
function Boot() {
  const query = useQuery({
    queryKey: sessionKeys.current(),
    queryFn: () => {
      const first = sessionRequest;
      sessionRequest = null;
      return first ?? loadSession();
    },
    staleTime: Infinity,
    retry: false,
  });
  const session = query.data;
  // Before the pages render: their writes carry the session's CSRF token.
  if (session) setCsrfToken(session.csrfToken);
  const state = { session, error: session ? undefined : query.error };
  if (state.error) {
    const signedOut = state.error instanceof ApiError && state.error.status === 401;
    return (
      <main className="full-center" id="main">
        <div className="card stack-sm" role={signedOut ? 'status' : 'alert'}>
          <h1>{signedOut ? 'Signing in…' : 'The console could not start'}</h1>
          <p className="muted">{signedOut ? 'Taking you to the sign-in page.' : describeError(state.error)}</p>
          {!signedOut && (
            <p>
              <a href="/app/login">Go to the sign-in page</a>
            </p>
          )}
        </div>
      </main>
    );
  }
  if (!state.session)
    return (
      <main className="full-center" id="main">
        <Spinner label="Loading the console…" />
      </main>
    );
  return (
    <SessionProvider
      session={state.session}
      onUserChange={(user) =>
        queryClient.setQueryData<Session>(sessionKeys.current(), (s) =>
          s ? { ...s, user: { ...s.user, ...user } } : s,
        )
      }
    >
      <RouterProvider router={router} />
    </SessionProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <Boot />
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
);
