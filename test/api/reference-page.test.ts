/**
 * The API reference at /docs (src/http/reference-page.ts): one static page rendered on the server from the OpenAPI
 * document, Formcast's and nobody else's (no Swagger UI, no Fastify logo), without any script or anything from another
 * host, listing every operation under its operationId. How fast a browser shows it is measured in Chromium
 * (test/e2e/reference.e2e.test.ts).
 */
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';

describeApi('the API reference page', (h) => {
  it('renders every operation of the document, branded, with no script', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs', headers: { 'accept-encoding': 'identity' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src/);
    const html = res.body;
    expect(html).toContain('<title>Formcast API reference</title>');
    expect(html).toContain('<span class="mark" aria-hidden="true">F</span>Formcast API');
    expect(html).not.toMatch(/<script|swagger|fastify/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\/(?!localhost:3000)/); // nothing from another host
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    let operations = 0;
    for (const item of Object.values(doc.paths) as Record<string, { operationId: string; summary: string }>[]) {
      for (const op of Object.values(item)) {
        operations++;
        expect(html, op.operationId).toContain(`<section class="op" id="${op.operationId}"`);
        expect(html).toContain(`operationId <code>${op.operationId}</code>`);
      }
    }
    expect(html).toContain(`${operations} operations`);
    // A description's Markdown is rendered (code spans), a schema's properties listed, an example shown.
    expect(html).toMatch(
      /<section class="op" id="updateForm"[\s\S]*?<code>write:forms<\/code>[\s\S]*?<code class="n">fieldMapping<\/code>[\s\S]*?<summary>Example<\/summary>/,
    );
    // Compressed for browsers that take it; the old Swagger UI address of the document redirects.
    const packed = await h.app.inject({ method: 'GET', url: '/docs', headers: { 'accept-encoding': 'br, gzip' } });
    expect(packed.headers['content-encoding']).toBe('br');
    expect(packed.rawPayload.length).toBeLessThan(html.length / 4);
    const old = await h.app.inject({ method: 'GET', url: '/docs/json' });
    expect(old.statusCode).toBe(301);
    expect(old.headers.location).toBe('/openapi.json');
  });
});
