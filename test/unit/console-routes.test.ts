/**
 * Serving the built console (src/access/console/console.routes.ts): index.html for /app and every client route,
 * with no-cache and the CSP (a fresh style nonce per answer, in the header and the page's meta); hashed assets
 * with a year's cache; the build's .br/.gz twins chosen by Accept-Encoding; nothing outside the assets folder,
 * whatever the path says; a clear 503 when the console is not built.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleCsp, consoleRoutes } from '../../src/access/console/console.routes.js';
import { negotiateEncoding } from '../../src/lib/compress.js';

const BIG_JS = `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word${i}`))};\n`;
const INDEX = `<!doctype html><html><head><meta property="csp-nonce" nonce="__CSP_NONCE__"><title>Formcast</title></head><body><div id="root"></div>${'<!-- padding -->'.repeat(40)}</body></html>`;

let dir: string;
let app: FastifyInstance;
let bare: FastifyInstance;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fc-console-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
  // As the build leaves them (console/vite.config.ts): an asset with its Brotli and gzip twins.
  fs.writeFileSync(path.join(dir, 'assets', 'big-XyZ789.js'), BIG_JS);
  fs.writeFileSync(path.join(dir, 'assets', 'big-XyZ789.js.br'), zlib.brotliCompressSync(BIG_JS));
  fs.writeFileSync(path.join(dir, 'assets', 'big-XyZ789.js.gz'), zlib.gzipSync(BIG_JS));
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
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('<div id="root">');
      const nonce = /nonce="([^"]+)"/.exec(res.body)![1]!;
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{24}$/);
      expect(res.headers['content-security-policy']).toBe(consoleCsp(nonce));
    }
    const csp = consoleCsp('n0nce');
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self' 'nonce-n0nce';");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('gives every answer of index.html a fresh nonce', async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({ url: '/app/forms' });
      expect(res.body).not.toContain('__CSP_NONCE__');
      const nonce = /nonce="([^"]+)"/.exec(res.body)![1]!;
      expect(res.headers['content-security-policy']).toContain(`'nonce-${nonce}'`);
      nonces.add(nonce);
    }
    expect(nonces.size).toBe(5);
  });

  it('sends the pre-compressed twin the request accepts, with Vary: Accept-Encoding', async () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      ['gzip, deflate, br, zstd', 'br'],
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['br;q=0, gzip;q=0.1', 'gzip'],
      ['*', 'br'],
      ['identity', undefined],
      ['gzip;q=0, br;q=0', undefined],
      [undefined, undefined],
    ];
    for (const [accept, encoding] of cases) {
      const res = await app.inject({
        url: '/app/assets/big-XyZ789.js',
        headers: accept === undefined ? {} : { 'accept-encoding': accept },
      });
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['vary'], accept).toBe('Accept-Encoding');
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      const body = res.rawPayload;
      expect(Number(res.headers['content-length']), accept).toBe(body.length);
      const text =
        encoding === 'br'
          ? zlib.brotliDecompressSync(body).toString()
          : encoding === 'gzip'
            ? zlib.gunzipSync(body).toString()
            : body.toString();
      expect(text, accept).toBe(BIG_JS);
    }
    // An asset the build did not compress (too small): as is, whatever is accepted.
    const small = await app.inject({ url: '/app/assets/index-AbC123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body).toBe('console.log(1)');
    // The twins are not addresses of their own beyond what they are: never sent as JavaScript text.
    const twin = await app.inject({ url: '/app/assets/big-XyZ789.js.br' });
    expect(twin.headers['content-type']).toBe('application/octet-stream');
  });

  it('compresses index.html on the fly for browsers that accept it', async () => {
    for (const [accept, encoding] of [
      ['br, gzip', 'br'],
      ['gzip', 'gzip'],
      [undefined, undefined],
    ] as const) {
      const res = await app.inject({ url: '/app/settings', headers: accept ? { 'accept-encoding': accept } : {} });
      expect(res.headers['vary']).toBe('Accept-Encoding');
      expect(res.headers['content-encoding']).toBe(encoding);
      const text =
        encoding === 'br'
          ? zlib.brotliDecompressSync(res.rawPayload).toString()
          : encoding === 'gzip'
            ? zlib.gunzipSync(res.rawPayload).toString()
            : res.body;
      const nonce = /nonce="([^"]+)"/.exec(text)![1]!;
      expect(res.headers['content-security-policy']).toContain(`'nonce-${nonce}'`);
    }
  });

  it('negotiates encodings by Accept-Encoding weights', () => {
    expect(negotiateEncoding(undefined)).toBeNull();
    expect(negotiateEncoding('')).toBeNull();
    expect(negotiateEncoding('deflate')).toBeNull();
    expect(negotiateEncoding('gzip, br')).toBe('br');
    expect(negotiateEncoding('GZIP;Q=1, BR;Q=0.9')).toBe('gzip');
    expect(negotiateEncoding('x-gzip')).toBe('gzip');
    expect(negotiateEncoding('*;q=0.2, br;q=0')).toBe('gzip');
    expect(negotiateEncoding(['gzip', 'br'])).toBe('br');
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
        if (res.statusCode === 200)
          expect(['console.log(1)', 'index'], url).toContain(res.body.includes('<div id="root">') ? 'index' : res.body);
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
