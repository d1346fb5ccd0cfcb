import { Type, type Static } from 'typebox';
import { ListQuery, Nullable, PathId, StrictRecord, StringEnum, Timestamp } from '../../http/schema-helpers.js';

import { EventSchema } from '../../outbox/index.js';
import { MessageSourceSchema } from '../suppressions/suppressions.sources.js';
import { CONTACT_STATUSES } from './contacts.state.js';
import { MAX_TAG_LENGTH, MAX_TAGS } from './contacts.tags.js';

export { CONTACT_STATUSES };
export const PROPERTY_KEY_PATTERN = '^[a-zA-Z][a-zA-Z0-9_]{0,63}$';
export const MAX_PROPERTIES = 50;
export const MAX_PROPERTY_STRING = 2000;

/** An address; normalised (lower-case, bare) by the service, which answers 422 at /email when it is not one. */
const email = Type.String({
  minLength: 1,
  maxLength: 320,
  description: 'stored normalised: a bare address, lower-case; unique in the workspace',
});
const personName = Nullable(Type.String({ minLength: 1, maxLength: 200 }));
const status = StringEnum(CONTACT_STATUSES);
/** An IANA zone name, checked by the service with Intl (422 at /timezone otherwise) and stored as Intl spells it. */
const timezone = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      "the contact's IANA time zone (e.g. Europe/Berlin), for local-time sending (docs/sending.md); null: the workspace's settings.timezone",
  }),
);

export const PropertyValue = Type.Unsafe<string | number | boolean | null>({
  type: ['string', 'number', 'boolean', 'null'],
  maxLength: MAX_PROPERTY_STRING,
  description: `a string (up to ${MAX_PROPERTY_STRING} characters), number, boolean or null`,
});
export const Properties = StrictRecord(PROPERTY_KEY_PATTERN, PropertyValue, {
  maxProperties: MAX_PROPERTIES,
  description: `custom fields: at most ${MAX_PROPERTIES} keys matching ${PROPERTY_KEY_PATTERN}`,
});
export type ContactProperties = Static<typeof Properties>;

export const TopicChoices = Type.Array(
  Type.Object(
    { id: Type.String({ minLength: 1, maxLength: 64 }), subscribed: Type.Boolean() },
    { additionalProperties: false },
  ),
  {
    maxItems: 1000,
    description: "explicit choices; a topic not listed keeps the contact's current choice (or the topic default)",
  },
);
export type TopicChoice = Static<typeof TopicChoices>[number];

/** A contact's tags, given whole (docs/contacts.md "Tags"): each trimmed; a later spelling of a tag is dropped. */
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: MAX_TAG_LENGTH }), {
  maxItems: MAX_TAGS,
  description: `up to ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters, one per tag whatever its case (the first spelling is kept); replaces the contact's tags whole`,
});

/** Create or update by email: present fields replace the stored value whole, omitted ones are unchanged. */
export const UpsertContactBody = Type.Object(
  {
    email,
    firstName: Type.Optional(personName),
    lastName: Type.Optional(personName),
    properties: Type.Optional(Properties),
    status: Type.Optional({
      ...status,
      description: 'a new contact defaults to SUBSCRIBED; omitted, an existing contact keeps its status',
    }),
    timezone: Type.Optional(timezone),
    topics: Type.Optional(TopicChoices),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type UpsertContactInput = Static<typeof UpsertContactBody>;

export const UpdateContactBody = Type.Object(
  {
    id: Type.Optional(Type.String()),
    email: Type.Optional(email),
    firstName: Type.Optional(personName),
    lastName: Type.Optional(personName),
    properties: Type.Optional(Properties),
    status: Type.Optional(status),
    timezone: Type.Optional(timezone),
    topics: Type.Optional(TopicChoices),
    tags: Type.Optional(Tags),
  },
  { additionalProperties: false },
);
export type UpdateContactInput = Static<typeof UpdateContactBody>;

/** One NDJSON import line (and what a CSV row is turned into before the same checks). */
export const ImportRow = Type.Object(
  {
    email: Type.String({ maxLength: 320 }),
    firstName: Type.Optional(personName),
    lastName: Type.Optional(personName),
    status: Type.Optional(status),
    properties: Type.Optional(Properties),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 })),
    timezone: Type.Optional(timezone),
  },
  { additionalProperties: false },
);
export type ImportRowInput = Static<typeof ImportRow>;

export const ContactTopicSchema = Type.Object({ id: Type.String(), name: Type.String(), subscribed: Type.Boolean() });

