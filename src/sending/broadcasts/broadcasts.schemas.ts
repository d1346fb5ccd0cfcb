import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { TrackingSchema } from '../../access/index.js';
import { BROADCAST_STATUSES } from './broadcasts.state.js';

export { BROADCAST_STATUSES };

/** Whom `POST /v1/broadcasts/{id}/resend` sends to (§18). */
export const RESEND_TARGETS = ['NON_OPENERS', 'NON_CLICKERS'] as const;

/** A broadcast's status: built from the state machine's own list (broadcasts.state.ts), so the two cannot differ. */
export const BroadcastStatusSchema = StringEnum(BROADCAST_STATUSES);
export type BroadcastStatus = Static<typeof BroadcastStatusSchema>;

const Address = Type.String({
  minLength: 3,
  maxLength: 998,
  description: '`addr@domain` or `Display Name <addr@domain>`',
});

/** subject, html, text and previewText are Liquid templates (see the README for what is in scope). */
export const EmailContentInput = Type.Object(
  {
    subject: Type.Optional(Nullable(Type.String({ maxLength: 998 }))),
    html: Type.Optional(Nullable(Type.String({ description: 'up to 2 MiB' }))),
    text: Type.Optional(Nullable(Type.String({ description: 'up to 2 MiB' }))),
    previewText: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    editorContent: Type.Optional(Type.Unknown({ description: 'any JSON an editor stores' })),
  },
  { additionalProperties: false },
);
export type EmailContentInput = Static<typeof EmailContentInput>;

export const AB_WINNER_BY = ['OPENS', 'CLICKS'] as const;

