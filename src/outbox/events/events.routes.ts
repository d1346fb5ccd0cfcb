import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { EventsService } from './events.service.js';
import { EventListQuery, EventSchema, TrackEventBody, TrackedSchema } from './events.schemas.js';

/** The event stream (docs/events.md). A contact's own events: GET /v1/contacts/{id}/activity (contacts.routes.ts). */
export async function eventsRoutes(app: V1, { events }: { events: EventsService }): Promise<void> {
  app.get(
    '/events',
    {
      schema: {
        querystring: EventListQuery,
        response: { 200: ListOf(EventSchema) },
      },
      config: { scope: 'read:contacts' },
    },
    (req) => {
      const { limit, cursor, ...filter } = req.query;
      return paginate({ limit, cursor }, (w) => events.list(req.auth.workspaceId, { ...filter, ...w }));
    },
  );

  app.post(
    '/events/track',
    {
      schema: {
        body: TrackEventBody,
        response: { 202: TrackedSchema },
      },
      config: { scope: 'write:contacts' },
    },
    async (req, reply) => reply.code(202).send(await events.track(req.auth.workspaceId, req.body)),
  );
}
