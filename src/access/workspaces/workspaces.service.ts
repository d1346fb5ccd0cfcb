import type { ApiKeysService, CreatedApiKey } from '../api-keys/api-keys.service.js';
import { type Db, isUniqueViolation } from '../../db/connection.js';
import { conflict, notFound, unprocessable, validationFailed } from '../../errors/errors.js';
import { findDomainByName } from '../../mail-setup/index.js';
import { SYSTEM_ACTOR, changesOf, recordAudit, type AuditActor } from '../../outbox/index.js';
import { parseMailbox } from '../../lib/email.js';
import { canonicalTimeZone } from '../../lib/zones.js';
import { DEFAULT_SETTINGS, type UpdateWorkspaceInput } from './workspaces.schemas.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './workspaces.repository.js';

/** A workspace's slug is a public address (`/archive/{slug}`): one workspace of the installation has it. */
const slugTaken = (slug: string) =>
  conflict('slug_taken', `the slug "${slug}" is already another workspace's public archive address (/archive/{slug})`);

export class WorkspacesService {
  constructor(
    private readonly db: Db,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** An operator's act (CLI): a new workspace and its first key, which holds `admin`. */
  async createWithAdminKey(
    name: string,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<{ workspace: repo.Workspace; apiKey: CreatedApiKey }> {
    const trimmed = name.trim();
    if ([...trimmed].length < 1 || [...trimmed].length > 200)
      throw validationFailed([{ path: '/name', message: 'must be 1 to 200 characters' }]);
    const workspace = { id: newId('ws'), name: trimmed, createdAt: nowIso(), slug: null, settings: DEFAULT_SETTINGS };
    await repo.insertWorkspace(this.db.kysely, workspace);
    const apiKey = await this.apiKeys.create(workspace.id, { name: 'admin', scopes: ['admin'] }, undefined, actor);
    return { workspace, apiKey };
  }

  async get(workspaceId: string): Promise<repo.Workspace> {
    const ws = await repo.getWorkspace(this.db.kysely, workspaceId);
    if (!ws) throw notFound('workspace');
    return ws;
  }

  /**
   * PUT /v1/workspace: the name and settings. A settings key given replaces its value (null clears it);
   * `defaultFrom` must be a mailbox on a VERIFIED domain of the workspace (422 sender_domain_not_verified).
   */
  async update(
    workspaceId: string,
    input: UpdateWorkspaceInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<repo.Workspace> {
    try {
      return await this.updateIn(workspaceId, input, actor);
    } catch (err) {
      // Two workspaces saving the same slug at once: the unique index decides, the loser changes nothing.
      if (input.slug && isUniqueViolation(err)) throw slugTaken(input.slug);
      throw err;
    }
  }

  private async updateIn(workspaceId: string, input: UpdateWorkspaceInput, actor: AuditActor): Promise<repo.Workspace> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const current = await repo.getWorkspace(trx, workspaceId);
      if (!current) throw notFound('workspace');
      const settings = input.settings ? { ...current.settings, ...input.settings } : undefined;
      if (settings && input.settings?.timezone !== undefined) {
        // An IANA name Intl knows, stored as Intl spells it (docs/sending.md, "Local-time sending").
        const zone = canonicalTimeZone(input.settings.timezone);
        if (!zone)
          throw validationFailed([
            {
              path: '/settings/timezone',
              message: 'must be an IANA time zone name, such as Europe/Berlin or America/New_York',
              keyword: 'timezone',
            },
          ]);
        settings.timezone = zone;
      }
      if (input.settings?.defaultFrom) {
        const mailbox = parseMailbox(input.settings.defaultFrom);
        if (!mailbox)
          throw validationFailed([
            {
              path: '/settings/defaultFrom',
              message: 'must be an email address, optionally with a display name: "Name <addr@domain>"',
              keyword: 'format',
              params: { format: 'mailbox' },
            },
          ]);
        const domain = await findDomainByName(trx, workspaceId, mailbox.domain);
        if (!domain || domain.status !== 'VERIFIED') {
          throw unprocessable(
            'sender_domain_not_verified',
            `${mailbox.domain} is not a verified sending domain of this workspace`,
            [{ path: '/settings/defaultFrom', message: 'is not on a verified domain', keyword: 'verified_domain' }],
          );
        }
      }
      const name = input.name?.trim();
      if (name !== undefined && name.length === 0)
        throw validationFailed([
          { path: '/name', message: 'must not be blank', keyword: 'minLength', params: { limit: 1 } },
        ]);
      if (input.slug && (await repo.slugTakenByOther(trx, workspaceId, input.slug))) throw slugTaken(input.slug);
      await repo.updateWorkspace(trx, workspaceId, { name, slug: input.slug, settings });
      const updated = (await repo.getWorkspace(trx, workspaceId))!;
      // The audit log: the name and each setting that changed (docs/audit-log.md); nothing changed, no entry.
      const flat = (ws: repo.Workspace) => ({
        name: ws.name,
        slug: ws.slug,
        ...Object.fromEntries(Object.entries(ws.settings).map(([k, v]) => [`settings.${k}`, v])),
      });
      const [before, after] = [flat(current), flat(updated)];
      const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
      const changes = changesOf<Record<string, unknown>>(before, after, fields);
      if (changes)
        await recordAudit(trx, workspaceId, actor, {
          action: 'workspace.updated',
          target: { type: 'workspace', id: workspaceId, label: updated.name },
          changes,
        });
      return updated;
    });
  }
}
