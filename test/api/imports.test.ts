import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const JOB_KEYS = [
  'created',
  'createdAt',
  'error',
  'errors',
  'errorsTruncated',
  'finishedAt',
  'format',
  'id',
  'skipped',
  'status',
  'suppressed',
  'total',
  'updated',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function post(
  h: Harness,
  key: string,
  body: string | Readable,
  contentType: string | null = 'text/csv',
  headers: Record<string, string> = {},
) {
  return h.app.inject({
    method: 'POST',
    url: '/v1/contacts/imports',
    headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
    payload: body,
  });
}

async function importOk(h: Harness, ws: TestWorkspace, body: string | Readable, contentType = 'text/csv') {
  const res = await post(h, ws.key, body, contentType);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function contacts(h: Harness, ws: TestWorkspace) {
  const rows = await h.db.kysely
    .selectFrom('contacts')
    .select(['email', 'first_name', 'last_name', 'status', 'properties'])
    .where('workspace_id', '=', ws.id)
    .orderBy('email')
    .execute();
  return rows.map((r) => ({
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    status: r.status,
    properties: JSON.parse(r.properties),
  }));
}

async function count(h: Harness, ws: TestWorkspace, table: 'contacts' | 'contact_imports') {
  const row = await h.db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', ws.id)
    .executeTakeFirst();
  return Number(row!.n);
}

function csvOf(n: number, from = 0) {
  const lines = ['email,firstName,lastName,plan,source'];
  for (let i = from; i < from + n; i++) lines.push(`user${i}@example.com,First${i},Last${i},plan${i % 3},import`);
  return `${lines.join('\n')}\n`;
}

describeApi('contact imports', (h) => {
  it('imports a CSV (201, Location): columns by header, other columns become properties; the job is stored and listed', async () => {
    const ws = await h.workspace();
    const csv =
      'email,first_name,LastName,status,plan,seats\nada@example.com,Ada,Lovelace,SUBSCRIBED,pro,3\nBob@Example.COM,Bob,,unsubscribed,,\n';
    const res = await post(h, ws.key, csv);
    expect(res.statusCode, res.body).toBe(201);
    const job = res.json();
    expect(Object.keys(job).sort()).toEqual(JOB_KEYS);
    expect(job).toMatchObject({
      status: 'COMPLETED',
      format: 'CSV',
      total: 2,
      created: 2,
      updated: 0,
      skipped: 0,
      errors: [],
      errorsTruncated: 0,
      error: null,
    });
    expect(job.id).toMatch(/^imp_/);
    expect(job.createdAt).toMatch(ISO);
    expect(job.finishedAt).toMatch(ISO);
    expect(res.headers.location).toBe(`/v1/contacts/imports/${job.id}`);
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        status: 'SUBSCRIBED',
        properties: { plan: 'pro', seats: '3' },
      },
      { email: 'bob@example.com', firstName: 'Bob', lastName: null, status: 'UNSUBSCRIBED', properties: {} },
    ]);
    expect((await h.call(ws.key, 'GET', `/v1/contacts/imports/${job.id}`)).json()).toEqual(job);
    const list = (await h.call(ws.key, 'GET', '/v1/contacts/imports')).json();
    expect(list).toEqual({ data: [job], nextCursor: null });
    const listed = (await h.call(ws.key, 'GET', '/v1/contacts?email=bob%40example.com')).json().data;
    expect(listed).toHaveLength(1);
  });

  it('rows update existing contacts like POST: status kept unless given, empty cells leave fields unchanged, properties replaced', async () => {
    const ws = await h.workspace();
    const existing = (
      await h.call(ws.key, 'POST', '/v1/contacts', {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'L',
        status: 'UNSUBSCRIBED',
        properties: { old: 1 },
      })
    ).json();
    const job = await importOk(
      h,
      ws,
      'email,firstName,lastName,plan\nADA@example.com,Augusta,,pro\nnew@example.com,,,\n',
    );
    expect(job).toMatchObject({ total: 2, created: 1, updated: 1, skipped: 0 });
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: 'Augusta',
        lastName: 'L',
        status: 'UNSUBSCRIBED',
        properties: { plan: 'pro' },
      },
      { email: 'new@example.com', firstName: null, lastName: null, status: 'SUBSCRIBED', properties: {} },
    ]);
    // A CSV without property columns leaves properties alone.
    await importOk(h, ws, 'email,status\nada@example.com,PENDING\n');
    const after = (await h.call(ws.key, 'GET', `/v1/contacts/${existing.id}`)).json();
    expect(after).toMatchObject({
      id: existing.id,
      status: 'PENDING',
      properties: { plan: 'pro' },
      firstName: 'Augusta',
    });
  });

  it.each([
    ['CRLF', '\r\n'],
    ['LF', '\n'],
  ])(
    'CSV (%s): rejected rows are skipped and reported with their line and reason; the rest is imported',
    async (_label, eol) => {
      const ws = await h.workspace();
      const csv = [
        'email,firstName,city', //                           1
        'ann@example.com,Ann,Paris', //                       2
        'not-an-email,Bob,Rome', //                           3 bad email
        'cy@example.com,Cy', //                               4 two columns
        '', //                                                5 blank: ignored
        'dee@example.com,"Dee', //                            6 a quoted field over two lines
        'Multi",Oslo', //                                     7
        `eve@example.com,Eve,${'x'.repeat(2001)}`, //         8 property too long
        'fay@example.com,Fay,Lima,extra', //                  9 four columns
        'gus@example.com,,', //                               10 empty cells
        'ANN@EXAMPLE.COM,Annie,', //                          11 the same contact as line 2: updates it
        `hal@example.com,${'h'.repeat(201)},Rio`, //          12 name too long
        'ivy@example.com,Ivy,Kyiv,', //                       13 four columns (trailing comma)
        ',Nobody,Nowhere', //                                 14 no email
        'jo@example.com,Jo,"Quoted, with comma"', //          15
      ].join(eol);
      const job = await importOk(h, ws, csv);
      expect(job).toMatchObject({
        status: 'COMPLETED',
        total: 12,
        created: 4,
        updated: 1,
        skipped: 7,
        errorsTruncated: 0,
      });
      expect(job.errors).toEqual([
        { line: 3, reason: 'email is not a valid email address: "not-an-email"' },
        { line: 4, reason: 'has 2 columns, the header has 3' },
        { line: 8, reason: 'properties.city must NOT have more than 2000 characters' },
        { line: 9, reason: 'has 4 columns, the header has 3' },
        { line: 12, reason: 'firstName must NOT have more than 200 characters' },
        { line: 13, reason: 'has 4 columns, the header has 3' },
        { line: 14, reason: 'email is empty' },
      ]);
      expect(await contacts(h, ws)).toEqual([
        { email: 'ann@example.com', firstName: 'Annie', lastName: null, status: 'SUBSCRIBED', properties: {} },
        {
          email: 'dee@example.com',
          firstName: `Dee${eol}Multi`,
          lastName: null,
          status: 'SUBSCRIBED',
          properties: { city: 'Oslo' },
        },
        { email: 'gus@example.com', firstName: null, lastName: null, status: 'SUBSCRIBED', properties: {} },
        {
          email: 'jo@example.com',
          firstName: 'Jo',
          lastName: null,
          status: 'SUBSCRIBED',
          properties: { city: 'Quoted, with comma' },
        },
      ]);
    },
  );

  it('a Mailchimp export imports as it is: "Email Address", "First Name", "Last Name"; other columns become properties (camelCase where needed)', async () => {
    const ws = await h.workspace();
    const csv =
      '"Email Address","First Name","Last Name","Phone Number",MEMBER_RATING,OPTIN_TIME,TAGS\r\n' +
      '"ada@example.com","Ada","Lovelace","+44 20 7946 0000",4,"2024-01-05 10:00:00","vip"\r\n' +
      '"bob@example.com","Bob","","",2,"2024-02-01 09:00:00",""\r\n';
    const job = await importOk(h, ws, csv);
    expect(job).toMatchObject({ status: 'COMPLETED', total: 2, created: 2, skipped: 0 });
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        status: 'SUBSCRIBED',
        properties: {
          phoneNumber: '+44 20 7946 0000',
          MEMBER_RATING: '4',
          OPTIN_TIME: '2024-01-05 10:00:00',
        },
      },
      {
        email: 'bob@example.com',
        firstName: 'Bob',
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { MEMBER_RATING: '2', OPTIN_TIME: '2024-02-01 09:00:00' },
      },
    ]);
    // TAGS is the contacts' tags (docs/contacts.md "Tags").
    const ada = (await h.call(ws.key, 'GET', '/v1/contacts?email=ada@example.com')).json().data[0];
    expect(ada.tags).toEqual(['vip']);
  });

  it('a Kit export (email_address, first_name, state) and a Listmonk export (name split, attributes merged, status words) import as they are', async () => {
    const ws = await h.workspace();
    const kit =
      'first_name,email_address,state,created_at\nAda,ada@example.com,active,2024-01-01\nBob,bob@example.com,cancelled,2024-01-02\nCy,cy@example.com,bounced,2024-01-03\n';
    expect(await importOk(h, ws, kit)).toMatchObject({ total: 3, created: 3, skipped: 0 });
    const listmonk =
      'email,name,attributes,status\ndee@example.com,Dee Anne Smith,"{""city"": ""Oslo"", ""score"": 7}",enabled\neve@example.com,Eve,{},blocklisted\nfay@example.com,Fay,[1],enabled\n';
    const job = await importOk(h, ws, listmonk);
    expect(job).toMatchObject({
      total: 3,
      created: 2,
      skipped: 1,
      errors: [{ line: 4, reason: 'attributes is not a JSON object' }],
    });
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { created_at: '2024-01-01' },
      },
      {
        email: 'bob@example.com',
        firstName: 'Bob',
        lastName: null,
        status: 'UNSUBSCRIBED',
        properties: { created_at: '2024-01-02' },
      },
      {
        email: 'cy@example.com',
        firstName: 'Cy',
        lastName: null,
        status: 'BOUNCED',
        properties: { created_at: '2024-01-03' },
      },
      {
        email: 'dee@example.com',
        firstName: 'Dee',
        lastName: 'Anne Smith',
        status: 'SUBSCRIBED',
        properties: { city: 'Oslo', score: 7 },
      },
      { email: 'eve@example.com', firstName: 'Eve', lastName: null, status: 'UNSUBSCRIBED', properties: {} },
    ]);
  });

  it("Mailchimp's unsubscribed and cleaned exports (no status column; UNSUB_TIME / CLEAN_TIME) import with that status, never as SUBSCRIBED", async () => {
    const ws = await h.workspace();
    await importOk(
      h,
      ws,
      '"Email Address","First Name",UNSUB_TIME,UNSUB_CAMPAIGN_TITLE\nleft@example.com,Lee,"2024-03-01 10:00:00",Spring\n',
    );
    await importOk(h, ws, '"Email Address",CLEAN_TIME\ngone@example.com,"2024-04-01 10:00:00"\n');
    const rows = await contacts(h, ws);
    expect(rows.map((r) => [r.email, r.status])).toEqual([
      ['gone@example.com', 'BOUNCED'],
      ['left@example.com', 'UNSUBSCRIBED'],
    ]);
  });

  it('a column named like a built-in of JavaScript objects (Constructor) is a property; an attributes key that is not a property key rejects the row', async () => {
    const ws = await h.workspace();
    const job = await importOk(
      h,
      ws,
      'email,Constructor,attributes\na@example.com,yes,"{""toString"": 1}"\nb@example.com,no,"{""__proto__"": {""x"": 1}}"\n',
    );
    expect(job).toMatchObject({ total: 2, created: 1, skipped: 1 });
    expect(job.errors[0].reason).toMatch(/^attributes has a key that is not a property key/);
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'a@example.com',
        firstName: null,
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { toString: 1, Constructor: 'yes' },
      },
    ]);
  });

  it('semicolon- and tab-separated files (what European spreadsheets write) are read by their header; a comma inside a field stays', async () => {
    const ws = await h.workspace();
    expect(
      await importOk(
        h,
        ws,
        'E-Mail;Vorname;Stadt\r\nada@example.com;Ada;"Köln, Altstadt"\r\nbob@example.com;Bob;Berlin\r\n',
      ),
    ).toMatchObject({ total: 2, created: 2, skipped: 0 });
    expect(await importOk(h, ws, 'email\tfirstName\tprice\ncy@example.com\tCy\t1,50\n')).toMatchObject({
      total: 1,
      created: 1,
      skipped: 0,
    });
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: null,
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { Vorname: 'Ada', Stadt: 'Köln, Altstadt' },
      },
      {
        email: 'bob@example.com',
        firstName: null,
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { Vorname: 'Bob', Stadt: 'Berlin' },
      },
      { email: 'cy@example.com', firstName: 'Cy', lastName: null, status: 'SUBSCRIBED', properties: { price: '1,50' } },
    ]);
  });

  it('?columns= maps headers explicitly (to a field, a property, or null to skip); a bad map is a 422 before anything is read', async () => {
    const ws = await h.workspace();
    const map = encodeURIComponent(
      JSON.stringify({
        Mail: 'email',
        Vorname: 'firstName',
        'Kunden-Nr': 'properties.customerId',
        LEID: null,
        Notiz: '',
      }),
    );
    const csv = 'Mail;Vorname;Kunden-Nr;LEID;Notiz\nada@example.com;Ada;K-1;123;hello\n';
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/contacts/imports?columns=${map}`,
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await contacts(h, ws)).toEqual([
      {
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: null,
        status: 'SUBSCRIBED',
        properties: { customerId: 'K-1' },
      },
    ]);
    for (const bad of ['not json', '[1]', JSON.stringify({ Mail: 'e mail' }), JSON.stringify({ Mail: 3 })]) {
      const r = await h.app.inject({
        method: 'POST',
        url: `/v1/contacts/imports?columns=${encodeURIComponent(bad)}`,
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
        payload: 'email\nzed@example.com\n',
      });
      expect(r.statusCode, bad).toBe(422);
      expect(r.json()).toMatchObject({ code: 'validation_failed' });
      expect(r.json().errors[0].path).toMatch(/^\/columns/);
    }
    expect(await count(h, ws, 'contacts')).toBe(1);
    expect(await count(h, ws, 'contact_imports')).toBe(1);
  });

  it('CSV: line numbers stay right after quoted fields holding CRLF, CR or blank lines', async () => {
    const ws = await h.workspace();
    const csv =
      'email,note\na@example.com,"x\r\ny"\nb@example.com,"p\rq"\nbad,z\nc@example.com,"m\n\nn"\nbad2,z\n\n\nbad3,z\n';
    const job = await importOk(h, ws, csv);
    expect(job).toMatchObject({ total: 6, created: 3, skipped: 3 });
    expect(job.errors.map((e: { line: number }) => e.line)).toEqual([5, 9, 12]);
  });

  it('CSV: a status that is not one of the five is a rejected row; case does not matter; a BOM is ignored', async () => {
    const ws = await h.workspace();
    const job = await importOk(h, ws, '\uFEFFEmail,Status\na@example.com,bounced\nb@example.com,MAYBE\n');
    expect(job).toMatchObject({ total: 2, created: 1, skipped: 1 });
    expect(job.errors).toEqual([
      { line: 3, reason: 'status must be one of "SUBSCRIBED", "PENDING", "UNSUBSCRIBED", "BOUNCED", "COMPLAINED"' },
    ]);
    expect((await contacts(h, ws))[0]).toMatchObject({ email: 'a@example.com', status: 'BOUNCED' });
  });

  it('bytes that are not UTF-8 (a Latin-1 file) are a rejected row, never stored as U+FFFD; the other rows import', async () => {
    const ws = await h.workspace();
    const latin1 = Buffer.concat([
      Buffer.from('email,first_name\nok@example.com,Ok\nbad@example.com,Ren'),
      Buffer.from([0xe9]),
      Buffer.from('\n'),
    ]);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
      payload: latin1,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      total: 2,
      created: 1,
      skipped: 1,
      errors: [{ line: 3, reason: expect.stringContaining('not valid UTF-8') }],
    });
    const nd = Buffer.concat([
      Buffer.from('{"email":"n1@example.com"}\n{"email":"n2@example.com","firstName":"Ren'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    const res2 = await h.app.inject({
      method: 'POST',
      url: '/v1/contacts/imports',
      headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/x-ndjson' },
      payload: nd,
    });
    expect(res2.json()).toMatchObject({
      created: 1,
      skipped: 1,
      errors: [{ line: 2, reason: expect.stringContaining('not valid UTF-8') }],
    });
    expect((await contacts(h, ws)).map((c) => c.email)).toEqual(['n1@example.com', 'ok@example.com']);
  });

  it('NDJSON: one object per line, typed properties; bad lines are skipped with line and reason', async () => {
    const ws = await h.workspace();
    const lines = [
      JSON.stringify({
        email: 'Ann@Example.com',
        firstName: 'Ann',
        properties: { plan: 'pro', seats: 3, vip: true, note: null },
      }), // 1
      '{"email": "bob@example.com", ', //                                          2 broken JSON
      '', //                                                                        3 blank: ignored
      '[1, 2]', //                                                                  4 not an object
      JSON.stringify({ email: 'cy@example.com', phone: '123' }), //                 5 unknown field
      JSON.stringify({ email: 'not an email' }), //                                 6
      JSON.stringify({ email: 'dee@example.com', properties: { 'bad key': 1 } }), // 7
      JSON.stringify({ email: 'eve@example.com', status: 'UNSUBSCRIBED', lastName: null }), // 8
      JSON.stringify({ firstName: 'No email' }), //                                 9
      JSON.stringify({ email: 'ann@example.com', lastName: 'Later' }), //           10 updates line 1's contact
      '   ', //                                                                     11 blank
      JSON.stringify({ email: 'fay@example.com', properties: { nested: { a: 1 } } }), // 12
    ];
    for (const type of ['application/x-ndjson', 'application/ndjson; charset=utf-8']) {
      const w = await h.workspace();
      const job = await importOk(h, w, `${lines.join('\n')}`, type);
      expect(job).toMatchObject({
        status: 'COMPLETED',
        format: 'NDJSON',
        total: 10,
        created: 2,
        updated: 1,
        skipped: 7,
      });
      expect(job.errors.map((e: { line: number }) => e.line)).toEqual([2, 4, 5, 6, 7, 9, 12]);
      expect(job.errors[0].reason).toMatch(/^invalid JSON: /);
      expect(job.errors.slice(1).map((e: { reason: string }) => e.reason)).toEqual([
        'must be a JSON object',
        'phone is not allowed',
        'email is not a valid email address: "not an email"',
        'properties.bad key is not allowed',
        'email is required',
        'properties.nested must be string,number,boolean,null',
      ]);
      expect(await contacts(h, w)).toEqual([
        {
          email: 'ann@example.com',
          firstName: 'Ann',
          lastName: 'Later',
          status: 'SUBSCRIBED',
          properties: { plan: 'pro', seats: 3, vip: true, note: null },
        },
        { email: 'eve@example.com', firstName: null, lastName: null, status: 'UNSUBSCRIBED', properties: {} },
      ]);
    }
    expect(ws.id).toBeTruthy();
  });

  it('a line over 1 MiB: an NDJSON line is a rejected row, a CSV record stops the import', async () => {
    const ws = await h.workspace();
    const huge = 'x'.repeat(1024 * 1024 + 10);
    const nd = [
      JSON.stringify({ email: 'a@example.com' }),
      JSON.stringify({ email: 'b@example.com', firstName: huge }),
      JSON.stringify({ email: 'c@example.com' }),
    ].join('\n');
    const chunks = nd.match(/[\s\S]{1,50000}/g)!.map((c) => Buffer.from(c));
    const job = await importOk(h, ws, Readable.from(chunks), 'application/x-ndjson');
    expect(job).toMatchObject({
      status: 'COMPLETED',
      total: 3,
      created: 2,
      skipped: 1,
      errors: [{ line: 2, reason: 'line is longer than 1048576 bytes' }],
    });

    const w2 = await h.workspace();
    const csv = `email,note\na@example.com,x\nb@example.com,${huge}\nc@example.com,y\n`;
    const failed = await importOk(h, w2, csv);
    expect(failed).toMatchObject({ status: 'FAILED', total: 1, created: 1 });
    expect(failed.error).toMatch(/malformed CSV: .*Max Record Size/);
  });

  it.each([
    ['no email column', 'name,plan\nAda,pro\n', ['/header']],
    ['a column that is not a property key', 'email,2024 score,plan\na@example.com,Ada,pro\n', ['/header/1']],
    ['an empty column name', 'email,,plan\na@example.com,x,pro\n', ['/header/1']],
    ['a repeated column', 'email,firstName,first_name\na@example.com,A,B\n', ['/header/2']],
    [
      '51 property columns',
      `email,${Array.from({ length: 51 }, (_, i) => `p${i}`).join(',')}\na@example.com${',x'.repeat(51)}\n`,
      ['/header'],
    ],
    ['an empty file', '', ['/header']],
    ['a broken header', 'email,"plan\na@example.com,x\n', ['/header']],
  ])('a bad CSV header (%s) is 422 before anything is imported', async (_label, csv, paths) => {
    const ws = await h.workspace();
    const res = await post(h, ws.key, csv);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(paths);
    expect(await count(h, ws, 'contacts')).toBe(0);
    expect(await count(h, ws, 'contact_imports')).toBe(0);
  });

  it('a CSV that breaks part-way stops the import: FAILED with error, the rows before it kept, none after', async () => {
    const ws = await h.workspace();
    const good = csvOf(2500).trimEnd().split('\n');
    const csv = [...good, 'broken@example.com,"Unclosed,x,y,z', ...csvOf(100, 5000).split('\n').slice(1)].join('\n');
    const res = await post(h, ws.key, csv);
    expect(res.statusCode).toBe(201);
    const job = res.json();
    expect(job).toMatchObject({ status: 'FAILED', format: 'CSV', total: 2500, created: 2500, updated: 0, skipped: 0 });
    expect(job.error).toMatch(/malformed CSV/i);
    expect(await count(h, ws, 'contacts')).toBe(2500);
    const emails = (await contacts(h, ws)).map((c) => c.email);
    expect(emails).toContain('user2499@example.com');
    expect(emails).not.toContain('user5000@example.com');
    expect((await h.call(ws.key, 'GET', `/v1/contacts/imports/${job.id}`)).json()).toEqual(job);

    const w2 = await h.workspace();
    const job2 = await importOk(h, w2, 'email,plan\na@example.com,x\nb@example.com,y"z\nc@example.com,w\n');
    expect(job2).toMatchObject({ status: 'FAILED', total: 1, created: 1 });
    expect(job2.error).toMatch(/line 3/);
  });

  it('imports 20,000 rows in batches: counts right; importing the file again updates every contact', async () => {
    const ws = await h.workspace();
    const csv = csvOf(20_000);
    const job = await importOk(h, ws, csv);
    expect(job).toMatchObject({
      status: 'COMPLETED',
      total: 20_000,
      created: 20_000,
      updated: 0,
      skipped: 0,
      errors: [],
    });
    expect(await count(h, ws, 'contacts')).toBe(20_000);
    const again = await importOk(h, ws, csv.replace(/,import\n/g, ',again\n'));
    expect(again).toMatchObject({ status: 'COMPLETED', total: 20_000, created: 0, updated: 20_000, skipped: 0 });
    expect(await count(h, ws, 'contacts')).toBe(20_000);
    const sample = (await contacts(h, ws)).find((c) => c.email === 'user12345@example.com');
    expect(sample).toEqual({
      email: 'user12345@example.com',
      firstName: 'First12345',
      lastName: 'Last12345',
      status: 'SUBSCRIBED',
      properties: { plan: 'plan0', source: 'again' },
    });
  }, 120_000);

  it('duplicate emails across batches: the later row updates the earlier', async () => {
    const ws = await h.workspace();
    const lines = ['email,plan'];
    for (let i = 0; i < 1500; i++) lines.push(`u${i}@example.com,a`);
    lines.push('u0@example.com,b', 'U1499@example.com,c', 'u1499@example.com,d');
    const job = await importOk(h, ws, lines.join('\n'));
    expect(job).toMatchObject({ total: 1503, created: 1500, updated: 3, skipped: 0 });
    const all = await contacts(h, ws);
    expect(all.find((c) => c.email === 'u0@example.com')!.properties).toEqual({ plan: 'b' });
    expect(all.find((c) => c.email === 'u1499@example.com')!.properties).toEqual({ plan: 'd' });
  });

  it('keeps at most 1000 error entries and counts the rest', async () => {
    const ws = await h.workspace();
    const lines = ['email'];
    for (let i = 0; i < 1100; i++) lines.push(`bad${i}`);
    lines.push('good@example.com');
    const job = await importOk(h, ws, lines.join('\n'));
    expect(job).toMatchObject({ total: 1101, created: 1, skipped: 1100, errorsTruncated: 100 });
    expect(job.errors).toHaveLength(1000);
    expect(job.errors[999]).toEqual({ line: 1001, reason: 'email is not a valid email address: "bad999"' });
  });

  it('415 for a body that is neither CSV nor NDJSON (or not UTF-8); nothing imported', async () => {
    const ws = await h.workspace();
    for (const type of [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'text/csv; charset=latin1',
      null,
    ]) {
      const res = await post(
        h,
        ws.key,
        type === 'application/json' ? '{"email":"a@example.com"}' : 'email\na@example.com\n',
        type,
      );
      expect(res.statusCode, String(type)).toBe(415);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe('unsupported_media_type');
      expect(res.json().detail).toContain('text/csv');
    }
    expect(await count(h, ws, 'contacts')).toBe(0);
    expect(await count(h, ws, 'contact_imports')).toBe(0);
    // The JSON endpoints do not take CSV.
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/v1/contacts',
          headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'text/csv' },
          payload: 'email\n',
        })
      ).statusCode,
    ).toBe(415);
  });

  it('413 payload_too_large over the byte limit: up front from Content-Length, or counted while streaming', async () => {
    const ws = await h.workspace();
    const service = h.app.services.contacts;
    const saved = service.importByteLimit;
    service.importByteLimit = 10_000;
    try {
      const declared = await post(h, ws.key, csvOf(1000));
      expect(declared.statusCode).toBe(413);
      expect(declared.json().code).toBe('payload_too_large');
      expect(await count(h, ws, 'contact_imports')).toBe(0);

      // A stream without Content-Length: the rows read before the limit are kept, the job is FAILED.
      const body = csvOf(1000);
      const chunks = body.match(/[\s\S]{1,1000}/g)!;
      const streamed = await post(h, ws.key, Readable.from(chunks.map((c) => Buffer.from(c))));
      expect(streamed.statusCode).toBe(413);
      expect(streamed.headers.connection).toBe('close');
      expect(streamed.json()).toMatchObject({ code: 'payload_too_large', importId: expect.stringMatching(/^imp_/) });
      const job = (await h.call(ws.key, 'GET', `/v1/contacts/imports/${streamed.json().importId}`)).json();
      expect(job).toMatchObject({ status: 'FAILED' });
      expect(job.error).toContain('larger than 10000 bytes');
      // Every complete row in the first 10,000 bytes, and nothing after.
      const rowsBefore = body.slice(0, 10_000).split('\n').length - 2;
      expect(job).toMatchObject({ total: rowsBefore, created: rowsBefore });
      expect(await count(h, ws, 'contacts')).toBe(job.created);
    } finally {
      service.importByteLimit = saved;
    }
  });

  it('a streamed body (no Content-Length) is imported like any other', async () => {
    const ws = await h.workspace();
    const chunks = csvOf(3000)
      .match(/[\s\S]{1,777}/g)!
      .map((c) => Buffer.from(c));
    const job = await importOk(h, ws, Readable.from(chunks));
    expect(job).toMatchObject({ status: 'COMPLETED', total: 3000, created: 3000 });
  });

  it('multi-byte characters split across chunks survive', async () => {
    const ws = await h.workspace();
    const text = `${JSON.stringify({ email: 'a@example.com', firstName: 'Zoë 😀' })}\n`;
    const bytes = Buffer.from(text);
    const chunks = Array.from(bytes, (b) => Buffer.from([b]));
    await importOk(h, ws, Readable.from(chunks), 'application/x-ndjson');
    const csvBytes = Buffer.from('email,firstName\nb@example.com,Zoë 😀\n');
    await importOk(h, ws, Readable.from(Array.from(csvBytes, (b) => Buffer.from([b]))));
    expect((await contacts(h, ws)).map((c) => c.firstName)).toEqual(['Zoë 😀', 'Zoë 😀']);
  });

  it('an Idempotency-Key replays the first import instead of importing again', async () => {
    const ws = await h.workspace();
    const csv = csvOf(10);
    const first = await post(h, ws.key, csv, 'text/csv', { 'idempotency-key': 'import-1' });
    expect(first.statusCode).toBe(201);
    const second = await post(h, ws.key, csv, 'text/csv', { 'idempotency-key': 'import-1' });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().id).toBe(first.json().id);
    expect(await count(h, ws, 'contact_imports')).toBe(1);
  });

  it('lists imports newest first with pagination', async () => {
    const ws = await h.workspace();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await importOk(h, ws, csvOf(1, i))).id);
    const first = (await h.call(ws.key, 'GET', '/v1/contacts/imports?limit=2')).json();
    expect(first.data.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    const second = (await h.call(ws.key, 'GET', `/v1/contacts/imports?limit=2&cursor=${first.nextCursor}`)).json();
    expect(second).toMatchObject({ data: [{ id: ids[0] }], nextCursor: null });
  });

  it("another workspace's import is 404; lists are per workspace", async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const theirs = await importOk(h, other, csvOf(3));
    const res = await h.call(ws.key, 'GET', `/v1/contacts/imports/${theirs.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
    expect((await h.call(ws.key, 'GET', '/v1/contacts/imports/imp_nope')).statusCode).toBe(404);
    expect((await h.call(ws.key, 'GET', '/v1/contacts/imports')).json().data).toEqual([]);
    expect(await count(h, ws, 'contacts')).toBe(0);
    expect(await count(h, other, 'contacts')).toBe(3);
  });

  it('scopes: importing needs write:contacts, reading imports read:contacts; a refused import reads nothing', async () => {
    const ws = await h.workspace();
    const job = await importOk(h, ws, csvOf(1));
    const reader = await h.key(ws, ['read:contacts']);
    const stranger = await h.key(ws, ['write:forms']);
    const refused = await post(h, reader, csvOf(5, 100));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'insufficient_scope' });
    expect(refused.json().detail).toContain('write:contacts');
    expect((await post(h, stranger, csvOf(5, 100))).statusCode).toBe(403);
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/v1/contacts/imports',
          headers: { 'content-type': 'text/csv' },
          payload: csvOf(5, 100),
        })
      ).statusCode,
    ).toBe(401);
    expect(await count(h, ws, 'contacts')).toBe(1);
    expect((await h.call(reader, 'GET', `/v1/contacts/imports/${job.id}`)).statusCode).toBe(200);
    expect((await h.call(reader, 'GET', '/v1/contacts/imports')).statusCode).toBe(200);
    expect((await h.call(stranger, 'GET', '/v1/contacts/imports')).statusCode).toBe(403);
    expect((await h.call(stranger, 'GET', `/v1/contacts/imports/${job.id}`)).statusCode).toBe(403);
  });
  /** An import whose body waits at `gate` after the first chunk; returns the pending request. */
  function gatedImport(ws: TestWorkspace, first: string, rest: string) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* body() {
      yield Buffer.from(first);
      await gate;
      yield Buffer.from(rest);
    }
    return { pending: post(h, ws.key, Readable.from(body())), release };
  }

  async function importRow(ws: TestWorkspace) {
    return h.db.kysely
      .selectFrom('contact_imports')
      .select(['id', 'status', 'heartbeat_at'])
      .where('workspace_id', '=', ws.id)
      .executeTakeFirst();
  }

  async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
    let v = await read();
    for (let i = 0; i < 200 && !ok(v); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      v = await read();
    }
    return v;
  }

  const ms = (t: unknown) => new Date(t as string).getTime();

  it('a slow upload stays alive: its heartbeat is touched while it waits for rows', async () => {
    const ws = await h.workspace();
    const service = h.app.services.contacts;
    const saved = service.importHeartbeatMs;
    service.importHeartbeatMs = 20;
    try {
      const { pending, release } = gatedImport(ws, 'email\nfirst@example.com\n', 'second@example.com\n');
      const started = await until(
        () => importRow(ws),
        (r) => r !== undefined,
      );
      const beat = await until(
        () => importRow(ws),
        (r) => ms(r!.heartbeat_at) > ms(started!.heartbeat_at),
      );
      expect(beat?.status).toBe('RUNNING');
      expect(ms(beat!.heartbeat_at)).toBeGreaterThan(ms(started!.heartbeat_at));
      release();
      expect((await pending).json()).toMatchObject({ status: 'COMPLETED', created: 2 });
    } finally {
      service.importHeartbeatMs = saved;
    }
  });

  it('imports left RUNNING by a stopped server are FAILED once their heartbeat is 5 minutes old; others untouched', async () => {
    const ws = await h.workspace();
    const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
    const job = (id: string, status: 'RUNNING' | 'COMPLETED', heartbeat: string) => ({
      id,
      workspace_id: ws.id,
      format: 'CSV' as const,
      status,
      total: 3,
      created: 3,
      updated: 0,
      skipped: 0,
      errors: '[]',
      error: null,
      created_at: ago(60),
      finished_at: status === 'COMPLETED' ? heartbeat : null,
      heartbeat_at: heartbeat,
    });
    await h.db.kysely
      .insertInto('contact_imports')
      .values([
        job('imp_dead', 'RUNNING', ago(6)),
        job('imp_alive', 'RUNNING', ago(4)),
        job('imp_done', 'COMPLETED', ago(50)),
      ])
      .execute();
    expect(await h.app.services.contacts.failInterruptedImports()).toBe(1);
    const get = async (id: string) => (await h.call(ws.key, 'GET', `/v1/contacts/imports/${id}`)).json();
    const dead = await get('imp_dead');
    expect(dead).toMatchObject({
      status: 'FAILED',
      total: 3,
      created: 3,
      error: expect.stringContaining('interrupted'),
    });
    expect(Math.abs(ms(dead.finishedAt) - Date.now())).toBeLessThan(60_000);
    expect(await get('imp_alive')).toMatchObject({ status: 'RUNNING', finishedAt: null, error: null });
    expect(await get('imp_done')).toMatchObject({ status: 'COMPLETED', error: null });
    expect(await h.app.services.contacts.failInterruptedImports()).toBe(0);
  });

  it('an import the sweep failed while it was still running stays FAILED: its next batch is undone', async () => {
    const ws = await h.workspace();
    // 999 rows, one short of a batch, then the body waits: nothing is committed until the rest arrives.
    const { pending, release } = gatedImport(ws, csvOf(999), csvOf(10, 5000).split('\n').slice(1).join('\n'));
    const row = await until(
      () => importRow(ws),
      (r) => r !== undefined,
    );
    await h.db.kysely
      .updateTable('contact_imports')
      .set({ heartbeat_at: new Date(Date.now() - 6 * 60_000).toISOString() })
      .where('id', '=', row!.id)
      .execute();
    expect(await h.app.services.contacts.failInterruptedImports()).toBe(1);
    release();
    const res = await pending;
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      id: row!.id,
      status: 'FAILED',
      created: 0,
      error: expect.stringContaining('interrupted'),
    });
    expect((await h.call(ws.key, 'GET', `/v1/contacts/imports/${row!.id}`)).json()).toMatchObject({
      status: 'FAILED',
      created: 0,
    });
    expect(await count(h, ws, 'contacts')).toBe(0);
  });
});

