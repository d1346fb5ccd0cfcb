import type { Generated } from 'kysely';

/**
 * Kysely's view of the tables. Timestamps are written as ISO strings and read back through `toIso`
 * (text on SQLite, timestamptz on PostgreSQL); JSON columns are text on the wire (see lib/json.ts).
 */
export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: string;
  /** JSON: postalAddress, locale, defaultFrom (workspaces.schemas.ts); null: the defaults. */
  settings: string | null;
  /** The public archive's address, `/archive/{slug}` (0032); unique across the installation, null: no archive. */
  slug: Generated<string | null>;
}

export interface InboundMessagesTable {
  id: string;
  workspace_id: string;
  rcpt_to: string;
  mail_from: string | null;
  subject: string | null;
  reason: string;
  size: number;
  raw: string;
  received_at: string;
}

/** A DMARC aggregate report received at dmarc@bounces.<domain> (migration 0023, mail-setup/dmarc). */
export interface DmarcReportsTable {
  id: string;
  workspace_id: string;
  domain_id: string;
  org_name: string;
  report_id: string;
  email: string | null;
  begin_at: string;
  end_at: string;
  /** YYYY-MM-DD (UTC): the middle of the report's range. */
  day: string;
  policy_domain: string;
  /** JSON: { p, sp, adkim, aspf, pct } as the receiver found them. */
  policy: string;
  messages: number | string;
  received_at: string;
}

/** One record of a DMARC aggregate report: a source IP and its results (migration 0023). */
export interface DmarcRowsTable {
  id: string;
  workspace_id: string;
  domain_id: string;
  report_id: string;
  day: string;
  org_name: string;
  source_ip: string;
  messages: number | string;
  disposition: string;
  /** pass when DKIM or SPF passed aligned (the receiver's policy_evaluated), else fail. */
  dmarc: string;
  dkim: string;
  spf: string;
  header_from: string;
  envelope_from: string | null;
  /** JSON arrays: [{ domain, selector, result }], [{ domain, scope, result }], [{ type, comment }]. */
  dkim_results: string;
  spf_results: string;
  reasons: string;
  /** Why it failed, in words; null when it passed. */
  why: string | null;
}

/** Before migration 0020, the generated server secret (`tokens`); since, empty: the first start adopts it as the key file (db/secrets.ts). */
export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

