/**
 * The console's pages under /app, each in a chunk of its own (the form editor with CodeMirror, charts with uPlot
 * load with the pages that use them). Routes are `lazy` for the router, not React.lazy: the router fetches a
 * page's chunk before it renders it (from the start, in parallel with the session), so no Suspense fallback is
 * shown and React's 300 ms reveal throttle never delays a page.
 */
import type { ComponentType } from 'react';
import { createBrowserRouter } from 'react-router';
import { Spinner } from './components/States';
import { Layout } from './Layout';
import { NotFound } from './pages/Placeholder';

/** A route's `lazy`: the page module's default export as the route's component. */
const page = (load: () => Promise<{ default: ComponentType }>) => async () => ({ Component: (await load()).default });

export const router = createBrowserRouter(
  [
    {
      path: '/',
      element: <Layout />,
      HydrateFallback: () => (
        <main className="full-center" id="main">
          <Spinner label="Loading the console…" />
        </main>
      ),
      children: [
        { index: true, lazy: page(() => import('./pages/Dashboard/Dashboard')) },
        { path: 'forms', lazy: page(() => import('./pages/Forms/Forms')) },
        { path: 'forms/:formId', lazy: page(() => import('./pages/FormEditor/FormEditor')) },
        { path: 'contacts', lazy: page(() => import('./pages/Contacts/Contacts')) },
        { path: 'contacts/:contactId', lazy: page(() => import('./pages/ContactDetail/ContactDetail')) },
        { path: 'segments', lazy: page(() => import('./pages/Segments')) },
        { path: 'segments/:segmentId', lazy: page(() => import('./pages/SegmentEditor/SegmentEditor')) },
        { path: 'topics', lazy: page(() => import('./pages/Topics/Topics')) },
        { path: 'suppressions', lazy: page(() => import('./pages/Suppressions/Suppressions')) },
        { path: 'broadcasts', lazy: page(() => import('./pages/Broadcasts/Broadcasts')) },
        { path: 'broadcasts/:broadcastId', lazy: page(() => import('./pages/BroadcastDetail/BroadcastDetail')) },
        { path: 'automations', lazy: page(() => import('./pages/Automations/Automations')) },
        { path: 'automations/:automationId', lazy: page(() => import('./pages/AutomationDetail/AutomationDetail')) },
        { path: 'emails', lazy: page(() => import('./pages/Emails/Emails')) },
        { path: 'emails/:emailId', lazy: page(() => import('./pages/EmailDetail/EmailDetail')) },
        { path: 'templates', lazy: page(() => import('./pages/Templates/Templates')) },
        { path: 'templates/:templateId', lazy: page(() => import('./pages/Templates/TemplateEditor')) },
        { path: 'images', lazy: page(() => import('./pages/Images/Images')) },
        { path: 'domains', lazy: page(() => import('./pages/Domains/Domains')) },
        { path: 'domains/:domainId', lazy: page(() => import('./pages/DomainDetail')) },
        { path: 'inbound', lazy: page(() => import('./pages/Inbound/Inbound')) },
        { path: 'webhooks', lazy: page(() => import('./pages/Webhooks/Webhooks')) },
        { path: 'webhooks/:webhookId', lazy: page(() => import('./pages/WebhookDetail')) },
        { path: 'api-keys', lazy: page(() => import('./pages/ApiKeys/ApiKeys')) },
        { path: 'people', lazy: page(() => import('./pages/People/People')) },
        { path: 'audit-log', lazy: page(() => import('./pages/AuditLog/AuditLog')) },
        { path: 'settings', lazy: page(() => import('./pages/Settings/Settings')) },
        { path: 'profile', lazy: page(() => import('./pages/Profile/Profile')) },
        { path: '*', element: <NotFound /> },
      ],
    },
  ],
  { basename: '/app' },
);
