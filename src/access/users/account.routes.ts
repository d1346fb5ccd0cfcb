import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { V1 } from '../../http/types.js';
import type { AccountService } from './account.service.js';
import {
  ChangePasswordBody,
  PasswordChangedSchema,
  ProfileSchema,
  RecoveryCodesSchema,
  TwoFactorCheckBody,
  TwoFactorConfirmBody,
  TwoFactorSetupBody,
  TwoFactorSetupSchema,
  TwoFactorStatusSchema,
  UpdateProfileBody,
} from './account.schemas.js';
import type { Meta } from './users.service.js';

function meta(req: FastifyRequest): Meta {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

/**
 * The signed-in person's own account (docs/console.md, "Your profile"; docs/security.md): name, email, password and
 * two-factor sign-in. For console sessions; an API key is no person (403 forbidden).
 */
export async function accountRoutes(app: V1, { account }: { account: AccountService }): Promise<void> {
  app.put(
    '/me',
    {
      schema: { body: UpdateProfileBody, response: { 200: ProfileSchema } },
      config: { scope: 'any', errors: ['user_exists', 'rate_limited', 'forbidden'] },
    },
    (req) => account.updateProfile(req.auth, req.body, meta(req)),
  );

  app.post(
    '/me/password',
    {
      schema: { body: ChangePasswordBody, response: { 200: PasswordChangedSchema } },
      config: { scope: 'any', errors: ['rate_limited', 'forbidden'] },
    },
    (req) => account.changePassword(req.auth, req.body, meta(req)),
  );

  const setup = { scope: 'any' as const, twoFactorSetup: true };

  app.get(
    '/me/two-factor',
    {
      schema: { response: { 200: TwoFactorStatusSchema } },
      config: { ...setup, errors: ['forbidden'] },
    },
    (req) => {
      if (!req.auth.userId) return { enabled: false, enrolledAt: null, recoveryCodesLeft: 0, required: false };
      return account.twoFactorStatus(req.auth.workspaceId, req.auth.userId);
    },
  );

  app.post(
    '/me/two-factor/setup',
    {
      schema: { body: TwoFactorSetupBody, response: { 200: TwoFactorSetupSchema } },
      config: { ...setup, errors: ['invalid_state', 'rate_limited', 'forbidden'] },
    },
    (req) => account.startTwoFactor(req.auth, req.body, meta(req)),
  );

  app.post(
    '/me/two-factor/confirm',
    {
      schema: { body: TwoFactorConfirmBody, response: { 200: RecoveryCodesSchema } },
      config: { ...setup, errors: ['invalid_state', 'rate_limited', 'forbidden'] },
    },
    (req) => account.confirmTwoFactor(req.auth, req.body, meta(req)),
  );

  app.post(
    '/me/two-factor/disable',
    {
      schema: { body: TwoFactorCheckBody, response: { 204: Type.Null() } },
      config: { scope: 'any', errors: ['invalid_state', 'rate_limited', 'forbidden'] },
    },
    async (req, reply) => {
      await account.disableTwoFactor(req.auth, req.body, meta(req));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/me/two-factor/recovery-codes',
    {
      schema: { body: TwoFactorCheckBody, response: { 200: RecoveryCodesSchema } },
      config: { scope: 'any', errors: ['invalid_state', 'rate_limited', 'forbidden'] },
    },
    (req) => account.regenerateRecoveryCodes(req.auth, req.body, meta(req)),
  );
}
