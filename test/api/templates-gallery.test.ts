import { expect, it } from 'vitest';
import { validateDocument } from '../../src/mail/blocks/validate.js';
import { SOCIAL_NETWORKS } from '../../src/mail/blocks/grammar.js';
import { describeApi } from '../helpers/app.js';

/**
 * The starter gallery (contract §16: `GET /v1/templates/gallery`, read:broadcasts) and the social icons that rendered
 * emails load from Formcast itself (`GET /assets/social/{network}.png`, public).
 */
describeApi('templates gallery and social icons', (h) => {
  it('lists at least six valid starter documents, the same for every workspace', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const res = await h.call(ws.key, 'GET', '/v1/templates/gallery');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'nextCursor']);
    expect(body.nextCursor).toBeNull();
    expect(body.data.map((t: { id: string }) => t.id)).toEqual([
      'newsletter',
      'announcement',
      'welcome',
      'event-invitation',
      'digest',
      'plain-letter',
    ]);
    for (const t of body.data) {
      expect(Object.keys(t).sort()).toEqual(['description', 'editorContent', 'id', 'name', 'subject']);
      expect(t.name.length).toBeGreaterThan(0);
      expect(t.description.length).toBeGreaterThan(20);
      expect(validateDocument(t.editorContent), t.id).toEqual([]);
      expect(t.editorContent.blocks.at(-1).type, t.id).toBe('footer');
    }
    // every field of every block came through the response schema (none dropped by the serialiser)
    const { GALLERY } = await import('../../src/mail-setup/templates/templates.gallery.js');
    expect(body.data).toEqual(JSON.parse(JSON.stringify(GALLERY)));
    expect((await h.call(other.key, 'GET', '/v1/templates/gallery')).json()).toEqual(body);
    // "gallery" is not taken for a template id, and a template id still is one
    const t = (await h.call(ws.key, 'POST', '/v1/templates', { name: 'Mine' })).json();
    expect((await h.call(ws.key, 'GET', `/v1/templates/${t.id}`)).json().name).toBe('Mine');
    expect((await h.call(other.key, 'GET', `/v1/templates/${t.id}`)).statusCode).toBe(404);
  });

  it('needs read:broadcasts', async () => {
    const ws = await h.workspace();
    expect((await h.call(await h.key(ws, ['read:broadcasts']), 'GET', '/v1/templates/gallery')).statusCode).toBe(200);
    expect((await h.call(await h.key(ws, ['write:broadcasts']), 'GET', '/v1/templates/gallery')).statusCode).toBe(200);
    const forms = await h.call(await h.key(ws, ['write:forms']), 'GET', '/v1/templates/gallery');
    expect(forms.statusCode).toBe(403);
    expect(forms.json().code).toBe('insufficient_scope');
    expect((await h.call(null, 'GET', '/v1/templates/gallery')).statusCode).toBe(401);
  });

  it('serves a PNG icon for every social network, publicly and cached; nothing else', async () => {
    for (const network of SOCIAL_NETWORKS) {
      const res = await h.app.inject({ method: 'GET', url: `/assets/social/${network}.png` });
      expect(res.statusCode, network).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers['cache-control']).toBe('public, max-age=604800');
      expect(res.rawPayload.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(res.rawPayload.length).toBeLessThan(4096);
    }
    for (const url of [
      '/assets/social/myspace.png',
      '/assets/social/x.svg',
      '/assets/social/..%2F..%2Fpackage.json',
      '/assets/social/%2e%2e',
      '/assets/social/',
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
    }
  });
});
