/**
 * The console's pages under /app. Heavy pages (the form editor with CodeMirror, charts with uPlot) load on
 * demand. Contacts, Segments, Topics and Broadcasts are placeholders until their pages land.
 */
import { lazy } from 'react';
import { createBrowserRouter } from 'react-router';
import { Layout } from './Layout';
import { NotFound, Placeholder } from './pages/Placeholder';

const Dashboard = lazy(() => import('./pages/Dashboard'));
const Forms = lazy(() => import('./pages/Forms'));
const FormEditor = lazy(() => import('./pages/FormEditor'));
const Domains = lazy(() => import('./pages/Domains'));
const DomainDetail = lazy(() => import('./pages/DomainDetail'));
const Settings = lazy(() => import('./pages/Settings'));
const ApiKeys = lazy(() => import('./pages/ApiKeys'));
const Webhooks = lazy(() => import('./pages/Webhooks'));
const WebhookDetail = lazy(() => import('./pages/WebhookDetail'));
const People = lazy(() => import('./pages/People'));

export const router = createBrowserRouter([
  {
    path: '/',
    element: <Layout />,
    children: [
      { index: true, element: <Dashboard /> },
      { path: 'forms', element: <Forms /> },
      { path: 'forms/:formId', element: <FormEditor /> },
      { path: 'contacts/*', element: <Placeholder title="Contacts" what="Browse, search and import contacts, and see each contact's topics and activity." /> },
      { path: 'segments/*', element: <Placeholder title="Segments" what="Build segments from the filter grammar with a live count." /> },
      { path: 'topics/*', element: <Placeholder title="Topics" what="The topics contacts subscribe to." /> },
      { path: 'broadcasts/*', element: <Placeholder title="Broadcasts" what="Compose, preview, test and send broadcasts, and read their reports." /> },
      { path: 'domains', element: <Domains /> },
      { path: 'domains/:domainId', element: <DomainDetail /> },
      { path: 'webhooks', element: <Webhooks /> },
      { path: 'webhooks/:webhookId', element: <WebhookDetail /> },
      { path: 'api-keys', element: <ApiKeys /> },
      { path: 'people', element: <People /> },
      { path: 'settings', element: <Settings /> },
      { path: '*', element: <NotFound /> },
    ],
  },
], { basename: '/app' });
