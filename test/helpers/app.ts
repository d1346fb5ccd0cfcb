import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { buildApp } from '../../src/app.js';
import { PG_URL, testDatabases, type TestDatabase } from './db.js';
import { TEST_SECRET } from './secret.js';

export interface TestWorkspace {
  id: string;
  key: string;
}

export interface Harness {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly dbName: TestDatabase['name'];
  /** A new workspace and its admin key: tests isolate themselves by workspace. */
  workspace(name?: string): Promise<TestWorkspace>;
  /** A key of the workspace with just these scopes. */
  key(ws: TestWorkspace, scopes: string[]): Promise<string>;
  /** app.inject with the key as a Bearer token and `body` sent as JSON. */
  call(
    key: string | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
}

/**
 * Runs `suite` once per test database (SQLite, and PostgreSQL when configured) against a real app.
 * Without TEST_DATABASE_URL the PostgreSQL run is declared skipped, so it shows in the report.
 */
export function describeApi(title: string, suite: (h: Harness) => void, opts: { publicUrl?: string } = {}): void {
  const names: TestDatabase['name'][] = ['sqlite', 'postgres'];
  for (const name of names) {
    const target = testDatabases.find((d) => d.name === name);
    const describeFn = target ? describe : describe.skip;
    describeFn(`${title} [${name}${!target && !PG_URL ? ': TEST_DATABASE_URL not set' : ''}]`, () => {
      let app: FastifyInstance;
      let db: Db;
      let drop: () => Promise<void>;
      beforeAll(async () => {
        const opened = await target!.open();
        db = opened.db;
        drop = opened.drop;
        app = await buildApp({
          db,
          config: { logLevel: 'silent', publicUrl: opts.publicUrl ?? 'http://localhost:3000', secret: TEST_SECRET },
          logger: false,
        });
        await app.ready();
      });
      afterAll(async () => {
        await app?.close();
        await drop?.();
      });
      const harness: Harness = {
        get app() {
          return app;
        },
        get db() {
          return db;
        },
        dbName: name,
        async workspace(wsName = 'Test workspace') {
          const { workspace, apiKey } = await app.services.workspaces.createWithAdminKey(wsName);
          return { id: workspace.id, key: apiKey.key };
        },
        async key(ws, scopes) {
          return (await app.services.apiKeys.create(ws.id, { name: 'test', scopes })).key;
        },
        call(key, method, url, body, headers = {}) {
          return app.inject({
            method,
            url,
            headers: {
              ...(key ? { authorization: `Bearer ${key}` } : {}),
              ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
              ...headers,
            },
            ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
          });
        },
      };
      suite(harness);
    });
  }
}
