import { Type, type Static } from 'typebox';
import { EVENT_TYPES } from '../../outbox/index.js';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { WEBHOOK_DELIVERY_STATUSES } from './webhooks.state.js';

const url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'https:// (http:// only when the server runs with WEBHOOKS_ALLOW_HTTP=true); its host must resolve to public addresses only (docs/webhooks.md)',
});
const eventTypes = Type.Array(StringEnum(EVENT_TYPES), {
  minItems: 1,
  uniqueItems: true,
  description: 'the event types POSTed to the endpoint (docs/events.md lists them)',
});
const description = Type.String({ maxLength: 500, description: 'a note for people: what the endpoint is for' });

export const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(StringEnum(EVENT_TYPES)),
  description: Nullable(Type.String()),
  enabled: Type.Boolean({ description: 'false: nothing is sent (disabled by hand, or after 5 days of failures)' }),
  disabledReason: Nullable(Type.String({ description: 'why the endpoint was disabled; null while enabled' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Webhook = Static<typeof WebhookSchema>;

/**
 * An endpoint with its signing secret: only the answers of POST /v1/webhooks and …/rotate-secret carry it (issue 29:
 * whoever reads the secret can forge deliveries, so GET, list and PUT never show it).
 */
export const WebhookWithSecretSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Nullable(
    Type.String({
      description:
        '`whsec_` and base64: the key of the `webhook-signature` HMAC (Standard Webhooks). Shown in this answer only: ' +
        'keep it now (null in an Idempotency-Key replay, which says `Idempotent-Redacted: secret`); a lost secret is replaced by rotating it',
    }),
  ),
});
/** What the service answers: the secret itself (null only in the replay store's copy). */
export type WebhookWithSecret = Webhook & { secret: string };

export const CreateWebhookBody = Type.Object(
  { url, eventTypes, description: Type.Optional(description) },
  { additionalProperties: false },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

/** Partial: an omitted field is not changed; `description: null` clears it. */
export const UpdateWebhookBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    url: Type.Optional(url),
    eventTypes: Type.Optional(eventTypes),
    description: Type.Optional(Nullable(description)),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false disables the endpoint (what waits for it is FAILED); true enables it again and forgets its failures',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookParams = Type.Object({ webhookId: PathId });
export const WebhookDeliveryParams = Type.Object({ webhookId: PathId, deliveryId: PathId });
export const WebhookListQuery = ListQuery;

export const WebhookDeliveryListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(StringEnum(WEBHOOK_DELIVERY_STATUSES)),
  },
  { additionalProperties: false },
);

export const WebhookDeliverySchema = Type.Object({
  id: Type.String({ description: 'the `webhook-id` header: the same on every attempt' }),
  eventId: Nullable(Type.String({ description: 'the event delivered; null for a test event' })),
  eventType: Type.String(),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES, {
    description:
      'PENDING (waiting for its next attempt), SENDING, SUCCEEDED, FAILED (after 8 attempts, or the endpoint was disabled)',
  }),
  attempts: Type.Integer({ description: 'attempts of the current round (a manual retry starts a new one)' }),
  nextAttemptAt: Nullable(Timestamp),
  lastStatusCode: Nullable(Type.Integer()),
  lastDurationMs: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  createdAt: Timestamp,
  deliveredAt: Nullable(Timestamp),
  attemptLog: Type.Array(
    Type.Object({
      attemptedAt: Timestamp,
      statusCode: Nullable(
        Type.Integer({ description: 'null when no answer came (refused, timed out, a non-public address)' }),
      ),
      durationMs: Type.Integer(),
      error: Nullable(Type.String()),
    }),
    { description: 'every attempt, oldest first' },
  ),
});
