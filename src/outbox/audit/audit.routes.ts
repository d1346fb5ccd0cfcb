import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import { AuditEntrySchema, AuditListQuery } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

/** GET /v1/audit-log (docs/audit-log.md): admins (and `admin` keys) read who changed what. */
export async function auditRoutes(app: V1, { audit }: { audit: AuditService }): Promise<void> {
  app.get(
    '/audit-log',
    {
      schema: { querystring: AuditListQuery, response: { 200: ListOf(AuditEntrySchema) } },
      config: { scope: 'read:audit' },
    },
    (req) => {
      const { limit, cursor, ...filter } = req.query;
      return paginate({ limit, cursor }, (w) => audit.list(req.auth.workspaceId, { ...filter, ...w }));
    },
  );
}
