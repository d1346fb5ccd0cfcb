import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Db } from '../../src/db/connection.js';
import { createMailer, type Mailer } from '../../src/mail/transport.js';
import { PG_URL, testDatabases, type TestDatabase } from '../helpers/db.js';
import { startDnsServer } from '../helpers/dns.js';
import { TEST_SECRET } from '../helpers/secret.js';

export interface SdkServer {
  readonly app: FastifyInstance;
  readonly db: Db;
  /** http://127.0.0.1:<port>: the app listening on loopback, as `npm start` would. */
  readonly baseUrl: string;
  /** A new workspace and its admin key. */
  workspace(name?: string): Promise<{ id: string; key: string }>;
  key(workspaceId: string, scopes: string[]): Promise<string>;
}

/**
 * Runs `suite` against the real app listening on a loopback port, once per test database (SQLite, and PostgreSQL
 * when TEST_DATABASE_URL is set). Mail goes to an outbox directory; DNS to a local server that knows no name;
 * webhooks may go to http:// on loopback (the receivers the tests start).
 */
export function describeSdk(title: string, suite: (s: SdkServer) => void): void {
  for (const name of ['sqlite', 'postgres'] as TestDatabase['name'][]) {
    const target = testDatabases.find((d) => d.name === name);
    (target ? describe : describe.skip)(
      `${title} [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`,
      () => {
        let app: FastifyInstance;
        let db: Db;
        let drop: () => Promise<void>;
        let mailer: Mailer;
        let dns: Awaited<ReturnType<typeof startDnsServer>>;
        let outbox: string;
        let baseUrl = '';
        beforeAll(async () => {
          ({ db, drop } = await target!.open());
          dns = await startDnsServer();
          outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-sdk-'));
          mailer = createMailer({ smtpUrl: null, outboxDir: outbox, maxConnections: 1, rateLimit: 0 });
          app = await buildApp({
            db,
            mailer,
            logger: false,
            config: {
              logLevel: 'silent',
              publicUrl: 'http://localhost:3000',
              secret: TEST_SECRET,
              dnsServers: [dns.address],
              dnsTimeoutMs: 2000,
              webhooks: { allowHttp: true, allowPrivate: true },
            },
          });
          await app.listen({ port: 0, host: '127.0.0.1' });
          baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
        });
        afterAll(async () => {
          await app?.close();
          await mailer?.close();
          await dns?.close();
          await drop?.();
          if (outbox) fs.rmSync(outbox, { recursive: true, force: true });
        });
        suite({
          get app() {
            return app;
          },
          get db() {
            return db;
          },
          get baseUrl() {
            return baseUrl;
          },
          async workspace(wsName = 'SDK workspace') {
            const { workspace, apiKey } = await app.services.workspaces.createWithAdminKey(wsName);
            return { id: workspace.id, key: apiKey.key };
          },
          async key(workspaceId, scopes) {
            return (await app.services.apiKeys.create(workspaceId, { name: 'sdk test', scopes })).key;
          },
        });
      },
    );
  }
}
