import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiError, setCsrfToken } from './api/client';
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

// Asked for at once, while React mounts.
const sessionRequest = loadSession();
// Handled in Boot; this keeps a refusal (signed out) from counting as unhandled before Boot mounts.
sessionRequest.catch(() => undefined);

function Boot() {
  const [state, setState] = useState<{ session?: Session; error?: unknown }>({});
  useEffect(() => {
    sessionRequest.then(
      (session) => {
        setCsrfToken(session.csrfToken);
        setState({ session });
      },
      (error) => setState({ error }),
    );
  }, []);
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
    <SessionProvider session={state.session}>
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
