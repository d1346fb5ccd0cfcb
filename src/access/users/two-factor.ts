import crypto from 'node:crypto';

// otplib and qrcode load with the first use, not at start (as argon2 does: passwords.ts).
const otplib = () => import('otplib');

/**
 * The parts of two-factor sign-in that touch no database (docs/security.md, "Two-factor sign-in"): TOTP as
 * authenticator apps do it (RFC 6238: SHA-1, 6 digits, 30-second steps, by otplib), the enrolment's QR code (an SVG
 * data URL made here, no third party sees the secret), and single-use recovery codes.
 */

/** Seconds a TOTP code lasts. */
export const TOTP_PERIOD = 30;
/** A code of the step before or after the current one is accepted too (a clock a little off, a code typed late). */
const TOLERANCE_SECONDS = TOTP_PERIOD;
export const RECOVERY_CODES = 10;
/** Recovery codes: 12 characters of a 32-letter alphabet without look-alikes (60 bits), shown as xxxx-xxxx-xxxx. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_LENGTH = 12;

/** A new TOTP secret: 20 random bytes (160 bits) in Base32, as authenticator apps take it. */
export async function newTotpSecret(): Promise<string> {
  return (await otplib()).generateSecret({ length: 20 });
}

/** The otpauth:// address an authenticator app reads from the QR code. */
export async function totpUri(secret: string, account: string, issuer: string): Promise<string> {
  return (await otplib()).generateURI({ issuer, label: account, secret });
}

/** The QR code of an otpauth:// address, as an SVG data URL (for an <img>, under the console's CSP). */
export async function qrDataUrl(uri: string): Promise<string> {
  const QRCode = (await import('qrcode')).default;
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** A code as typed: digits only (spaces and dashes, which some apps show, go). */
export function totpCodeOf(input: string): string | null {
  const digits = input.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(digits) ? digits : null;
}

/**
 * The time step a code is valid for now (± one step), or null. `after`: the last step a code was accepted for; a code
 * of that step or an earlier one is refused (the caller records the new step atomically: useTotpStep).
 */
export async function totpStep(
  secret: string,
  code: string,
  after: number | null,
  now = Date.now(),
): Promise<number | null> {
  const epoch = Math.floor(now / 1000);
  const current = Math.floor(epoch / TOTP_PERIOD);
  try {
    const result = await (
      await otplib()
    ).verify({
      secret,
      token: code,
      epoch,
      epochTolerance: TOLERANCE_SECONDS,
      // otplib refuses a bound beyond the window (a clock turned back): then no code of the window is accepted.
      ...(after !== null ? { afterTimeStep: Math.min(after, current + 1) } : {}),
    });
    if (!result.valid) return null;
    const step = (result as { timeStep?: number }).timeStep ?? current + ((result as { delta?: number }).delta ?? 0);
    return after !== null && step <= after ? null : step;
  } catch {
    return null;
  }
}

/** New recovery codes, as shown to the person (xxxx-xxxx-xxxx). */
export function newRecoveryCodes(n = RECOVERY_CODES): string[] {
  const codes = new Set<string>();
  while (codes.size < n) {
    let raw = '';
    for (let i = 0; i < RECOVERY_LENGTH; i++) raw += RECOVERY_ALPHABET[crypto.randomInt(RECOVERY_ALPHABET.length)];
    codes.add(`${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8)}`);
  }
  return [...codes];
}

/** A recovery code as typed, normalised (case, spaces and dashes do not matter), or null when it cannot be one. */
export function recoveryCodeOf(input: string): string | null {
  const raw = input.toLowerCase().replace(/[\s-]/g, '');
  if (raw.length !== RECOVERY_LENGTH || [...raw].some((c) => !RECOVERY_ALPHABET.includes(c))) return null;
  return raw;
}

/**
 * What is stored of a recovery code: HMAC-SHA256 under a key derived from the installation's key, bound to the
 * user, so that a copy of the database alone cannot test guesses (db/secrets.ts).
 */
export function recoveryCodeHash(key: Buffer, userId: string, normalised: string): string {
  return crypto.createHmac('sha256', key).update(`${userId}\n${normalised}`).digest('hex');
}