/** The fingerprint of the installation's key (`server`), never the key (db/secrets.ts). */
export interface InstallationKeysTable {
  name: string;
  fingerprint: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  scopes: string; // JSON array of scope names
  key_hash: string; // hex SHA-256 of the secret part; the key itself is never stored
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One row (id 1): moved by triggers on every change to a key's authority (migration 0012, api-keys/key-cache.ts). */
export interface AuthVersionTable {
  id: number;
  version: number;
}

export interface FormGroupsTable {
  id: string;
  workspace_id: string;
  created_at: string;
  /** Bumped at the start of every publish: the row lock serialises publishes of one group. */
  lock_version: number;
  /** The highest version number ever given in the group: numbers are never reused, even after a draft is deleted. */
  last_version: number;
}

export type FormStatus = 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';

export interface FormsTable {
  id: string;
  workspace_id: string;
  form_group_id: string;
  version: number;
  status: FormStatus;
  name: string;
  description: string | null;
  type: 'SIGN_UP' | 'SURVEY';
  display: 'POPUP' | 'INLINE_EMBED' | null;
  field_mapping: string;
  settings: string;
  double_opt_in_email_id: string | null;
  seo_title: string | null;
  seo_description: string | null;
  seo_image_url: string | null;
  seo_favicon_url: string | null;
  slug: string | null;
  previous_version_id: string | null;
  html: string | null;
  html_deployed_at: string | null;
  html_validation: string | null;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  archived_at: string | null;
}

/** One row per slug in use: the slug belongs to exactly one form group (of any workspace: it is a public address). */
export interface FormSlugsTable {
  workspace_id: string;
  slug: string;
  form_group_id: string;
}

export interface TemplatesTable {
  id: string;
  workspace_id: string;
  name: string;
  subject: string | null;
  html: string | null;
  text: string | null;
  editor_content: string | null; // JSON (migration 0021)
  /** Unique per workspace (0034): what `POST /v1/emails` may name instead of the id. */
  alias: string | null;
  /** Increments with each change of subject, html or text (0034); every version is kept in template_versions. */
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** A template's content as it was at each version (0034): what a transactional email used. */
export interface TemplateVersionsTable {
  template_id: string;
  version: number;
  workspace_id: string;
  subject: string | null;
  html: string | null;
  text: string | null;
  created_at: string;
}

/** A transactional email (0034, sending/emails, docs/emails.md); its id is also its hidden broadcast row's. */
export interface EmailsTable {
  id: string;
  workspace_id: string;
  from_address: string;
  to_addresses: string; // JSON string[]
  cc_addresses: string; // JSON string[]
  bcc_addresses: string; // JSON string[]
  reply_to: string | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: string; // JSON Record<string, string>
  tags: string; // JSON string[]
  track_opens: number;
  track_clicks: number;
  template_id: string | null;
  template_version: number | null;
  api_key_id: string | null;
  idempotency_key: string | null;
  created_at: string;
}

/** A transactional email's attachment (0034): its bytes, BLOB (SQLite) or bytea (PostgreSQL). */
export interface EmailAttachmentsTable {
  email_id: string;
  position: number;
  workspace_id: string;
  filename: string;
  content_type: string;
  size: number;
  data: Buffer;
}

/** An image uploaded for emails (migration 0022, mail-setup/images): its bytes are served at /i/{id}. */
export interface ImagesTable {
  id: string;
  workspace_id: string;
  content_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  width: number;
  height: number;
  bytes: number;
  /** Hex SHA-256 of `data`: the ETag, and how an identical upload finds the image again. */
  sha256: string;
  name: string | null;
  /** BLOB (SQLite) or bytea (PostgreSQL). */
  data: Buffer;
  created_at: string;
}

export interface DomainsTable {
  id: string;
  workspace_id: string;
  name: string;
  status: 'PENDING' | 'VERIFIED' | 'FAILED';
  verification_token: string;
  dkim_selector: string;
  dkim_public_key: string; // base64 DER (SubjectPublicKeyInfo), as published in DNS
  dkim_private_key: string; // PKCS#8 PEM sealed with the installation's key (domains/domains.keys.ts); never leaves the service
  verification: string | null; // JSON: result per record of the last check
  created_at: string;
  verified_at: string | null;
  /** The host of its messages' links and pixel (a CNAME to the service), and when its CNAME was last verified (0025). */
  tracking_host: string | null;
  tracking_verified_at: string | null;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  key: string;
  request_hash: string;
  status_code: number | null; // null while the first request is in flight
  response_body: string | null;
  response_headers: string | null;
  created_at: string;
}

export type ContactStatus = 'SUBSCRIBED' | 'PENDING' | 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED';

export interface ContactsTable {
  id: string;
  workspace_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: string; // JSON object
  status: ContactStatus;
  created_at: string;
  updated_at: string;
  /** The contact's IANA time zone (0033); null: the workspace's settings.timezone. */
  timezone: string | null;
  /**
   * The contact's latest `email.sent`, human `email.opened` and human `email.clicked` (0035): kept by the writers of
   * those events (audience/contacts/contacts.engagement.ts), read by the segments' engagement conditions.
   */
  last_sent_at: string | null;
  last_opened_at: string | null;
  last_clicked_at: string | null;
}

export interface TopicsTable {
  id: string;
  workspace_id: string;
  name: string;
  default_subscription: 'OPT_IN' | 'OPT_OUT';
  created_at: string;
  updated_at: string;
}

export interface ContactTopicsTable {
  workspace_id: string;
  contact_id: string;
  topic_id: string;
  subscribed: number; // 0 or 1
  updated_at: string;
}

/** A contact's tag (0030): `tag_key` is the tag lower-cased, unique per contact; `tag` its first spelling. */
export interface ContactTagsTable {
  workspace_id: string;
  contact_id: string;
  tag_key: string;
  tag: string;
  position: number;
  created_at: string;
}

export type BulkAction = 'tag' | 'untag' | 'subscribe' | 'unsubscribe' | 'delete';

/** A bulk action on contacts (0030), walked by the worker a batch at a time from `cursor`. */
export interface ContactBulkJobsTable {
  id: string;
  workspace_id: string;
  action: BulkAction;
  tag: string | null;
  topic_id: string | null;
  ids: string | null; // JSON array of contact ids
  filter: string | null; // JSON, the segment grammar
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  matched: number;
  processed: number;
  failed: number;
  cursor: string | null;
  up_to: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface SegmentsTable {
  id: string;
  workspace_id: string;
  name: string;
  filter: string; // JSON, see segments/CONTEXT.md
  created_at: string;
  updated_at: string;
}

export interface ContactImportsTable {
  id: string;
  workspace_id: string;
  format: 'CSV' | 'NDJSON';
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  total: number;
  created: number;
  updated: number;
  skipped: number;
  errors: string; // JSON [{ line, reason }]
  error: string | null;
  created_at: string;
  finished_at: string | null;
  /** Touched while the import runs; a RUNNING job whose heartbeat stopped was interrupted. */
  heartbeat_at: string | null;
  /** Rows that asked for SUBSCRIBED or PENDING on a suppressed address (counted among created and updated). */
  suppressed: Generated<number>;
}

export type BroadcastStatus = 'DRAFT' | 'SCHEDULED' | 'SENDING' | 'PAUSED' | 'SENT' | 'CANCELED' | 'FAILED';

export interface BroadcastsTable {
  id: string;
  workspace_id: string;
  name: string;
  status: BroadcastStatus;
  from_address: string | null;
  reply_to: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  preview_text: string | null;
  editor_content: string | null; // JSON
  topic_id: string | null;
  segment_id: string | null;
  send_at: string | null;
  /** Local-time sending (0033, docs/sending.md): the wall-clock time each recipient gets it at in their zone; null: not local. */
  local_send_time: string | null;
  /** Local-time sending: when the scheduler starts it (the earliest zone's instant) instead of send_at. */
  local_start_at: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** Set when every recipient has a delivery row; until then a worker holds the lease and the cursor. */
  materialized_at: string | null;
  materialize_cursor: string | null;
  materialize_owner: string | null;
  materialize_lease_until: string | null;
  /** Why a PAUSED broadcast paused (the circuit breaker's rates, or "paused by hand"). */
  paused_reason: string | null;
  /** The circuit breaker weighs deliveries that ended after this: the last resume by hand (null: all of them). */
  breaker_since: string | null;
  /** Engagement tracking (docs/events.md): 1 on, 0 off; set from the workspace's defaults at creation. */
  track_opens: Generated<number>;
  track_clicks: Generated<number>;
  /** A message of an automation's send step (docs/automations.md): hidden from the broadcasts API. */
  automation_id: string | null;
  automation_step_id: string | null;
  /** The broadcast's A/B test (docs/ab-tests.md), JSON: variants, testPercent, winnerBy, waitMinutes; null: none. */
  ab_test: string | null;
  /** The variant id that won (set once, by the timer or by hand), and when. */
  ab_winner: string | null;
  ab_winner_at: string | null;
  /**
   * Who is in the test share and with which variant (migration 0040, broadcasts.ab.ts AbSelection), JSON: chosen once
   * over the whole audience when the first pass of the materialisation starts; null before.
   */
  ab_selection: string | null;
  /** A resend (POST /v1/broadcasts/{id}/resend, migration 0031): the original, to whom, and the instant it froze. */
  resend_of: string | null;
  resend_to: 'NON_OPENERS' | 'NON_CLICKERS' | null;
  resend_as_of: string | null;
  /** Shown in the workspace's public archive once SENT (0032, docs/archive.md): 1 on, 0 off. */
  archive: Generated<number>;
  /** A transactional email's hidden row (0034, docs/emails.md): 1; hidden from the broadcasts API, never completes. */
  transactional: Generated<number>;
}

export type DeliveryStatus = 'QUEUED' | 'SENDING' | 'PAUSED' | 'SENT' | 'FAILED' | 'BOUNCED' | 'CANCELED' | 'SKIPPED';

export interface DeliveriesTable {
  id: string;
  workspace_id: string;
  broadcast_id: string;
  contact_id: string | null;
  email: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  /** Local-time sending (0033): the recipient zone whose turn this delivery waits for; null for other sends. */
  local_zone: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  handed_off_at: string | null;
  last_error: string | null;
  smtp_response: string | null;
  message_id: string | null;
  unsubscribe_token: string;
  unsubscribed_at: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** What a bounce (synchronous or reported later) said: hard | soft | blocked | failed. */
  bounce_class: 'hard' | 'soft' | 'blocked' | 'failed' | null;
  bounced_at: string | null;
  soft_bounced_at: string | null;
  complained_at: string | null;
  /** The automation run whose send step this message is (null: a broadcast's recipient). */
  automation_run_id: string | null;
  /** An A/B broadcast's delivery: the variant whose message it gets, and its group (TEST share or the REST). */
  variant: string | null;
  ab_group: 'TEST' | 'REST' | null;
  /** The queue lane (0034): 1 for a transactional email's recipient, claimed before the broadcasts' (0). */
  lane: Generated<number>;
}

export interface SubmissionsTable {
  id: string;
  workspace_id: string;
  form_id: string;
  form_group_id: string;
  form_version: number;
  data: string; // JSON object
  contact_id: string | null;
  source: 'HOSTED' | 'EMBED' | 'API';
  created_at: string;
  /** ACCEPTED, or HELD for review (a sign-up burst) and then RELEASED or DISCARDED (migration 0015). */
  status: Generated<'ACCEPTED' | 'HELD' | 'RELEASED' | 'DISCARDED'>;
  /** JSON array of the burst rules a HELD submission tripped. */
  held_reasons: Generated<string | null>;
  reviewed_at: Generated<string | null>;
  /** Proof of consent (migration 0016): where the submission came from, cleared after SUBMISSION_RETENTION_DAYS. */
  ip: Generated<string | null>;
  user_agent: Generated<string | null>;
  /** The consent text the visitor accepted (`settings.appearance.consentText`), and when. */
  consent_text: Generated<string | null>;
  consent_accepted_at: Generated<string | null>;
}

/**
 * A public submission taken in during a spike and not yet made into its submission (migration 0017; submissions/CONTEXT.md).
 * `data`: the checked answers (JSON); `submission_id`: the id its submission will have.
 */
export interface SubmissionIntakeTable {
  id: Generated<number>;
  submission_id: string;
  workspace_id: string;
  form_id: string;
  source: 'HOSTED' | 'EMBED';
  data: string;
  consented: number;
  ip: string | null;
  user_agent: string | null;
  received_at: string;
  attempts: Generated<number>;
  next_attempt_at: string | null;
  last_error: string | null;
}

/** One signal of a public submission that bursts are counted by (protection/protection.bursts.ts). */
export interface SignupSignalsTable {
  id: string;
  workspace_id: string;
  kind: 'ip_range' | 'pattern' | 'mailbox' | 'domain';
  key: string;
  submission_id: string;
  created_at: string;
}

/** Single-use tokens already used (proof-of-work solutions, embed impression tokens), until they expire. */
export interface SpentTokensTable {
  kind: 'pow' | 'impression';
  token: string;
  workspace_id: string;
  expires_at: string;
}

/** A double opt-in link: single use, expiring; the worker emails it. */
export interface ConfirmationsTable {
  id: string;
  workspace_id: string;
  contact_id: string;
  /** Null: a re-subscription asked for on the unsubscribe page (migration 0028), not a form's sign-up. */
  form_id: string | null;
  token: string;
  expires_at: string;
  used_at: string | null;
  email_sent_at: string | null;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  /** JSON { firstName?, lastName?, properties? }: what the sign-up asked to change, applied on confirmation. */
  data: string | null;
}

export interface FormCountersTable {
  form_id: string;
  workspace_id: string;
  views: number;
  submissions: number;
  confirmations: number;
}

/** Sender health's counts of one closed UTC hour (migration 0039; sending/bounces/bounces.health.ts). */
export interface SenderHealthHoursTable {
  workspace_id: string;
  hour: string;
  sent: number;
  hard_bounces: number;
  refused: number;
  complaints: number;
}

/** The end of the hours counted into sender_health_hours, per workspace. */
export interface SenderHealthRollupsTable {
  workspace_id: string;
  since: string;
  until: string;
}

export interface SuppressionsTable {
  id: string;
  workspace_id: string;
  email: string;
  reason: 'BOUNCED' | 'COMPLAINED' | 'UNSUBSCRIBED' | 'MANUAL';
  delivery_id: string | null;
  broadcast_id: string | null;
  detail: string | null;
  created_at: string;
}

/** One change to a workspace's configuration: who did what to which thing (migration 0027, docs/audit-log.md). */
export interface AuditLogTable {
  id: string;
  workspace_id: string;
  occurred_at: string;
  /** user | apiKey | cli | system */
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  /** A stable dotted name: `api_key.created` (src/outbox/audit/audit.types.ts). */
  action: string;
  target_type: string;
  target_id: string | null;
  target_label: string | null;
  /** JSON: { field: { before, after } }, a secret field as { secret: true } (never its value); null when none. */
  changes: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** One row per event (docs/events.md), written in the transaction of the change it reports. */
export interface EventsTable {
  id: string;
  workspace_id: string;
  type: string;
  occurred_at: string;
  contact_id: string | null;
  broadcast_id: string | null;
  delivery_id: string | null;
  data: string; // JSON object
  /** Opens and clicks by a machine (docs/events.md): 1; kept, left out of unique counts. */
  machine: Generated<number>;
  /** Clicks: the link's URL. */
  url: string | null;
  /** 0 until the webhook dispatcher fanned the event out. */
  dispatched: Generated<number>;
  /** 0 until the automation intake looked at it (types automations react to); 1 for every other type. */
  routed: Generated<number>;
}

/** Opens and clicks of a delivery that reached the tracking writer (docs/tracking.md, "Replays and floods"). */
export interface TrackingHitsTable {
  delivery_id: string;
  workspace_id: string;
  opens: Generated<number>;
  clicks: Generated<number>;
}

/** A workspace's POST /v1/events/track use in the current minute (docs/automations.md, "Custom events"). */
export interface TrackQuotaTable {
  workspace_id: string;
  /** Unix time in minutes. */
  minute: number;
  events: number;
  /** bigint: the pg driver returns it as text (read it with Number()). */
  bytes: number;
}

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  event_types: string; // JSON array
  description: string | null;
  enabled: number;
  disabled_reason: string | null;
  /** Sealed with the server secret (lib/seal.ts); opened only to sign and to show it to read:webhooks. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'PENDING' | 'SENDING' | 'SUCCEEDED' | 'FAILED';

export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string | null;
  event_type: string;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  workspace_id: string;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** People of the console (src/access/users/CONTEXT.md). */
export type UserRole = 'owner' | 'admin' | 'editor' | 'viewer';

export interface UsersTable {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  role: UserRole;
  /** argon2id PHC string; null until an invitation is accepted. */
  password_hash: string | null;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
  /** The TOTP secret sealed with the installation's key (lib/seal.ts, purpose 'user totp secret', context the user's id). */
  totp_secret: string | null;
  /** When two-factor sign-in was confirmed; null with a secret: an enrolment waiting for its first code. */
  totp_enrolled_at: string | null;
  /** The last TOTP time step a code was accepted for: codes of that step or earlier are refused (no replay). */
  totp_last_step: number | string | null;
}

/** Single-use recovery codes of two-factor sign-in: only their HMAC is stored. */
export interface UserRecoveryCodesTable {
  id: string;
  workspace_id: string;
  user_id: string;
  code_hash: string;
  created_at: string;
  used_at: string | null;
}

export interface SessionsTable {
  id: string;
  workspace_id: string;
  user_id: string;
  /** hex SHA-256 of the cookie's token; the token itself is never stored. */
  token_hash: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  role: UserRole;
  token_hash: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
}

export interface PasswordResetsTable {
  id: string;
  workspace_id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  auth_version: AuthVersionTable;
  form_groups: FormGroupsTable;
  forms: FormsTable;
  form_slugs: FormSlugsTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  emails: EmailsTable;
  email_attachments: EmailAttachmentsTable;
  images: ImagesTable;
  domains: DomainsTable;
  idempotency_keys: IdempotencyKeysTable;
  contacts: ContactsTable;
  topics: TopicsTable;
  contact_topics: ContactTopicsTable;
  contact_tags: ContactTagsTable;
  contact_bulk_jobs: ContactBulkJobsTable;
  segments: SegmentsTable;
  contact_imports: ContactImportsTable;
  broadcasts: BroadcastsTable;
  deliveries: DeliveriesTable;
  submissions: SubmissionsTable;
  submission_intake: SubmissionIntakeTable;
  signup_signals: SignupSignalsTable;
  spent_tokens: SpentTokensTable;
  confirmations: ConfirmationsTable;
  form_counters: FormCountersTable;
  suppressions: SuppressionsTable;
  sender_health_hours: SenderHealthHoursTable;
  sender_health_rollups: SenderHealthRollupsTable;
  server_secrets: ServerSecretsTable;
  installation_keys: InstallationKeysTable;
  inbound_messages: InboundMessagesTable;
  dmarc_reports: DmarcReportsTable;
  dmarc_rows: DmarcRowsTable;
  events: EventsTable;
  audit_log: AuditLogTable;
  tracking_hits: TrackingHitsTable;
  track_quota: TrackQuotaTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  users: UsersTable;
  user_recovery_codes: UserRecoveryCodesTable;
  sessions: SessionsTable;
  invitations: InvitationsTable;
  password_resets: PasswordResetsTable;
  automations: AutomationsTable;
  automation_versions: AutomationVersionsTable;
  automation_runs: AutomationRunsTable;
  automation_run_steps: AutomationRunStepsTable;
  automation_segment_members: AutomationSegmentMembersTable;
}

export type AutomationStatus = 'DRAFT' | 'ACTIVE' | 'PAUSED';
export type AutomationRunStatus = 'ACTIVE' | 'WAITING' | 'COMPLETED' | 'EXITED';

export interface AutomationsTable {
  id: string;
  workspace_id: string;
  name: string;
  status: AutomationStatus;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface AutomationVersionsTable {
  automation_id: string;
  version: number;
  workspace_id: string;
  trigger: string; // JSON
  steps: string; // JSON
  messages: string | null; // JSON { stepId: broadcastId }
  created_at: string;
}

export interface AutomationRunsTable {
  id: string;
  workspace_id: string;
  automation_id: string;
  version: number;
  contact_id: string;
  status: AutomationRunStatus;
  step_id: string | null;
  step_started_at: string | null;
  due_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  failures: Generated<number>;
  trigger_event_id: string | null;
  entered_at: string;
  updated_at: string;
  finished_at: string | null;
  exit_reason: string | null;
  /** JSON array of the automation ids whose runs' steps led to this run, oldest first; null: started otherwise (0018). */
  cause_chain: string | null;
}

export interface AutomationRunStepsTable {
  run_id: string;
  step_id: string;
  workspace_id: string;
  automation_id: string;
  entered_at: string;
  completed_at: string | null;
  arm: string | null;
  delivery_id: string | null;
}

export interface AutomationSegmentMembersTable {
  automation_id: string;
  contact_id: string;
}
