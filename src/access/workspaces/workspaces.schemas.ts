import { Type, type Static } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { LOCALES, type Locale } from '../../pages/i18n.js';

export { LOCALES, type Locale };

/** Engagement tracking (docs/tracking.md): opens by a pixel, clicks by rewritten links. */
export const TrackingSchema = Type.Object(
  {
    opens: Type.Boolean({ description: 'add the open pixel' }),
    clicks: Type.Boolean({ description: 'rewrite http(s) links to count clicks' }),
  },
  { additionalProperties: false },
);
export type Tracking = Static<typeof TrackingSchema>;

export const WorkspaceSettingsSchema = Type.Object({
  postalAddress: Nullable(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: "the sender's postal address, shown in the footer of every broadcast (CAN-SPAM requires one)",
    }),
  ),
  locale: StringEnum(LOCALES, { description: 'language of the footer and the public pages; default en' }),
  defaultFrom: Nullable(
    Type.String({
      minLength: 3,
      maxLength: 998,
      description:
        'sender of system mail (double opt-in confirmations, invitations) and of a new broadcast created without `from`: `addr@domain` or `Name <addr@domain>` on a verified domain; null: system mail from no-reply@ the oldest verified domain, named after the workspace, and new broadcasts without a sender',
    }),
  ),
  tracking: Type.Object(TrackingSchema.properties, {
    additionalProperties: false,
    description: "the default of new broadcasts' `tracking`; both true unless set",
  }),
  brandColor: Nullable(
    Type.String({
      pattern: '^#[0-9a-fA-F]{6}$',
      description:
        "the workspace's brand colour as #rrggbb: the email editor gives it to a new document (its buttons and links); null: none",
    }),
  ),
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      "the workspace's IANA time zone (e.g. Europe/Berlin); default UTC. Local-time sending (docs/sending.md) reads `sendAt` in it and sends in it to contacts without a `timezone` of their own; 422 for a name that is no IANA zone",
  }),
  requireTwoFactor: Type.Boolean({
    description:
      'every person of the workspace signs in with two-factor sign-in (TOTP): one without it is sent to set it up after signing in and can do nothing else until then; false unless set. A person turning it on must have it on already (409 invalid_state)',
  }),
});
export type WorkspaceSettings = Static<typeof WorkspaceSettingsSchema>;

export const DEFAULT_SETTINGS: WorkspaceSettings = {
  postalAddress: null,
  locale: 'en',
  defaultFrom: null,
  tracking: { opens: true, clicks: true },
  brandColor: null,
  timezone: 'UTC',
  requireTwoFactor: false,
};

/** A workspace's public address (`/archive/{slug}`): the pattern of a form's slug (lower-case words joined by hyphens). */
export const WORKSPACE_SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';

export const WorkspaceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Timestamp,
  slug: Nullable(
    Type.String({
      description:
        "the workspace's public archive address, `/archive/{slug}` (docs/archive.md); unique across the installation; null: no public archive",
    }),
  ),
  settings: WorkspaceSettingsSchema,
});
export type WorkspaceView = Static<typeof WorkspaceSchema>;

/** PUT /v1/workspace: `name`, `slug`, and `settings` keys, each optional; a key of settings given replaces the stored value, null clears it. */
export const UpdateWorkspaceBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    slug: Type.Optional(
      Nullable(
        Type.String({
          pattern: WORKSPACE_SLUG_PATTERN,
          minLength: 2,
          maxLength: 100,
          description:
            'the public archive address `/archive/{slug}`: lower-case letters and digits in words joined by hyphens; taken by another workspace: 409 slug_taken; null: no archive',
        }),
      ),
    ),
    settings: Type.Optional(Type.Partial(WorkspaceSettingsSchema, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type UpdateWorkspaceInput = Static<typeof UpdateWorkspaceBody>;
