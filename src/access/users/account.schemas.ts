import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schema-helpers.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.js';
import { UserSchema } from './users.schemas.js';

/** One's own account: the profile page of the console (docs/console.md, "Your profile"), for a console session. */

const CurrentPassword = Type.String({
  minLength: 1,
  maxLength: PASSWORD_MAX * 4,
  description: 'the current password (checked: 5 wrong ones per person in 15 minutes, then 429)',
});
const Code = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'the 6-digit code the authenticator app shows',
});

export const UpdateProfileBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    email: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 320,
        description: 'the new sign-in address: free in the workspace (409 user_exists); needs `currentPassword`',
      }),
    ),
    currentPassword: Type.Optional(CurrentPassword),
  },
  { additionalProperties: false },
);

export const ProfileSchema = Type.Object({
  ...UserSchema.properties,
  emailChanged: Type.Boolean({
    description: 'the address changed: the old one was told (when the workspace can send mail)',
  }),
});

export const ChangePasswordBody = Type.Object(
  {
    currentPassword: CurrentPassword,
    newPassword: Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
  },
  { additionalProperties: false },
);

export const PasswordChangedSchema = Type.Object({
  sessionsEnded: Type.Integer({ description: 'the other sessions of the person that were signed out' }),
});

export const TwoFactorStatusSchema = Type.Object({
  enabled: Type.Boolean(),
  enrolledAt: Nullable(Timestamp),
  recoveryCodesLeft: Type.Integer({ description: 'unused recovery codes' }),
  required: Type.Boolean({ description: 'the workspace requires two-factor sign-in (settings.requireTwoFactor)' }),
});

export const TwoFactorSetupBody = Type.Object({ currentPassword: CurrentPassword }, { additionalProperties: false });

export const TwoFactorSetupSchema = Type.Object({
  secret: Type.String({ description: 'the TOTP secret in Base32, to type into an app that cannot scan' }),
  uri: Type.String({ description: 'the otpauth:// address the QR code holds' }),
  qrCode: Type.String({ description: 'the QR code as a data:image/svg+xml URL' }),
});

export const TwoFactorConfirmBody = Type.Object({ code: Code }, { additionalProperties: false });

export const RecoveryCodesSchema = Type.Object({
  recoveryCodes: Type.Array(Type.String(), {
    description: 'single-use codes that stand in for the app: shown this once, stored only as hashes',
  }),
});

export const TwoFactorCheckBody = Type.Object(
  {
    currentPassword: CurrentPassword,
    code: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'a code of the app (turning off: or an unused recovery code)',
    }),
  },
  { additionalProperties: false },
);