/** A row that the database itself refuses (a trigger): a real failure in the middle of an import. */
async function refuseInDatabase(
  h: Harness,
  table: 'contacts' | 'contact_imports',
  when: { column: string; value: string } | { sqlite: string; postgres: string },
): Promise<() => Promise<void>> {
  const { sql } = await import('kysely');
  const name = `refuse_${table}`;
  const condition = 'column' in when ? `new.${when.column} = '${when.value}'` : when[h.dbName];
  if (h.dbName === 'sqlite') {
    await sql
      .raw(
        `create trigger ${name}_i before insert on ${table} when ${condition} begin select raise(abort, 'refused by test trigger'); end`,
      )
      .execute(h.db.kysely);
    await sql
      .raw(
        `create trigger ${name}_u before update on ${table} when ${condition} begin select raise(abort, 'refused by test trigger'); end`,
      )
      .execute(h.db.kysely);
    return async () => {
      await sql.raw(`drop trigger ${name}_i`).execute(h.db.kysely);
      await sql.raw(`drop trigger ${name}_u`).execute(h.db.kysely);
    };
  }
  await sql
    .raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin if ${condition} then raise exception 'refused by test trigger'; end if; return new; end $$`,
    )
    .execute(h.db.kysely);
  await sql
    .raw(`create trigger ${name} before insert or update on ${table} for each row execute function ${name}()`)
    .execute(h.db.kysely);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}`).execute(h.db.kysely);
    await sql.raw(`drop function ${name}()`).execute(h.db.kysely);
  };
}

