import fc from 'fast-check';
import { expect, it } from 'vitest';
import { describeApi } from '../helpers/app.js';
import { insertSegment, insertTopic, verifiedDomain } from '../helpers/fixtures.js';

/**
 * Random bodies for Create Broadcast: every answer is a 201 or a problem+json 4xx (never a 5xx), and a
 * rejected request creates nothing.
 */
describeApi('broadcasts: property test of POST /v1/broadcasts', (h) => {
  it('never answers 5xx, and a rejected request creates nothing', async () => {
    const ws = await h.workspace();
    await verifiedDomain(h, ws);
    const topicId = await insertTopic(h, ws);
    const segmentId = await insertSegment(h, ws);
    const address = fc.oneof(
      fc.constantFrom(
        'news@acme.test',
        'Acme <news@acme.test>',
        'news@other.test',
        'nope',
        '',
        'a@b',
        '"Q" <q@acme.test>',
        'x@acme.test\r\nBcc: y@z.test',
        '<>',
      ),
      fc.emailAddress(),
      fc.string({ maxLength: 40 }),
    );
    const liquid = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.constantFrom(
        '{{ contact.firstName }}',
        '{% if x %}y{% endif %}',
        '{% if %}',
        '{{ x | nope }}',
        '{{',
        '{% raw %}{{{% endraw %}',
      ),
    );
    const field = fc.record(
      {
        name: fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 260 }), fc.integer()),
        from: fc.oneof(address, fc.constant(null)),
        replyTo: fc.oneof(address, fc.constant(null)),
        topicId: fc.oneof(fc.constantFrom(topicId, 'topic_x', ''), fc.constant(null)),
        segmentId: fc.oneof(fc.constantFrom(segmentId, 'seg_x'), fc.constant(null)),
        emailContent: fc.oneof(
          fc.record(
            {
              subject: fc.oneof(liquid, fc.constant(null)),
              html: liquid,
              text: liquid,
              previewText: liquid,
              editorContent: fc.jsonValue({ maxDepth: 2 }),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        sendAt: fc.constantFrom('2030-01-01T00:00:00Z'),
        status: fc.constantFrom('SENT'),
        extra: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof({ weight: 6, arbitrary: field }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });
    const count = async () =>
      (await h.db.kysely.selectFrom('broadcasts').select('id').where('workspace_id', '=', ws.id).execute()).length;

    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const before = await count();
        const res = await h.call(ws.key, 'POST', '/v1/broadcasts', JSON.stringify(payload));
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode === 201) {
          expect(res.json().status).toBe('DRAFT');
          expect(await count()).toBe(before + 1);
        } else {
          expect(res.statusCode).toBeGreaterThanOrEqual(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(typeof res.json().code).toBe('string');
          expect(await count()).toBe(before);
        }
      }),
      { numRuns: 300 },
    );
  });
});