/** One variant of an A/B test (contract §17): what it changes; a field left out comes from the broadcast. */
export const AbVariantInput = Type.Object(
  {
    id: Type.String({
      pattern: '^[a-z][a-z0-9_-]{0,15}$',
      description: 'a short name, unique in the test: "a", "b", …',
    }),
    subject: Type.String({ minLength: 1, maxLength: 998, description: "a Liquid template, as the broadcast's" }),
    previewText: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    from: Type.Optional(Nullable(Address)),
    emailContent: Type.Optional(
      Nullable(
        Type.Object(EmailContentInput.properties, {
          additionalProperties: false,
          description:
            "the variant's own body (html, text, or a block document in editorContent); omitted or null: the broadcast's. Its subject and previewText give way to the variant's own",
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type AbVariantInput = Static<typeof AbVariantInput>;

export const AbTestInput = Type.Object(
  {
    variants: Type.Array(AbVariantInput, { minItems: 2, maxItems: 4 }),
    testPercent: Type.Integer({
      minimum: 10,
      maximum: 50,
      description: 'the share of the audience that takes part, split evenly across the variants',
    }),
    winnerBy: StringEnum(AB_WINNER_BY, {
      description: 'the rate that decides: unique human opens, or unique human clicks, per message sent',
    }),
    waitMinutes: Type.Integer({
      minimum: 30,
      maximum: 10080,
      description: 'how long after the test share is queued the winner is chosen and sent to the rest',
    }),
  },
  { additionalProperties: false },
);
export type AbTestInput = Static<typeof AbTestInput>;

/** The fields of Create Broadcast (interface 2.2), each optional; creation requires `name`. */
const optionalFields = Type.Partial(
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 255 }),
    from: Nullable(Address),
    emailContent: EmailContentInput,
    replyTo: Nullable(Address),
    topicId: Nullable(Type.String({ minLength: 1, maxLength: 64 })),
    segmentId: Nullable(Type.String({ minLength: 1, maxLength: 64 })),
    tracking: Type.Object(TrackingSchema.properties, {
      additionalProperties: false,
      description:
        "opens (the pixel) and clicks (rewritten links); at creation, the workspace's settings.tracking when omitted",
    }),
    abTest: Nullable(AbTestInput, {
      description: 'an A/B test of 2 to 4 variants (docs/ab-tests.md); null: none',
    }),
    archive: Type.Boolean({
      description:
        "show it in the workspace's public archive (`/archive/{workspaceSlug}` and its Atom feed) once it is SENT; false when omitted at creation (docs/archive.md)",
    }),
  }),
).properties;

export const CreateBroadcastBody = Type.Object(
  {
    ...optionalFields,
    name: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);
export type CreateBroadcastInput = Static<typeof CreateBroadcastBody>;

/** Any field of creation plus sendAt: a future time schedules, null unschedules. */
export const UpdateBroadcastBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    ...optionalFields,
    sendAt: Type.Optional(
      Nullable(Type.String({ format: 'date-time', description: 'RFC 3339 with an offset; stored in UTC' })),
    ),
    sendAtLocal: Type.Optional(
      Type.Boolean({
        description:
          "local-time sending (docs/sending.md): true sends at `sendAt`'s wall-clock time (read in the workspace's settings.timezone) in each recipient's own zone (the workspace's for contacts without one); a zone whose time has passed when the send starts gets it at once; 422 when the time is past in every zone of the audience. Omitted: unchanged; `sendAt: null` clears it",
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateBroadcastInput = Static<typeof UpdateBroadcastBody>;

export const EmailContentSchema = Type.Object({
  subject: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  previewText: Nullable(Type.String()),
  editorContent: Type.Unknown(),
});
export type EmailContent = Static<typeof EmailContentSchema>;

export const AbTestSchema = Type.Object({
  variants: Type.Array(
    Type.Object({
      id: Type.String(),
      subject: Type.String(),
      previewText: Nullable(Type.String()),
      from: Nullable(Type.String()),
      emailContent: Nullable(EmailContentSchema),
    }),
  ),
  testPercent: Type.Integer(),
  winnerBy: StringEnum(AB_WINNER_BY),
  waitMinutes: Type.Integer(),
});
export type AbTest = Static<typeof AbTestSchema>;

export const AbVariantStatsSchema = Type.Object({
  id: Type.String(),
  recipients: Type.Integer({ description: 'recipients of the test share given this variant' }),
  sent: Type.Integer(),
  uniqueOpens: Type.Integer({ description: 'recipients who opened it (people only)' }),
  uniqueClicks: Type.Integer({ description: 'recipients who clicked a link (people only)' }),
  openRate: Type.Number({ description: 'uniqueOpens / sent (0 before anything is sent)' }),
  clickRate: Type.Number({ description: 'uniqueClicks / sent' }),
  winner: Type.Boolean(),
});

export const AbResultSchema = Type.Object({
  winnerBy: StringEnum(AB_WINNER_BY),
  winner: Nullable(Type.String({ description: 'the variant chosen; null until then' })),
  chosenAt: Nullable(Timestamp),
  decidesAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'when the wait ends and the winner is chosen (null until the test share is queued)',
    }),
  ),
  leader: Nullable(Type.String({ description: 'the variant ahead by the rule now (ties: the first)' })),
  runnerUp: Nullable(Type.String()),
  margin: Type.Number({ description: "the leader's rate minus the runner-up's, in percentage points" }),
  significance: Nullable(
    Type.Object(
      {
        z: Type.Number(),
        pValue: Type.Number({ description: 'two-sided' }),
        confidence: Type.Number({ description: '1 − pValue, 0..1' }),
      },
      {
        description:
          "a two-proportion z-test of the leader's rate against the runner-up's (docs/ab-tests.md); null while either has nothing sent",
      },
    ),
  ),
});

export const BroadcastStatsSchema = Type.Object({
  recipients: Type.Integer(),
  queued: Type.Integer({ description: 'not yet sent: waiting, being sent, or held while the broadcast is PAUSED' }),
  sent: Type.Integer({ description: 'accepted by the receiving side (and not reported bounced since)' }),
  failed: Type.Integer({
    description: 'refused for good without a hard bounce: a block, another permanent failure, or retries used up',
  }),
  bounced: Type.Integer({ description: 'hard bounces, at send time or reported later' }),
  softBounced: Type.Integer({
    description:
      'deliveries with a soft bounce (mailbox full, temporary refusals that ran out of retries, delayed DSNs)',
  }),
  complained: Type.Integer({ description: 'recipients who reported the message as spam' }),
  unsubscribed: Type.Integer(),
  opened: Type.Integer({ description: 'opens by people (machine opens left out)' }),
  clicked: Type.Integer({ description: 'clicks by people (scanners left out)' }),
  uniqueOpens: Type.Integer({ description: 'recipients who opened it at least once (people only)' }),
  uniqueClicks: Type.Integer({ description: 'recipients who clicked at least one link (people only)' }),
  machineOpens: Type.Integer({
    description: 'opens by machines: Apple Mail Privacy Protection, security scanners (docs/tracking.md)',
  }),
  variants: Type.Optional(
    Type.Array(AbVariantStatsSchema, { description: 'an A/B broadcast: each variant of its test share' }),
  ),
  abResult: Type.Optional(AbResultSchema),
  zones: Type.Optional(
    Type.Array(
      Type.Object({
        timezone: Type.String({
          description: 'an IANA zone of the recipients (the workspace zone for those without one)',
        }),
        recipients: Type.Integer(),
        sent: Type.Integer({ description: 'accepted by the receiving side' }),
        sendAt: Timestamp,
      }),
      {
        description:
          "local-time sending only (docs/sending.md): progress per recipient zone, each with the instant its recipients' turn comes (or came), earliest first",
      },
    ),
  ),
  outbox: Type.Optional(
    Type.Integer({
      description:
        'present when the server has no SMTP_URL: how many of `sent` were only written as .eml files to the outbox directory and reached nobody',
    }),
  ),
});

export const BroadcastSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: BroadcastStatusSchema,
  from: Nullable(Type.String()),
  emailContent: EmailContentSchema,
  replyTo: Nullable(Type.String()),
  topicId: Nullable(Type.String()),
  segmentId: Nullable(Type.String()),
  sendAt: Nullable(Timestamp),
  sendAtLocal: Type.Boolean({
    description:
      'scheduled for local-time sending (docs/sending.md): each recipient gets it at `localSendTime` in their own zone',
  }),
  localSendTime: Nullable(
    Type.String({
      description:
        "local-time sending: the wall-clock time (YYYY-MM-DDTHH:mm:ss, no offset) each recipient gets it at in their zone: `sendAt` in the workspace's zone when it was scheduled; null otherwise",
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  sentAt: Nullable(Timestamp),
  pausedReason: Nullable(
    Type.String({ description: 'why a PAUSED broadcast paused: the circuit breaker\'s rates, or "paused by hand"' }),
  ),
  tracking: Type.Object(TrackingSchema.properties, { description: 'opens (the pixel) and clicks (rewritten links)' }),
  abTest: Nullable(AbTestSchema, { description: 'its A/B test (docs/ab-tests.md), or null' }),
  resendOf: Type.Optional(
    Type.Object(
      {
        broadcastId: Type.String({ description: 'the original broadcast' }),
        to: StringEnum(RESEND_TARGETS),
        asOf: Timestamp,
      },
      {
        description:
          "present on a resend (POST /v1/broadcasts/{id}/resend): its audience is the original's recipients who had no human open (NON_OPENERS) or click (NON_CLICKERS) of it at `asOf`, the instant of the resend, that are still SUBSCRIBED and not suppressed when it is sent",
      },
    ),
  ),
  archive: Type.Boolean({
    description: "shown in the workspace's public archive once SENT (docs/archive.md)",
  }),
  stats: Type.Optional(BroadcastStatsSchema),
});
export type Broadcast = Static<typeof BroadcastSchema>;

export const ResendBody = Type.Object(
  {
    to: StringEnum(RESEND_TARGETS, {
      description: 'NON_OPENERS: the recipients without a human open of it; NON_CLICKERS: without a human click',
    }),
    subject: Type.Optional(
      Type.String({ minLength: 1, maxLength: 998, description: "the resend's subject; the original's when omitted" }),
    ),
  },
  { additionalProperties: false },
);
export type ResendInput = Static<typeof ResendBody>;
/** PUT /v1/broadcasts/{id}/archive: the archive switch alone, in any status (docs/archive.md). */
export const ArchiveBody = Type.Object(
  {
    archive: Type.Boolean({
      description: "show it in the workspace's public archive once SENT (true), or take it out (false)",
    }),
  },
  { additionalProperties: false },
);

export const BroadcastListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(BroadcastStatusSchema),
  },
  { additionalProperties: false },
);

export const BroadcastParams = Type.Object({ broadcastId: PathId });

export const PreviewBody = Type.Object(
  {
    contactId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'render for this contact; sample data when omitted' }),
    ),
  },
  { additionalProperties: false },
);

