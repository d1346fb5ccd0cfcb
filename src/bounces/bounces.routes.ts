import { Type } from 'typebox';
import { StringEnum } from '../http/schema-helpers.js';
import type { V1 } from '../http/server.js';

const Rate = Type.Object({
  value: Type.Number({ description: 'a fraction: 0.012 is 1.2%' }),
  threshold: Type.Number(),
  status: StringEnum(['ok', 'warning', 'critical'] as const, { description: 'ok below half the threshold, warning up to it, critical above it' }),
});

const HealthSchema = Type.Object({
  windows: Type.Array(Type.Object({
    days: Type.Integer(),
    sent: Type.Integer({ description: 'messages accepted by the receiving side in the window' }),
    hardBounces: Type.Integer(),
    complaints: Type.Integer(),
    hardBounceRate: Rate,
    complaintRate: Rate,
  }), { description: 'the last 7 and the last 30 days' }),
});

/** After sending: the workspace's sender health (docs/bounces.md). */
export async function bouncesRoutes(app: V1): Promise<void> {
  app.get('/workspace/health', {
    schema: { tags: ['workspace'], summary: 'Sender health: hard-bounce and complaint rates over 7 and 30 days, against their thresholds', response: { 200: HealthSchema } },
    config: { scope: 'any' },
  }, (req) => app.services.bounces.health(req.auth.workspaceId));
}
