import { parse } from 'csv-parse/sync';
import { expect, it } from 'vitest';
import { csvField } from '../../src/audience/contacts/contacts.export.js';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

/** GET /v1/contacts/export?segmentId=: a segment's contacts as a streamed CSV attachment. */

const HEADER = [
  'id',
  'email',
  'firstName',
  'lastName',
  'status',
  'suppressed',
  'properties',
  'createdAt',
  'updatedAt',
  'tags',
  'timezone',
];

async function importNdjson(h: Harness, ws: TestWorkspace, rows: Record<string, unknown>[]) {
  const res = await h.call(ws.key, 'POST', '/v1/contacts/imports', rows.map((r) => JSON.stringify(r)).join('\n'), {
    'content-type': 'application/x-ndjson',
  });
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json()).toMatchObject({ status: 'COMPLETED', skipped: 0 });
}

async function segment(h: Harness, ws: TestWorkspace, filter: unknown, name = 'Gold') {
  const res = await h.call(ws.key, 'POST', '/v1/segments', { name, filter });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

function rowsOf(body: string): Record<string, string>[] {
  return parse(body, { columns: true, skip_empty_lines: true, record_delimiter: '\r\n' }) as Record<string, string>[];
}

it('csvField defuses spreadsheet formulas: a text cell starting with = + - @ tab or CR gets a leading apostrophe', () => {
  expect(csvField('=HYPERLINK("http://evil.example","click")')).toBe(
    '"\'=HYPERLINK(""http://evil.example"",""click"")"',
  );
  expect(csvField('+1 555')).toBe("'+1 555");
  expect(csvField('-2+3')).toBe("'-2+3");
  expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
  expect(csvField('\tcmd')).toBe("'\tcmd");
  expect(csvField(-5)).toBe('-5');
  expect(csvField('Ada')).toBe('Ada');
});

it('csvField quotes commas, quotes, line breaks and edge spaces, and nothing else', () => {
  expect(csvField('plain')).toBe('plain');
  expect(csvField('a,b')).toBe('"a,b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('one\ntwo')).toBe('"one\ntwo"');
  expect(csvField('cr\rlf')).toBe('"cr\rlf"');
  expect(csvField(' padded')).toBe('" padded"');
  expect(csvField(null)).toBe('');
  expect(csvField(true)).toBe('true');
});

describeApi('contacts export', (h) => {
  it('streams a segment of 2,500 contacts as CSV, oldest first, with correct quoting, and nothing of the rest', async () => {
    const ws = await h.workspace();
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < 2_600; i++) {
      rows.push({
        email: `p${String(i).padStart(4, '0')}@example.com`,
        firstName: `P${i}`,
        properties: { tier: i < 2_500 ? 'gold' : 'tin', n: i },
      });
    }
    // The awkward values: commas, quotes, line breaks (CRLF too), leading spaces, non-ASCII, in names and properties.
    rows[7] = {
      email: 'awkward@example.com',
      firstName: 'Smith, Jr.',
      lastName: 'say "hi"',
      properties: { tier: 'gold', note: 'line one\nline two, "quoted"', crlf: 'a\r\nb', lead: ' x', emoji: 'ça 😀' },
    };
    await importNdjson(h, ws, rows);
    const segmentId = await segment(h, ws, { field: 'properties.tier', op: 'eq', value: 'gold' });

    const res = await h.call(ws.key, 'GET', `/v1/contacts/export?segmentId=${segmentId}`);
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="contacts-${segmentId}-\\d{4}-\\d\\d-\\d\\d\\.csv"$`),
    );
    expect(res.body.startsWith(`${HEADER.join(',')}\r\n`)).toBe(true);

    const parsed = rowsOf(res.body);
    expect(parsed).toHaveLength(2_500);
    expect(parsed.every((r) => JSON.parse(r.properties!).tier === 'gold')).toBe(true);
    // Oldest first: ids ascending, each contact once.
    const ids = parsed.map((r) => r.id!);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(2_500);
    // The same contacts the API lists for the segment.
    const count = (await h.call(ws.key, 'GET', `/v1/segments/${segmentId}/count`)).json();
    expect(count.count).toBe(2_500);

    const awkward = parsed.find((r) => r.email === 'awkward@example.com')!;
    expect(awkward).toMatchObject({
      firstName: 'Smith, Jr.',
      lastName: 'say "hi"',
      status: 'SUBSCRIBED',
      suppressed: 'false',
    });
    expect(JSON.parse(awkward.properties!)).toEqual({
      tier: 'gold',
      note: 'line one\nline two, "quoted"',
      crlf: 'a\r\nb',
      lead: ' x',
      emoji: 'ça 😀',
    });
    expect(res.body).toContain('"Smith, Jr.","say ""hi"""');
    const plain = parsed.find((r) => r.email === 'p0000@example.com')!;
    expect(plain).toMatchObject({ firstName: 'P0', lastName: '', status: 'SUBSCRIBED' });
    expect(plain.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('without segmentId exports every contact, whatever its status, and says which are suppressed', async () => {
    const ws = await h.workspace();
    await importNdjson(h, ws, [
      { email: 'a@example.com', status: 'SUBSCRIBED' },
      { email: 'b@example.com', status: 'UNSUBSCRIBED' },
      { email: 'c@example.com', status: 'BOUNCED' },
    ]);
    expect(
      (await h.call(ws.key, 'POST', '/v1/suppressions', { email: 'a@example.com', reason: 'MANUAL' })).statusCode,
    ).toBe(201);
    const res = await h.call(ws.key, 'GET', '/v1/contacts/export');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="contacts-all-/);
    const parsed = rowsOf(res.body);
    expect(parsed.map((r) => [r.email, r.status, r.suppressed])).toEqual([
      ['a@example.com', 'SUBSCRIBED', 'true'],
      ['b@example.com', 'UNSUBSCRIBED', 'false'],
      ['c@example.com', 'BOUNCED', 'false'],
    ]);
  });

  it('an empty segment is the header alone', async () => {
    const ws = await h.workspace();
    await importNdjson(h, ws, [{ email: 'a@example.com' }]);
    const segmentId = await segment(h, ws, { field: 'email', op: 'endsWith', value: '@nowhere.test' }, 'Nobody');
    const res = await h.call(ws.key, 'GET', `/v1/contacts/export?segmentId=${segmentId}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`${HEADER.join(',')}\r\n`);
  });

  it("another workspace's segment is 404 (problem+json, nothing streamed); scopes are read:contacts", async () => {
    const mine = await h.workspace('Mine');
    const theirs = await h.workspace('Theirs');
    await importNdjson(h, theirs, [{ email: 'secret@theirs.example' }]);
    const theirSegment = await segment(h, theirs, { all: [] }, 'Theirs');
    const res = await h.call(mine.key, 'GET', `/v1/contacts/export?segmentId=${theirSegment}`);
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('not_found');
    expect(res.body).not.toContain('secret@theirs.example');
    expect((await h.call(mine.key, 'GET', '/v1/contacts/export?segmentId=seg_nope')).statusCode).toBe(404);

    const reader = await h.key(theirs, ['read:contacts']);
    const ok = await h.call(reader, 'GET', `/v1/contacts/export?segmentId=${theirSegment}`);
    expect(ok.statusCode).toBe(200);
    expect(rowsOf(ok.body).map((r) => r.email)).toEqual(['secret@theirs.example']);
    const formsOnly = await h.key(theirs, ['read:forms']);
    const denied = await h.call(formsOnly, 'GET', `/v1/contacts/export?segmentId=${theirSegment}`);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('insufficient_scope');
    expect((await h.call(null, 'GET', '/v1/contacts/export')).statusCode).toBe(401);
  });

  it('reads the contacts a page at a time, as the file is consumed: a contact added after the first page was sent is in it', async () => {
    const ws = await h.workspace();
    await importNdjson(
      h,
      ws,
      Array.from({ length: 700 }, (_, i) => ({
        email: `s${String(i).padStart(3, '0')}@example.com`,
        properties: { tier: 'gold' },
      })),
    );
    const segmentId = await segment(h, ws, { field: 'properties.tier', op: 'eq', value: 'gold' });
    for (const which of [undefined, segmentId]) {
      const { chunks } = await h.app.services.contacts.exportCsv(ws.id, which);
      const it = chunks[Symbol.asyncIterator]();
      expect((await it.next()).value).toBe(`${HEADER.join(',')}\r\n`);
      // The first page (500 contacts, oldest first) is all that has been read.
      const first = (await it.next()).value as string;
      expect(rowsOf(`${HEADER.join(',')}\r\n${first}`)).toHaveLength(500);
      const late = `late-${which ? 'segment' : 'all'}@example.com`;
      expect(
        (await h.call(ws.key, 'POST', '/v1/contacts', { email: late, properties: { tier: 'gold' } })).statusCode,
      ).toBe(201);
      let rest = '';
      for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value;
      const emails = rowsOf(`${HEADER.join(',')}\r\n${rest}`).map((r) => r.email);
      expect(emails.at(-1)).toBe(late);
    }
  });

  it('is documented in the OpenAPI document as text/csv', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/v1/contacts/export'].get;
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/csv']);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(['segmentId']);
  });
});