export const PreviewSchema = Type.Object({
  subject: Nullable(Type.String()),
  html: Nullable(
    Type.String({ description: 'as a recipient gets it: a whole document with the hidden preheader and the footer' }),
  ),
  text: Nullable(
    Type.String({
      description: 'the text part exactly as a send carries it (derived from the HTML when there is no text)',
    }),
  ),
  previewText: Nullable(Type.String()),
  contact: Type.Object({ id: Nullable(Type.String()), email: Type.String() }),
});

export const AudienceMember = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
});
export type AudienceMember = Static<typeof AudienceMember>;

export const AudienceSchema = Type.Object({
  count: Type.Integer({ description: 'how many contacts the broadcast would go to now' }),
  data: Type.Array(AudienceMember),
  nextCursor: Nullable(Type.String()),
});

export { DELIVERY_STATUSES } from '../deliveries/deliveries.state.js';
import { DELIVERY_STATUSES } from '../deliveries/deliveries.state.js';

export const DeliverySchema = Type.Object({
  id: Type.String(),
  contactId: Nullable(Type.String()),
  email: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  lastError: Nullable(Type.String({ description: 'the last failure: an SMTP reply or a connection error' })),
  smtpResponse: Nullable(Type.String({ description: "the server's answer when the message was accepted" })),
  messageId: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  sentAt: Nullable(Timestamp),
  unsubscribedAt: Nullable(Timestamp),
});

