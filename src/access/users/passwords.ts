import type * as Argon2 from '@node-rs/argon2';
import type { Algorithm } from '@node-rs/argon2';
import { lazyRequire } from '../../lib/lazy.js';

// The native argon2 module loads with the first sign-in, not at start (lib/lazy.ts).
const argon2 = lazyRequire<typeof Argon2>('@node-rs/argon2');
import { validationFailed } from '../../errors/errors.js';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 1000;

/** argon2id with the library's defaults (OWASP's m=19 MiB, t=2, p=1); the PHC string carries them. */
// Algorithm is a const enum, absent at run time under tsx: its value (Argon2id = 2) is spelled out.
const OPTIONS = { algorithm: 2 as Algorithm.Argon2id };

/** What is wrong with a new password ("must be at least 10 characters"), or null. Lengths count code points, like every length of the API. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'is required';
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}

export function checkPassword(password: unknown, path = '/password'): string {
  const problem = passwordProblem(password);
  if (problem) throw validationFailed([{ path, message: problem }]);
  return password as string;
}

export function hashPassword(password: string): Promise<string> {
  return argon2().hash(password, OPTIONS);
}

let dummy: Promise<string> | null = null;

/**
 * Verifies a password against a PHC string; without one (an unknown address, a user who never set a
 * password) it verifies against a dummy hash, so a miss costs what a wrong password costs.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX * 4) return false;
  if (!stored) {
    dummy ??= argon2().hash('formcast-dummy-password', OPTIONS);
    await argon2()
      .verify(await dummy, password)
      .catch(() => false);
    return false;
  }
  try {
    return await argon2().verify(stored, password);
  } catch {
    return false;
  }
}
