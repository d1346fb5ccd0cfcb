/**
 * The console's pages under /app. Heavy pages (the form editor with CodeMirror, charts with uPlot) load on
 * demand. Contacts, Segments, Topics and Broadcasts are placeholders until their pages land.
 */
import { lazy } from 'react';
import { createBrowserRouter } from 'react-router';
import { Layout } from './Layout';
import { NotFound } from './pages/Placeholder';

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
const Contacts = lazy(() => import('./pages/Contacts'));
const ContactDetail = lazy(() => import('./pages/ContactDetail'));
const Segments = lazy(() => import('./pages/Segments'));
const SegmentEditor = lazy(() => import('./pages/SegmentEditor'));
const Topics = lazy(() => import('./pages/Topics'));
const Broadcasts = lazy(() => import('./pages/Broadcasts'));
const BroadcastDetail = lazy(() => import('./pages/BroadcastDetail'));

export const router = createBrowserRouter([
  {
    path: '/',
    element: <Layout />,
    children: [
      { index: true, element: <Dashboard /> },
      { path: 'forms', element: <Forms /> },
      { path: 'forms/:formId', element: <FormEditor /> },
      { path: 'contacts', element: <Contacts /> },
      { path: 'contacts/:contactId', element: <ContactDetail /> },
      { path: 'segments', element: <Segments /> },
      { path: 'segments/:segmentId', element: <SegmentEditor /> },
      { path: 'topics', element: <Topics /> },
      { path: 'broadcasts', element: <Broadcasts /> },
      { path: 'broadcasts/:broadcastId', element: <BroadcastDetail /> },
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
