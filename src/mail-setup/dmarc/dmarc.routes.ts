import type { V1 } from '../../http/types.js';
import type { DmarcService } from './dmarc.service.js';
import { DmarcParams, DmarcQuery, DmarcReportSchema } from './dmarc.schemas.js';

/** What receivers report of a sending domain (docs/domains.md, "DMARC reports"). */
export async function dmarcRoutes(app: V1, { dmarc }: { dmarc: DmarcService }): Promise<void> {
  app.get(
    '/domains/:domainId/dmarc',
    {
      schema: { params: DmarcParams, querystring: DmarcQuery, response: { 200: DmarcReportSchema } },
      config: { scope: 'read:domains' },
    },
    (req) => dmarc.report(req.auth.workspaceId, req.params.domainId, req.query),
  );
}
