import crypto from 'node:crypto';

/** The server secret of the test apps and pipelines (production loads one: db/secrets.ts). */
export const TEST_SECRET = crypto.createHash('sha256').update('formcast tests').digest();
