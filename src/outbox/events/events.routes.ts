import { paginate } from '../../http/pagination.js';
import { ListOf } from '../../http/schema-helpers.js';
import type { V1 } from '../../http/types.js';
import type { EventsService } from './events.service.js';
import { EventListQuery, EventSchema, TrackEventBody, TrackedSchema } from './events.schemas.js';

const tags = ['events'];

/** The event stream (docs/events.md). A contact's own events: GET /v1/contacts/{id}/activity (contacts.routes.ts). */
export async function eventsRoutes(app: V1, { events }: { events: EventsService }): Promise<void> {

  app.get('/events', {
    schema: {
      tags, summary: 'List events, newest first',
      description: 'Everything that happened in the workspace: emails sent, bounced, opened and clicked; contacts created, updated, subscribed, '
        + 'unsubscribed and deleted; form submissions; broadcast status moves. Filter by `type`, `contactId`, `broadcastId` and `since`. Kept EVENTS_RETENTION_DAYS (400) days.',
      querystring: EventListQuery, response: { 200: ListOf(EventSchema) },
    },
    config: { scope: 'read:contacts' },
  }, (req) => {
    const { limit, cursor, ...filter } = req.query;
    return paginate({ limit, cursor }, (w) => events.list(req.auth.workspaceId, { ...filter, ...w }));
  });

  app.post('/events/track', {
    schema: {
      tags, summary: 'Record a custom event of a contact',
      description: 'An `event.tracked` event (data: `name`, `properties`) for the contact named by `contactId` or `email` (404 when there is none). '
        + 'Automations with an `event` trigger of that name start a run for the contact (docs/automations.md). '
        + 'Each workspace may track TRACK_EVENTS_PER_MINUTE events (600) and TRACK_BYTES_PER_MINUTE bytes of event data (1 MiB) a minute: '
        + 'over either, 429 `rate_limited` with Retry-After, and nothing is written.',
      body: TrackEventBody, response: { 202: TrackedSchema },
    },
    config: { scope: 'write:contacts' },
  }, async (req, reply) => reply.code(202).send(await events.track(req.auth.workspaceId, req.body)));
}
