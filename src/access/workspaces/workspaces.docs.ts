import type { OperationDocs } from '../../http/operation-docs.js';

const workspace = {
  id: 'ws_01JDB2Z8K4M6P8R0T2V4X6Z8B0',
  name: 'Acme',
  createdAt: '2026-11-02T09:12:44.118Z',
  slug: 'acme',
  settings: {
    postalAddress: 'Acme Inc., 1 Main Street, Springfield, IL 62701, USA',
    locale: 'en',
    defaultFrom: 'Acme <hello@example.com>',
    tracking: { opens: true, clicks: true },
    brandColor: '#0b5fff',
    timezone: 'America/Chicago',
    requireTwoFactor: false,
  },
};

const tags = ['workspace'];

export const workspacesDocs: OperationDocs = {
  'GET /v1/workspace': {
    tags,
    summary: 'Get the workspace of the calling key',
    description:
      'The workspace the API key (or console session) belongs to: its id, name and settings. Any valid key may call it, whatever its scopes, which makes it the natural "who am I" check for an integration.',
    response: workspace,
  },
  'PUT /v1/workspace': {
    tags,
    summary: 'Update the workspace name or settings',
    description:
      "Partial: a field omitted is not changed, and `settings` members omitted keep their value. `slug` is the address of the workspace's public archive, `/archive/{slug}` (docs/archive.md): lower-case words joined by hyphens, unique across the installation (another workspace's: 409 slug_taken, nothing changed), null removes the archive. `postalAddress` is printed in the footer of every broadcast (CAN-SPAM requires one), `locale` chooses the language of hosted pages and system emails, `defaultFrom` is the sender of system mail (confirmations, invitations) and of a new broadcast created without `from`, `tracking` gives the default open and click tracking of new broadcasts, `brandColor` (`#rrggbb` or null) is the colour the email editor gives a new document's buttons and links, `timezone` (an IANA name, default UTC; 422 for another) is the zone local-time sending reads `sendAt` in and sends in to contacts without a zone of their own (docs/sending.md), and `requireTwoFactor` makes two-factor sign-in compulsory for every person of the workspace (a console session turning it on must have it itself: 409 invalid_state otherwise). The name and `postalAddress` are in the Liquid scope of every message as `{{ workspace.name }}` and `{{ workspace.postal_address }}`. Needs `admin`.",
    request: {
      name: 'Acme',
      settings: {
        postalAddress: 'Acme Inc., 1 Main Street, Springfield, IL 62701, USA',
        tracking: { opens: true, clicks: false },
      },
    },
    response: { ...workspace, settings: { ...workspace.settings, tracking: { opens: true, clicks: false } } },
  },
  'GET /v1/workspace/health': {
    tags,
    summary: 'Sender health: bounce and complaint rates',
    description:
      "Hard-bounce and complaint rates of the workspace's mail over the last 7 and 30 days, each with the threshold it is measured against (complaints: 0.3%, as Gmail and Yahoo set it) and a status `ok`, `warning` or `critical`. Any valid key may call it.",
    response: {
      windows: [
        {
          days: 7,
          sent: 12840,
          hardBounces: 38,
          complaints: 4,
          hardBounceRate: { value: 0.003, threshold: 0.02, status: 'ok' },
          complaintRate: { value: 0.0003, threshold: 0.003, status: 'ok' },
        },
        {
          days: 30,
          sent: 51210,
          hardBounces: 161,
          complaints: 22,
          hardBounceRate: { value: 0.0031, threshold: 0.02, status: 'ok' },
          complaintRate: { value: 0.0004, threshold: 0.003, status: 'ok' },
        },
      ],
    },
  },
};
