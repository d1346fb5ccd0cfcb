import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { ContactsService } from './contacts.service.js';

const MAX_DAYS = 90;

const GrowthQuery = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DAYS,
        default: 30,
        description: `the window, in days back from now (1 to ${MAX_DAYS}; default 30)`,
      }),
    ),
  },
  { additionalProperties: false },
);

const GrowthSchema = Type.Object({
  since: Type.String({
    format: 'date-time',
    description: 'the start of the window: the first whole UTC hour `days` days ago',
  }),
  until: Type.String({ format: 'date-time', description: 'now' }),
  total: Type.Integer({ description: 'contacts created in the window (still in the workspace)' }),
  hours: Type.Array(
    Type.Object({
      hour: Type.String({ format: 'date-time', description: 'the start of a UTC hour' }),
      created: Type.Integer({ minimum: 1 }),
    }),
    { description: 'the hours in which contacts were created, oldest first (hours with none are left out)' },
  ),
});

/** `GET /v1/stats/contacts` (read:contacts): new contacts per hour, for the console dashboard's chart (contacts.service.ts growth). */
export async function contactStatsRoutes(app: V1, { contacts }: { contacts: ContactsService }): Promise<void> {
  app.get(
    '/stats/contacts',
    {
      schema: {
        querystring: GrowthQuery,
        response: { 200: GrowthSchema },
      },
      config: { scope: 'read:contacts' },
    },
    (req) => contacts.growth(req.auth.workspaceId, req.query.days ?? 30),
  );
}
