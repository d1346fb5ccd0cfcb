import type { OperationDocs } from '../../http/operation-docs.js';

const key = {
  id: 'key_01JDB3W0B2D4F6H8K0M2P4R6T8',
  name: 'Zapier',
  scopes: ['read:contacts', 'write:contacts'],
  createdAt: '2026-11-21T10:00:00.000Z',
};

const tags = ['api-keys'];

export const apiKeysDocs: OperationDocs = {
  'POST /v1/api-keys': {
    tags,
    summary: 'Create an API key',
    description:
      'A new key of the workspace with the given scopes (`read:forms write:forms read:broadcasts write:broadcasts read:contacts write:contacts read:domains write:domains read:webhooks write:webhooks admin`; `write:X` grants `read:X`, `admin` grants everything). The `key` is in this answer only: it is stored as a hash and can never be shown again. A key cannot grant scopes its creator lacks. Needs `admin`.',
    request: { name: 'Zapier', scopes: ['read:contacts', 'write:contacts'] },
    response: { ...key, key: 'fc_01JDB3W0B2D4F6H8K0M2P4R6T8_e-R96nIFEJPvG1IKz2SNdAlU-m8Ymx-a1M_xlfz-f8g' },
  },
  'GET /v1/api-keys': {
    tags,
    summary: 'List API keys',
    description:
      "The workspace's keys, newest first, without the keys themselves: name, scopes, when each was last used and whether it was revoked. Cursor pagination (`limit`, `cursor`). Needs `admin`.",
    response: {
      data: [
        { ...key, lastUsedAt: '2026-11-24T08:31:02.511Z', revokedAt: null },
        {
          id: 'key_01JDB2Z8K4M6P8R0T2V4X6Z8B1',
          name: 'admin',
          scopes: ['admin'],
          createdAt: '2026-11-02T09:12:44.118Z',
          lastUsedAt: '2026-11-24T09:02:17.040Z',
          revokedAt: null,
        },
      ],
      nextCursor: null,
    },
  },
  'DELETE /v1/api-keys/{keyId}': {
    tags,
    summary: 'Revoke an API key',
    description:
      "The key is refused from the next request on (401 unauthorized), in every process. The workspace's last admin key cannot be revoked (409). Answers 204 with no body. Needs `admin`.",
  },
};
