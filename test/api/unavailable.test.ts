import { describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connection.js';
import { buildApp } from '../../src/app.js';
import { TEST_SECRET } from '../helpers/secret.js';

describe('database unreachable', () => {
  it('answers 503 unavailable with Retry-After (never a 500), and /readyz fails while /healthz stays up', async () => {
    // Nothing listens on port 1: every query fails to connect.
    const db = connect('postgres://postgres@127.0.0.1:1/none', { poolSize: 1 });
    const app = await buildApp({
      db,
      config: { logLevel: 'silent', publicUrl: 'http://localhost', secret: TEST_SECRET },
      logger: false,
    });
    try {
      const key = `fc_${'0'.repeat(26)}_${'A'.repeat(43)}`;
      const res = await app.inject({ method: 'GET', url: '/v1/forms', headers: { authorization: `Bearer ${key}` } });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 503, code: 'unavailable' });
      expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await db.close();
    }
  });
});
