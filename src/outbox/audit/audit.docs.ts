import type { OperationDocs } from '../../http/operation-docs.js';

export const auditDocs: OperationDocs = {
  'GET /v1/audit-log': {
    tags: ['audit log'],
    summary: 'List audit log entries',
    description:
      'Who changed what in the workspace, newest first: its settings, API keys, people and invitations, domains, webhooks, ' +
      'sends (a broadcast sent, scheduled, canceled, paused or resumed), suppressions, and deleted templates and forms. ' +
      'Each entry names the actor (a person in the console, an API key, the `formcast` command, or the service), the action ' +
      '(`api_key.created`…), the target, and the fields that changed with their values before and after; a secret field is ' +
      'named only. Filter by `action` (one, or a kind such as `webhook`), `actor` (an id, `cli` or `system`), `targetType`, ' +
      '`targetId`, and `from`/`to`. Needs `admin` (in the console: admins and owners). Kept AUDIT_RETENTION_DAYS (365) days. ' +
      'docs/audit-log.md lists the actions.',
    response: {
      data: [
        {
          id: 'aud_01JDB4C2E4G6J8M0P2R4T6V8X0',
          occurredAt: '2026-11-21T12:10:04.120Z',
          actor: { type: 'user', id: 'usr_01JDB3M1V3X5Z7B9D1F3H5K7N9', label: 'lin@example.com' },
          action: 'webhook.updated',
          target: { type: 'webhook', id: 'wh_01JDB3W2Y4A6C8E0G2J4M6P8R0', label: 'https://hooks.example.com/formcast' },
          changes: { enabled: { before: true, after: false } },
          ip: '203.0.113.7',
          userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
        },
        {
          id: 'aud_01JDB4C2E4G6J8M0P2R4T6V8W9',
          occurredAt: '2026-11-21T12:02:51.017Z',
          actor: { type: 'apiKey', id: 'key_01JDB3A1C3E5G7J9K1M3P5R7T9', label: 'Deploy' },
          action: 'api_key.created',
          target: { type: 'api_key', id: 'key_01JDB4C1D3F5H7K9M1P3R5T7V9', label: 'Zapier' },
          changes: { scopes: { before: null, after: ['read:contacts', 'write:contacts'] } },
          ip: '198.51.100.20',
          userAgent: 'formcast-sdk/0.1.0',
        },
      ],
      nextCursor: null,
    },
  },
};
