import crypto from 'node:crypto';

/**
 * The installation's key of the tests (db/secrets.ts): the SECRET_KEY of every process a test starts
 * (formcast-process.ts, TEST_PROCESS_DEFAULTS), so that what a test makes in its own process with TEST_SECRET (a
 * domain's sealed DKIM key, a webhook's sealed secret, a token) is what those processes open and verify.
 */
export const TEST_SECRET_KEY = 'formcast tests: the installation key of the test apps and processes';

/** The server secret of the test apps and pipelines: SECRET_KEY's, as production derives it. */
export const TEST_SECRET = crypto.createHash('sha256').update(TEST_SECRET_KEY).digest();
