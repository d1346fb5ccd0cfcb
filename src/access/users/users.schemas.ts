import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../../http/schema-helpers.js';
import { INTERNAL_SCOPES, SCOPES } from '../../http/scopes.js';
import { ROLES } from './roles.js';

export const RoleSchema = StringEnum(ROLES, {
  description:
    'viewer reads; editor also writes forms, contacts and broadcasts; admin also domains, webhooks, keys and people; owner everything, the workspace and owners included',
});

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  role: RoleSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastLoginAt: Nullable(Timestamp),
});

export const SessionInfoSchema = Type.Object({
  user: Nullable(
    Type.Object({
      id: Type.String(),
      email: Type.String(),
      name: Nullable(Type.String()),
      role: RoleSchema,
      createdAt: Timestamp,
      lastLoginAt: Nullable(Timestamp),
    }),
  ),
  workspace: Type.Object({ id: Type.String(), name: Type.String() }),
  role: Nullable(RoleSchema),
  scopes: Type.Array(Type.String(), {
    description: 'what the caller holds (grants: `admin` all, `write:X` also `read:X`)',
  }),
  grants: Type.Array(StringEnum([...SCOPES, ...INTERNAL_SCOPES]), {
    description:
      "every scope the caller's scopes grant, by the rule the API checks them with: what the caller may do. The console shows or hides actions by it",
  }),
  managers: Type.Array(Type.Object({ name: Nullable(Type.String()), email: Type.String(), role: RoleSchema }), {
    description:
      "up to 5 of the workspace's owners and admins, owners first: whom to ask for what the role does not allow (empty for an API key)",
  }),
  csrfToken: Nullable(
    Type.String({ description: 'send it as X-CSRF-Token on every POST, PUT, PATCH and DELETE of the session' }),
  ),
  expiresAt: Nullable(Timestamp),
  twoFactor: Nullable(
    Type.Object(
      {
        enabled: Type.Boolean({ description: 'the person signs in with two-factor sign-in' }),
        required: Type.Boolean({ description: 'the workspace requires it (settings.requireTwoFactor)' }),
      },
      {
        description:
          "a session's two-factor sign-in; required and not enabled: only the set-up answers (403 two_factor_required elsewhere)",
      },
    ),
  ),
});

export const SessionSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  expiresAt: Timestamp,
  ip: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  current: Type.Boolean({ description: 'the session of this request' }),
});

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    role: Type.Optional(RoleSchema),
  },
  { additionalProperties: false },
);

const invitationFields = {
  id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  status: StringEnum(['PENDING', 'ACCEPTED', 'REVOKED', 'EXPIRED'] as const),
  invitedBy: Nullable(Type.String({ description: "the inviting user's id; null when invited with an API key" })),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  acceptedAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
};

export const InvitationSchema = Type.Object(invitationFields);

export const CreatedInvitationSchema = Type.Object({
  ...invitationFields,
  emailSent: Type.Boolean({
    description:
      'false when the process has no mail transport or the workspace no verified sending domain: the invitation exists, but nobody was told',
  }),
});

export const CreateInvitationBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    role: RoleSchema,
  },
  { additionalProperties: false },
);
