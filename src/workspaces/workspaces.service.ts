import type { ApiKeysService, CreatedApiKey } from '../api-keys/api-keys.service.js';
import type { Db } from '../db/connection.js';
import { notFound, validationFailed } from '../errors/errors.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import * as repo from './workspaces.repository.js';

export class WorkspacesService {
  constructor(private readonly db: Db, private readonly apiKeys: ApiKeysService) {}

  /** An operator's act (CLI): a new workspace and its first key, which holds `admin`. */
  async createWithAdminKey(name: string): Promise<{ workspace: repo.Workspace; apiKey: CreatedApiKey }> {
    const trimmed = name.trim();
    if ([...trimmed].length < 1 || [...trimmed].length > 200) throw validationFailed([{ path: '/name', message: 'must be 1 to 200 characters' }]);
    const workspace = { id: newId('ws'), name: trimmed, createdAt: nowIso() };
    await repo.insertWorkspace(this.db.kysely, workspace);
    const apiKey = await this.apiKeys.create(workspace.id, { name: 'admin', scopes: ['admin'] });
    return { workspace, apiKey };
  }

  async get(workspaceId: string): Promise<repo.Workspace> {
    const ws = await repo.getWorkspace(this.db.kysely, workspaceId);
    if (!ws) throw notFound('workspace');
    return ws;
  }
}
