import { Type } from 'typebox';
import { paginate } from '../../http/pagination.js';
import { ListOf, ListQuery, Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { BouncesService } from './bounces.service.js';

const Rate = Type.Object({
  value: Type.Number({ description: 'a fraction: 0.012 is 1.2%' }),
  threshold: Type.Number(),
  status: StringEnum(['ok', 'warning', 'critical'] as const, {
    description: 'ok below half the threshold, warning up to it, critical above it',
  }),
});

const HealthSchema = Type.Object({
  windows: Type.Array(
    Type.Object({
      days: Type.Integer(),
      sent: Type.Integer({ description: 'messages accepted by the receiving side in the window' }),
      hardBounces: Type.Integer(),
      complaints: Type.Integer(),
      hardBounceRate: Rate,
      complaintRate: Rate,
    }),
    { description: 'the last 7 and the last 30 days' },
  ),
});

const InboundSchema = Type.Object({
  id: Type.String(),
  rcptTo: Type.String({ description: 'the bounce address it was sent to' }),
  mailFrom: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  reason: Type.String({ description: 'why it could not be read or applied' }),
  size: Type.Integer({ description: 'bytes received' }),
  receivedAt: Timestamp,
  raw: Type.String({ description: 'the first 256 KiB of the message, base64' }),
});

/** After sending: the workspace's sender health, and what the inbound listener could not read (docs/bounces.md). */
export async function bouncesRoutes(app: V1, { bounces }: { bounces: BouncesService }): Promise<void> {
  app.get(
    '/workspace/health',
    {
      schema: { response: { 200: HealthSchema } },
      config: { scope: 'any' },
    },
    (req) => bounces.health(req.auth.workspaceId),
  );

  app.get(
    '/inbound',
    {
      schema: { querystring: ListQuery, response: { 200: ListOf(InboundSchema) } },
      config: { scope: 'read:contacts' },
    },
    (req) => paginate(req.query, (w) => bounces.listInbound(req.auth.workspaceId, w)),
  );
}
