/**
 * The SDK works with `require()` as well as `import` (packages/sdk/README.md, "ESM and CommonJS"): it is built the way
 * `npm install` builds it (scripts/build-sdk.mjs) into a scratch `node_modules/@formcast/sdk` with its package.json, and
 * plain Node scripts there `require` it from a .cjs file and `import` it from a .mjs file: each gets the client, calls a
 * local HTTP server through it, catches a problem as a FormcastError and verifies a signed webhook. TypeScript resolves
 * the types of both (a .cts and a .mts file, `module: node16`). Every file `exports` names exists.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What each script prints: the client works against a local server, errors and webhooks included. */
const SCRIPT = (load: string) => `${load}
const http = require_http();
const { Webhook } = require_webhooks();
const server = http.createServer((req, res) => {
  if (req.url === '/v1/workspace') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ id: 'ws_1', name: 'Acme', auth: req.headers.authorization }));
  }
  res.writeHead(404, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ type: '/docs/errors#not_found', title: 'Not found', status: 404, code: 'not_found', detail: 'form not found' }));
});
server.listen(0, '127.0.0.1', async () => {
  const baseUrl = 'http://127.0.0.1:' + server.address().port;
  const fc = new sdk.Formcast({ apiKey: 'fc_test', baseUrl, maxRetries: 0 });
  const ws = await fc.workspace.get();
  let error;
  try { await fc.forms.get('form_nope'); } catch (e) { error = { isFormcastError: e instanceof sdk.FormcastError, status: e.status, code: e.code }; }
  const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
  const body = JSON.stringify({ type: 'contact.created', timestamp: new Date().toISOString(), data: { id: 'ct_1' } });
  const id = 'msg_1', ts = new Date();
  const signature = new Webhook(secret).sign(id, ts, body);
  const event = sdk.verifyWebhook(body, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(ts / 1000)), 'webhook-signature': signature }, secret);
  console.log(JSON.stringify({ exports: Object.keys(sdk).sort(), ws, error, event: event.type }));
  server.close();
});
`;

describe('the SDK as CommonJS and as ESM', () => {
  let tmp: string;
  let pkg: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formcast-sdk-formats-'));
    pkg = path.join(tmp, 'node_modules', '@formcast', 'sdk');
    fs.mkdirSync(pkg, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'packages/sdk/package.json'), path.join(pkg, 'package.json'));
    const { buildSdk } = (await import(path.join(ROOT, 'scripts/build-sdk.mjs'))) as {
      buildSdk(root: string, opts: { outdir: string }): Promise<void>;
    };
    await buildSdk(ROOT, { outdir: path.join(pkg, 'dist') });
    // Its one dependency, as npm would have installed it beside it.
    const webhooks = path.dirname(createRequire(import.meta.url).resolve('standardwebhooks/package.json'));
    fs.symlinkSync(webhooks, path.join(tmp, 'node_modules', 'standardwebhooks'), 'dir');
  }, 120_000);
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const run = (file: string) => {
    const out = spawnSync(process.execPath, [file], { cwd: tmp, encoding: 'utf8', timeout: 30_000 });
    expect(out.status, out.stderr).toBe(0);
    return JSON.parse(out.stdout);
  };
  const expected = {
    ws: { id: 'ws_1', name: 'Acme', auth: 'Bearer fc_test' },
    error: { isFormcastError: true, status: 404, code: 'not_found' },
    event: 'contact.created',
  };

  it('every file the exports map names exists', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
    const files: string[] = [manifest.main, manifest.types];
    for (const target of Object.values(manifest.exports['.']) as Record<string, string>[])
      files.push(...Object.values(target));
    for (const f of files) expect(fs.existsSync(path.join(pkg, f)), f).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(pkg, 'dist/cjs/package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
  });

  it('require() from CommonJS', () => {
    const file = path.join(tmp, 'app.cjs');
    fs.writeFileSync(
      file,
      SCRIPT(
        "const sdk = require('@formcast/sdk');\nconst require_http = () => require('node:http');\nconst require_webhooks = () => require('standardwebhooks');",
      ),
    );
    const out = run(file);
    expect(out).toMatchObject(expected);
    expect(out.exports).toEqual(expect.arrayContaining(['Formcast', 'FormcastError', 'verifyWebhook', 'PageIterator']));
    // The package's own manifest too.
    const manifest = spawnSync(process.execPath, ['-p', "require('@formcast/sdk/package.json').name"], {
      cwd: tmp,
      encoding: 'utf8',
    });
    expect(manifest.stdout.trim()).toBe('@formcast/sdk');
  });

  it('import from ESM, the same API', () => {
    const file = path.join(tmp, 'app.mjs');
    fs.writeFileSync(
      file,
      SCRIPT(
        "import * as sdk from '@formcast/sdk';\nimport * as nodeHttp from 'node:http';\nimport standardwebhooks from 'standardwebhooks';\nconst require_http = () => nodeHttp;\nconst require_webhooks = () => standardwebhooks;",
      ),
    );
    const out = run(file);
    expect(out).toMatchObject(expected);
    const cjs = run(path.join(tmp, 'app.cjs'));
    expect(out.exports).toEqual(cjs.exports);
  });

  it('TypeScript finds the types from a .cts and a .mts file (module node16)', () => {
    const use = (kind: string) =>
      `import { Formcast, FormcastError, type Contact } from '@formcast/sdk';\nconst fc: Formcast = new Formcast({ apiKey: 'x' });\nexport const contact: Promise<Contact> = fc.contacts.get('ct_1');\nexport const isError = (e: unknown): boolean => e instanceof FormcastError;\nexport const kind = '${kind}';\n`;
    fs.writeFileSync(path.join(tmp, 'check.cts'), use('cjs'));
    fs.writeFileSync(path.join(tmp, 'check.mts'), use('esm'));
    fs.writeFileSync(
      path.join(tmp, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['check.cts', 'check.mts'],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const out = spawnSync(process.execPath, [tsc, '-p', tmp], { encoding: 'utf8', timeout: 120_000 });
    expect(out.stdout + out.stderr).toBe('');
    expect(out.status).toBe(0);
  }, 120_000);
});