export const ContactSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  properties: Type.Record(Type.String(), Type.Unknown()),
  status: StringEnum(CONTACT_STATUSES),
  timezone: Nullable(
    Type.String({
      description:
        "the contact's IANA time zone; null: the workspace's settings.timezone stands in (local-time sending, docs/sending.md)",
    }),
  ),
  suppressed: Type.Boolean({
    description:
      'the address is on the suppression list: it gets no broadcast or automation email, whatever its status (GET /v1/suppressions)',
  }),
  topics: Type.Array(ContactTopicSchema, {
    description: 'every topic of the workspace with the effective subscription',
  }),
  tags: Type.Array(Type.String(), { description: 'its tags, in the order they were given (docs/contacts.md)' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Contact = Static<typeof ContactSchema>;

/** The filters of the contact list, shared by its count. */
const contactFilters = {
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'exact match, after normalisation' })),
  status: Type.Optional(status),
  topicId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'only contacts (effectively) subscribed to this topic' }),
  ),
  tag: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_TAG_LENGTH,
      description: 'only contacts with this tag (any case)',
    }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'search: a case-insensitive substring of the email, first name or last name',
    }),
  ),
};

export const ContactListQuery = Type.Object(
  { ...ListQuery.properties, ...contactFilters },
  { additionalProperties: false },
);

export const ContactCountQuery = Type.Object(contactFilters, { additionalProperties: false });

export const ContactCountSchema = Type.Object({
  count: Type.Integer({
    minimum: 0,
    description: 'contacts the list has with these filters (all its pages), exact',
  }),
});

export const ContactParams = Type.Object({ contactId: PathId });

export const ContactExportQuery = Type.Object(
  {
    segmentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "export this segment's contacts; every contact when omitted",
      }),
    ),
  },
  { additionalProperties: false },
);

export const IMPORT_FORMATS = ['CSV', 'NDJSON'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
export const IMPORT_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED'] as const;

export const ImportJobSchema = Type.Object({
  id: Type.String(),
  status: StringEnum(IMPORT_STATUSES),
  format: StringEnum(IMPORT_FORMATS),
  total: Type.Integer({
    description: 'data rows read (header and blank lines not counted) = created + updated + skipped',
  }),
  created: Type.Integer(),
  updated: Type.Integer({
    description: 'rows that updated an existing contact, including a contact an earlier row of the file created',
  }),
  skipped: Type.Integer({ description: 'rejected rows; each is listed in errors (up to 1000)' }),
  suppressed: Type.Integer({
    description:
      'rows (among created and updated) that asked for SUBSCRIBED or PENDING on a suppressed address: the status was kept (docs/bounces.md)',
  }),
  errors: Type.Array(
    Type.Object({
      line: Type.Integer({ description: '1-based line of the file (a CSV header is line 1)' }),
      reason: Type.String(),
    }),
  ),
  errorsTruncated: Type.Integer({ description: 'rejected rows beyond the first 1000, not listed' }),
  error: Nullable(Type.String({ description: 'why a FAILED import stopped' })),
  createdAt: Timestamp,
  finishedAt: Nullable(Timestamp),
});
export type ImportJob = Static<typeof ImportJobSchema>;

export const ImportParams = Type.Object({ importId: PathId });
export const ImportListQuery = ListQuery;
export const ImportQuery = Type.Object({
  columns: Type.Optional(
    Type.String({
      maxLength: 65536,
      description:
        'CSV only: a JSON object mapping header names to email, firstName, lastName, name, status, attributes, a property key, or null to skip the column',
      examples: ['{"Email Address":"email","Phone":"phone","LEID":null}'],
    }),
  ),
});

/** An event of GET /v1/contacts/{id}/activity: the event (docs/events.md) and the message it is about. */
export const ActivityEventSchema = Type.Object(
  {
    ...EventSchema.properties,
    source: Nullable(MessageSourceSchema, {
      description:
        "what sent the message of `broadcastId`: a broadcast, or an automation's send step (whose broadcastId the broadcasts API does not show); null when the event names no message",
    }),
  },
  { description: 'One thing that happened to the contact, with the message it is about (docs/events.md)' },
);

export const TagListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })) },
  { additionalProperties: false },
);

export const TagListSchema = Type.Object({
  data: Type.Array(
    Type.Object({
      tag: Type.String({ description: 'the tag (of the spellings contacts have, the first in code point order)' }),
      contacts: Type.Integer({ minimum: 1, description: 'contacts with the tag' }),
    }),
    { description: 'the most used first' },
  ),
});
