/**
 * Serving the built console (src/console/console.routes.ts): index.html for /app and every client route,
 * with no-cache and the CSP; hashed assets with a year's cache; nothing outside the assets folder, whatever
 * the path says; a clear 503 when the console is not built.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleRoutes } from '../../src/console/console.routes.js';

let dir: string;
let app: FastifyInstance;
let bare: FastifyInstance;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-console-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Formcast</title><div id="root"></div>');
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.css'), 'body{}');
  fs.mkdirSync(path.join(dir, 'assets', 'sub'));
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'not an asset');
  app = Fastify();
  // An exact route registered by someone else wins over the console's wildcard.
  app.get('/app/login', async () => 'login page');
  await app.register(consoleRoutes, { dir });
  bare = Fastify();
  await bare.register(consoleRoutes, { dir: path.join(dir, 'missing') });
});

afterAll(async () => {
  await app.close();
  await bare.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the console', () => {
  it('serves index.html for /app and client routes, uncached, with the CSP', async () => {
    for (const url of ['/app', '/app/', '/app/forms', '/app/forms/frm_123', '/app/settings?x=1']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('<div id="root">');
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });

  it('leaves exact routes to their owners', async () => {
    const res = await app.inject({ url: '/app/login' });
    expect(res.body).toBe('login page');
  });

  it('serves hashed assets with a year of cache and the right type', async () => {
    const js = await app.inject({ url: '/app/assets/index-AbC123.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toBe('console.log(1)');
    const css = await app.inject({ url: '/app/assets/index-AbC123.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const head = await app.inject({ method: 'HEAD', url: '/app/assets/index-AbC123.js' });
    expect(head.statusCode).toBe(200);
  });

  it('answers 404 for missing assets and never reads outside the assets folder', async () => {
    const attempts = [
      '/app/assets/nope.js',
      '/app/assets/',
      '/app/assets/sub',
      '/app/assets/../secret.txt',
      '/app/assets/..%2fsecret.txt',
      '/app/assets/%2e%2e%2fsecret.txt',
      '/app/assets/%2e%2e/secret.txt',
      '/app/assets/..%5csecret.txt',
      '/app/assets/....//secret.txt',
      '/app/assets/.%2e/.%2e/package.json',
      '/app/assets/%252e%252e%252fsecret.txt',
      '/app/assets/index-AbC123.js%00.txt',
      '/app/assets/sub/../index-AbC123.js',
      `/app/assets/${encodeURIComponent(path.join(dir, 'secret.txt'))}`,
    ];
    for (const url of attempts) {
      const res = await app.inject({ url });
      expect(res.body, url).not.toContain('not an asset');
      if (url.startsWith('/app/assets/')) {
        // A 404 from the asset route, or (for paths that normalise to another address) what that address serves.
        expect([404, 200], url).toContain(res.statusCode);
        if (res.statusCode === 200) expect(['console.log(1)', 'index'], url).toContain(res.body.includes('<div id="root">') ? 'index' : res.body);
      }
    }
    expect((await app.inject({ url: '/app/assets/nope.js' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/app/assets/..%2fsecret.txt' })).statusCode).toBe(404);
  });

  it('says how to build the console when it is missing', async () => {
    const res = await bare.inject({ url: '/app/forms' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('npm run build:console');
  });
});