describeApi(
  'contact imports: stored text is well-formed; a failure mid-import leaves a truthful job (issue 29 item 6)',
  (h) => {
    it('an emoji cut at the reason limit, a lone surrogate in an NDJSON key: 201, reasons well-formed, the good rows imported, job COMPLETED', async () => {
      const ws = await h.workspace();
      // Whatever the prefix, one of these two cells puts an emoji across the 300th character of its reason.
      const csv = `email,plan\ngood1@example.com,a\na${'😀'.repeat(270)},b\naa${'😀'.repeat(270)},c\ngood2@example.com,d\n`;
      const res = await post(h, ws.key, csv);
      expect(res.statusCode, res.body).toBe(201);
      const job = res.json();
      expect(job).toMatchObject({ status: 'COMPLETED', total: 4, created: 2, skipped: 2, error: null });
      for (const e of job.errors) {
        expect(e.reason.isWellFormed(), e.reason).toBe(true);
        expect([...e.reason].length).toBeLessThanOrEqual(300);
        expect(e.reason).toMatch(/^email is not a valid email address: "a+(?:😀)+…$/u);
      }
      expect((await h.call(ws.key, 'GET', `/v1/contacts/imports/${job.id}`)).json()).toEqual(job);

      const w2 = await h.workspace();
      const ndjson = [
        '{"email":"ok@example.com"}',
        '{"email":"x@example.com","properties":{"a\\ud800":1}}',
        '{"email":"y@example.com","a\\udc00b":1}',
        '{"email":"ok2@example.com"}',
      ].join('\n');
      const res2 = await post(h, w2.key, ndjson, 'application/x-ndjson');
      expect(res2.statusCode, res2.body).toBe(201);
      const job2 = res2.json();
      expect(job2).toMatchObject({ status: 'COMPLETED', total: 4, created: 2, skipped: 2 });
      expect(job2.errors.map((e: { line: number }) => e.line)).toEqual([2, 3]);
      for (const e of job2.errors) expect(e.reason.isWellFormed(), e.reason).toBe(true);
      // The bad code unit is shown, escaped, rather than lost.
      expect(job2.errors[0].reason).toContain('a\\ud800');
      expect(await count(h, w2, 'contacts')).toBe(2);
    });

    it('the database failing a batch mid-import: 201 with the job FAILED and a reason, the batches committed before kept, nothing left RUNNING', async () => {
      const ws = await h.workspace();
      const undo = await refuseInDatabase(h, 'contacts', { column: 'email', value: 'boom@example.com' });
      try {
        const csv = `${csvOf(1500).trimEnd()}\nboom@example.com,B,B,x,y\n${csvOf(10, 5000).split('\n').slice(1).join('\n')}`;
        const res = await post(h, ws.key, csv);
        expect(res.statusCode, res.body).toBe(201);
        const job = res.json();
        expect(job).toMatchObject({ status: 'FAILED', created: 1000, total: 1000, skipped: 0 });
        expect(job.error).toMatch(/failed unexpectedly/);
        expect(job.finishedAt).toMatch(ISO);
        expect(await count(h, ws, 'contacts')).toBe(1000);
        expect((await h.call(ws.key, 'GET', `/v1/contacts/imports/${job.id}`)).json()).toEqual(job);
      } finally {
        await undo();
      }
    });

    it('the database refusing the finished job: 201 with the job FAILED (not left RUNNING), its reason says so', async () => {
      const ws = await h.workspace();
      const undo = await refuseInDatabase(h, 'contact_imports', { column: 'status', value: 'COMPLETED' });
      try {
        const res = await post(h, ws.key, csvOf(3));
        expect(res.statusCode, res.body).toBe(201);
        const job = res.json();
        expect(job).toMatchObject({ status: 'FAILED', created: 3 });
        expect(job.error).toMatch(/failed unexpectedly/);
        const stored = await h.db.kysely
          .selectFrom('contact_imports')
          .select('status')
          .where('workspace_id', '=', ws.id)
          .execute();
        expect(stored).toEqual([{ status: 'FAILED' }]);
      } finally {
        await undo();
      }
    });

    it('the database refusing the job with its list of rejected rows (what a cut emoji did): FAILED without the list, and says so', async () => {
      const ws = await h.workspace();
      const undo = await refuseInDatabase(h, 'contact_imports', {
        sqlite: "new.status <> 'RUNNING' and new.errors <> '[]'",
        postgres: "new.status <> 'RUNNING' and new.errors::text <> '[]'",
      });
      try {
        const res = await post(h, ws.key, `${csvOf(3)}not an email,x,y,z,w\n`);
        expect(res.statusCode, res.body).toBe(201);
        const job = res.json();
        expect(job).toMatchObject({ status: 'FAILED', created: 3, skipped: 1, errors: [] });
        expect(job.error).toMatch(/failed unexpectedly.*list of rejected rows could not be stored/);
      } finally {
        await undo();
      }
    });
  },
);