export const DeliveryListQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
  },
  { additionalProperties: false },
);

export const PreflightSchema = Type.Object({
  ok: Type.Boolean({ description: 'no check failed: the broadcast may be scheduled and sent' }),
  checks: Type.Array(
    Type.Object({
      id: Type.String(),
      status: StringEnum(['pass', 'warn', 'fail'] as const),
      detail: Type.String(),
    }),
  ),
});

export const TestSendBody = Type.Object(
  {
    emails: Type.Array(Type.String({ minLength: 3, maxLength: 320 }), { minItems: 1, maxItems: 5 }),
    contactId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'personalise for this contact; sample data when omitted',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TestSendResult = Type.Object({
  sent: Type.Array(
    Type.Object({
      email: Type.String(),
      messageId: Type.String(),
      response: Type.String({ description: "the relay's answer (or where the outbox wrote it)" }),
    }),
  ),
  failed: Type.Array(
    Type.Object({ email: Type.String(), error: Type.String({ description: "the relay's refusal of this address" }) }),
    {
      description: 'addresses the relay refused (a relay that cannot be reached is 503 unavailable instead)',
    },
  ),
});

export const LinkStatsSchema = Type.Object({
  data: Type.Array(
    Type.Object({
      url: Type.String({
        description:
          "the link as the template writes it, Liquid included (`https://shop.example/vip?email={{ contact.email | url_encode }}`: every recipient's own URL of it counted together); a URL that no link of the template makes (a whole href made by Liquid) is its own row",
      }),
      clicks: Type.Integer({ description: 'clicks by people' }),
      uniqueClicks: Type.Integer({ description: 'recipients who clicked it' }),
    }),
    { description: 'the links people clicked, most clicked first (at most 500)' },
  ),
});

export const TIMELINE_BUCKETS = ['hour', 'day'] as const;

export const TimelineQuery = Type.Object(
  {
    bucket: Type.Optional(StringEnum(TIMELINE_BUCKETS, { description: 'default hour' })),
    tz: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'the IANA time zone whose hours and days the buckets are (default UTC), e.g. Europe/Paris',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TimelineSchema = Type.Object({
  bucket: StringEnum(TIMELINE_BUCKETS),
  timeZone: Type.String({ description: 'the zone of the buckets (the `tz` asked for, or UTC)' }),
  data: Type.Array(
    Type.Object({
      at: Timestamp,
      sent: Type.Integer(),
      opens: Type.Integer({ description: 'opens by people' }),
      clicks: Type.Integer({ description: 'clicks by people' }),
      bounces: Type.Integer({ description: 'hard bounces' }),
    }),
    {
      description:
        'per hour or day of the zone, each named by its start (a UTC instant), oldest first; buckets with nothing in them are left out',
    },
  ),
});

export const PickWinnerBody = Type.Object(
  { variant: Type.String({ minLength: 1, maxLength: 16, description: 'the id of the variant to send to the rest' }) },
  { additionalProperties: false },
);
