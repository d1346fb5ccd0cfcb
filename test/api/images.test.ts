import crypto from 'node:crypto';
import sharp from 'sharp';
import { expect, it } from 'vitest';
import { describeApi, type Harness, type TestWorkspace } from '../helpers/app.js';

const PUBLIC_URL = 'https://news.example.com';

interface Part {
  field?: string;
  filename?: string;
  type?: string;
  data: Buffer | string;
}

/** A multipart/form-data body of the parts, as a browser or curl sends it. */
function multipart(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----formcast${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.field ?? 'file'}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
      Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

function upload(h: Harness, key: string | null, parts: Part | Part[]) {
  const { payload, contentType } = multipart(Array.isArray(parts) ? parts : [parts]);
  return h.app.inject({
    method: 'POST',
    url: '/v1/images',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), 'content-type': contentType },
    payload,
  });
}

/** A solid image of the format, made with sharp. */
function solid(format: 'png' | 'jpeg' | 'gif' | 'webp', width = 40, height = 30): Promise<Buffer> {
  const image = sharp({ create: { width, height, channels: 3, background: '#3366cc' } });
  return image[format]().toBuffer();
}

/** A noisy image (so that its file is not tiny), `width`×`height`. */
function noisy(width: number, height: number): Promise<Buffer> {
  return sharp(crypto.randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

async function stored(h: Harness, ws: TestWorkspace) {
  return h.db.kysely
    .selectFrom('images')
    .select(['id', 'content_type', 'width', 'height', 'bytes', 'sha256', 'name', 'data'])
    .where('workspace_id', '=', ws.id)
    .orderBy('id')
    .execute();
}

async function refused(h: Harness, ws: TestWorkspace, part: Part, status: number, code: string) {
  const res = await upload(h, ws.key, part);
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json().code).toBe(code);
  expect(await stored(h, ws)).toEqual([]);
  return res.json() as { detail: string; errors?: { path: string; message: string }[] };
}

describeApi(
  'images',
  (h) => {
    it('uploads PNG, JPEG, GIF and WebP: 201 with the image, its bytes in the database', async () => {
      const ws = await h.workspace();
      for (const [format, type, ext] of [
        ['png', 'image/png', 'png'],
        ['jpeg', 'image/jpeg', 'jpg'],
        ['gif', 'image/gif', 'gif'],
        ['webp', 'image/webp', 'webp'],
      ] as const) {
        const data = await solid(format);
        const res = await upload(h, ws.key, { filename: `pixel.${ext}`, type, data });
        expect(res.statusCode, res.body).toBe(201);
        const image = res.json();
        expect(Object.keys(image).sort()).toEqual([
          'bytes',
          'contentType',
          'createdAt',
          'height',
          'id',
          'name',
          'url',
          'width',
        ]);
        expect(image).toMatchObject({ contentType: type, width: 40, height: 30, name: `pixel.${ext}` });
        expect(image.id).toMatch(/^img_[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(image.url).toBe(`${PUBLIC_URL}/i/${image.id}.${ext}`);
        expect(res.headers.location).toBe(`/v1/images/${image.id}`);
        const [row] = (await stored(h, ws)).filter((r) => r.id === image.id);
        expect(row).toMatchObject({ content_type: type, width: 40, height: 30, bytes: image.bytes });
        expect(Buffer.from(row!.data).length).toBe(image.bytes);
        expect(row!.sha256).toBe(crypto.createHash('sha256').update(row!.data).digest('hex'));
        // A clean image that needs nothing done is kept byte for byte.
        expect(Buffer.from(row!.data).equals(data)).toBe(true);
        expect((await sharp(row!.data).metadata()).format).toBe(format);
      }
      expect(await stored(h, ws)).toHaveLength(4);
    });

    it('an identical upload answers 201 with the image stored already and its Location, and stores nothing more', async () => {
      const ws = await h.workspace();
      const data = await solid('png', 12, 12);
      const first = await upload(h, ws.key, { filename: 'a.png', type: 'image/png', data });
      expect(first.statusCode).toBe(201);
      expect(first.headers.location).toBe(`/v1/images/${first.json().id}`);
      const again = await upload(h, ws.key, { filename: 'b.png', type: 'image/png', data });
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers.location).toBe(`/v1/images/${first.json().id}`);
      expect(again.json()).toEqual(first.json());
      const rows = await stored(h, ws);
      expect(rows.map((r) => [r.id, r.name])).toEqual([[first.json().id, 'a.png']]);
      // Another workspace's identical upload is its own image.
      const other = await h.workspace();
      const theirs = await upload(h, other.key, { filename: 'a.png', type: 'image/png', data });
      expect(theirs.statusCode).toBe(201);
      expect(theirs.json().id).not.toBe(first.json().id);
    });

    it('resizes an image wider than 1200 px to 1200 px wide, in its own format', async () => {
      const ws = await h.workspace();
      const res = await upload(h, ws.key, { filename: 'wide.jpg', type: 'image/jpeg', data: await noisy(3000, 2000) });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ contentType: 'image/jpeg', width: 1200, height: 800 });
      const [row] = await stored(h, ws);
      const meta = await sharp(row!.data).metadata();
      expect(meta).toMatchObject({ format: 'jpeg', width: 1200, height: 800 });
      const png = await upload(h, ws.key, {
        filename: 'wide.png',
        data: await sharp({ create: { width: 2400, height: 100, channels: 4, background: '#ff000080' } })
          .png()
          .toBuffer(),
      });
      expect(png.json()).toMatchObject({ contentType: 'image/png', width: 1200, height: 50 });
    });

    it('strips EXIF (a GPS position) and turns the image upright by its orientation', async () => {
      const ws = await h.workspace();
      const data = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#00aa00' } })
        .jpeg()
        .withExif({
          IFD0: { Copyright: 'Ada Lovelace', Make: 'Camera' },
          IFD3: {
            GPSLatitudeRef: 'N',
            GPSLatitude: '48/1 51/1 24/1',
            GPSLongitudeRef: 'E',
            GPSLongitude: '2/1 21/1 3/1',
          },
        })
        .withMetadata({ orientation: 6 })
        .toBuffer();
      const before = await sharp(data).metadata();
      expect(before.exif).toBeDefined();
      expect(before.orientation).toBe(6);
      const res = await upload(h, ws.key, { filename: 'holiday.jpg', type: 'image/jpeg', data });
      expect(res.statusCode, res.body).toBe(201);
      // Orientation 6 (turned 90°): the 40×30 sensor image is 30 wide, 40 high upright.
      expect(res.json()).toMatchObject({ width: 30, height: 40 });
      const [row] = await stored(h, ws);
      const meta = await sharp(row!.data).metadata();
      expect(meta).toMatchObject({ format: 'jpeg', width: 30, height: 40 });
      expect(meta.exif).toBeUndefined();
      expect(meta.orientation).toBeUndefined();
      expect(meta.xmp).toBeUndefined();
      expect(Buffer.from(row!.data).includes(Buffer.from('Camera'))).toBe(false);
      expect(Buffer.from(row!.data).includes(Buffer.from('Ada Lovelace'))).toBe(false);
      // PNG text chunks go as well.
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .png()
        .withMetadata()
        .withExif({ IFD0: { Artist: 'Somebody Private' } })
        .toBuffer();
      expect(png.includes(Buffer.from('Somebody Private'))).toBe(true);
      const pngRes = await upload(h, ws.key, { filename: 'x.png', data: png });
      expect(pngRes.statusCode, pngRes.body).toBe(201);
      const pngRow = (await stored(h, ws)).find((r) => r.id === pngRes.json().id)!;
      expect(Buffer.from(pngRow.data).includes(Buffer.from('Somebody Private'))).toBe(false);
      expect((await sharp(pngRow.data).metadata()).exif).toBeUndefined();
    });

    it('keeps an animated GIF as it is, one frame high', async () => {
      const ws = await h.workspace();
      const pngs = await Promise.all(
        ['#ff0000', '#00ff00', '#0000ff'].map((background) =>
          sharp({ create: { width: 20, height: 10, channels: 3, background } })
            .png()
            .toBuffer(),
        ),
      );
      const gif = await sharp(pngs, { join: { animated: true } })
        .gif({ delay: [100, 100, 100] })
        .toBuffer();
      expect((await sharp(gif).metadata()).pages).toBe(3);
      const res = await upload(h, ws.key, { filename: 'spinner.gif', type: 'image/gif', data: gif });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ contentType: 'image/gif', width: 20, height: 10, bytes: gif.length });
      const [row] = await stored(h, ws);
      expect(Buffer.from(row!.data).equals(gif)).toBe(true);
    });

    it('refuses a file over 5 MiB with 413 payload_too_large, storing nothing', async () => {
      const ws = await h.workspace();
      const png = await solid('png');
      // 6 MB: refused by its declared length, before it is read.
      const big = Buffer.concat([png, crypto.randomBytes(6_000_000)]);
      const problem = await refused(
        h,
        ws,
        { filename: 'big.png', type: 'image/png', data: big },
        413,
        'payload_too_large',
      );
      expect(problem.detail).toMatch(/at most 5 MiB/);
      const declared = await upload(h, ws.key, { filename: 'big.png', data: big });
      expect(declared.statusCode).toBe(413);
      // The rest of the body is not read: the connection is closed.
      expect(declared.headers.connection).toBe('close');
      // Just over 5 MiB: refused by the parser, which stops reading the file at the limit.
      const over = Buffer.concat([png, crypto.randomBytes(5 * 1024 * 1024 + 1 - png.length)]);
      const second = await refused(h, ws, { filename: 'over.png', data: over }, 413, 'payload_too_large');
      expect(second.detail).toMatch(/at most 5 MiB/);
    });

    it('refuses an SVG, a PDF, text and unknown bytes with 422 unsupported_media_type', async () => {
      const ws = await h.workspace();
      const svg =
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>';
      let p = await refused(
        h,
        ws,
        { filename: 'logo.svg', type: 'image/svg+xml', data: svg },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/SVG/);
      expect(p.errors).toEqual([{ path: '/file', message: p.detail }]);
      // An SVG named as a PNG is still an SVG.
      p = await refused(h, ws, { filename: 'logo.png', type: 'image/png', data: svg }, 422, 'unsupported_media_type');
      expect(p.detail).toMatch(/SVG image.*name says PNG/);
      p = await refused(
        h,
        ws,
        { filename: 'a.pdf', type: 'application/pdf', data: '%PDF-1.7\n%âãÏÓ\n1 0 obj' },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/PDF document/);
      p = await refused(
        h,
        ws,
        { filename: 'notes.txt', type: 'text/plain', data: 'just some words\n' },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/text file/);
      p = await refused(h, ws, { filename: 'x.bin', data: crypto.randomBytes(256) }, 422, 'unsupported_media_type');
      expect(p.detail).toMatch(/PNG, JPEG, GIF or WebP/);
    });

    it('reads the type from the bytes: a PNG named .jpg (or declared image/jpeg) is stored as the PNG it is', async () => {
      const ws = await h.workspace();
      const png = await solid('png');
      for (const [part, name] of [
        [{ filename: 'photo.jpg', type: 'image/png', data: png }, 'photo.jpg'],
        [{ filename: 'photo', type: 'image/jpeg', data: await solid('png', 43, 30) }, 'photo'],
        [{ filename: 'photo.gif', type: 'image/webp', data: await solid('png', 41, 30) }, 'photo.gif'],
        // No name and a generic type say nothing either.
        [{ filename: 'blob', type: 'application/octet-stream', data: await solid('png', 42, 30) }, 'blob'],
      ] as const) {
        const res = await upload(h, ws.key, part);
        expect(res.statusCode, res.body).toBe(201);
        const image = res.json();
        expect(image).toMatchObject({ contentType: 'image/png', name, height: 30 });
        expect(image.url).toBe(`${PUBLIC_URL}/i/${image.id}.png`);
        expect(res.headers.location).toBe(`/v1/images/${image.id}`);
        const row = (await stored(h, ws)).find((r) => r.id === image.id)!;
        expect(row).toMatchObject({ content_type: 'image/png', name });
        expect(Buffer.from(row.data).equals(part.data)).toBe(true);
        // Served as a PNG, at its .png address only.
        const served = await h.app.inject({ method: 'GET', url: new URL(image.url).pathname });
        expect(served.headers['content-type']).toBe('image/png');
        expect((await h.app.inject({ method: 'GET', url: `/i/${image.id}.jpg` })).statusCode).toBe(404);
      }
      expect(await stored(h, ws)).toHaveLength(4);
      // A JPEG named .png is a JPEG.
      const jpeg = await upload(h, ws.key, { filename: 'scan.png', type: 'image/png', data: await solid('jpeg') });
      expect(jpeg.statusCode, jpeg.body).toBe(201);
      expect(jpeg.json()).toMatchObject({ contentType: 'image/jpeg', name: 'scan.png' });
      expect(jpeg.json().url).toMatch(/\.jpg$/);
      expect((await stored(h, ws)).find((r) => r.id === jpeg.json().id)).toMatchObject({ content_type: 'image/jpeg' });
    });

    it('whatever the name or declared type says, bytes that are none of the four are refused, storing nothing', async () => {
      const ws = await h.workspace();
      const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';
      let p = await refused(
        h,
        ws,
        { filename: 'photo.jpg', type: 'image/jpeg', data: svg },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/SVG image \(its name says JPEG\)/);
      p = await refused(
        h,
        ws,
        { filename: 'banner.png', type: 'image/png', data: '<!doctype html><html><body>hi</body></html>' },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/HTML page/);
      p = await refused(
        h,
        ws,
        { filename: 'photo.gif', type: 'image/gif', data: 'GIF89 is not enough\n' },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/text file/);
      // A PNG cut short under a JPEG's name: the bytes say PNG, and they cannot be read.
      const png = await noisyPng(32, 32);
      p = await refused(
        h,
        ws,
        { filename: 'photo.jpg', type: 'image/jpeg', data: png.subarray(0, png.length >> 1) },
        422,
        'unsupported_media_type',
      );
      expect(p.detail).toMatch(/PNG image but it cannot be read/);
    });

    it('refuses a truncated or corrupt image with 422 unsupported_media_type', async () => {
      const ws = await h.workspace();
      const png = await noisyPng(64, 64);
      const truncated = png.subarray(0, Math.floor(png.length / 2));
      let p = await refused(h, ws, { filename: 'cut.png', data: truncated }, 422, 'unsupported_media_type');
      expect(p.detail).toMatch(/PNG image but it cannot be read/);
      const corrupt = Buffer.from(png);
      for (let i = 100; i < corrupt.length - 20; i += 7) corrupt[i] = corrupt[i]! ^ 0x5a;
      p = await refused(h, ws, { filename: 'bad.png', data: corrupt }, 422, 'unsupported_media_type');
      expect(p.detail).toMatch(/cannot be read/);
      const jpeg = await noisy(64, 64);
      await refused(
        h,
        ws,
        { filename: 'cut.jpg', data: jpeg.subarray(0, jpeg.length - 200) },
        422,
        'unsupported_media_type',
      );
      // Only a header: nothing to decode.
      await refused(h, ws, { filename: 'head.png', data: png.subarray(0, 8) }, 422, 'unsupported_media_type');
    });

    it('refuses a request that is not a multipart upload of the field "file"', async () => {
      const ws = await h.workspace();
      const json = await h.call(ws.key, 'POST', '/v1/images', { file: 'abc' });
      expect(json.statusCode).toBe(415);
      expect(json.json().code).toBe('unsupported_media_type');
      expect(json.json().detail).toMatch(/multipart\/form-data/);
      const text = await h.call(ws.key, 'POST', '/v1/images', undefined, { 'content-type': 'image/png' });
      expect(text.statusCode).toBe(415);
      const wrongField = await upload(h, ws.key, { field: 'image', filename: 'a.png', data: await solid('png') });
      expect(wrongField.statusCode).toBe(422);
      expect(wrongField.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/file' }] });
      const noFile = await upload(h, ws.key, { field: 'alt', data: 'hello' });
      expect(noFile.statusCode).toBe(422);
      const empty = await upload(h, ws.key, { filename: 'empty.png', data: Buffer.alloc(0) });
      expect(empty.statusCode).toBe(422);
      expect(await stored(h, ws)).toEqual([]);
    });

    it('refuses a multipart body it cannot read (no boundary, cut short) with 422 validation_failed at /file', async () => {
      const ws = await h.workspace();
      const png = await solid('png');
      const { payload, contentType } = multipart([{ filename: 'a.png', type: 'image/png', data: png }]);
      const post = (headers: Record<string, string>, body: Buffer | string) =>
        h.app.inject({
          method: 'POST',
          url: '/v1/images',
          headers: { authorization: `Bearer ${ws.key}`, ...headers },
          payload: body,
        });
      const boundary = contentType.split('boundary=')[1]!;
      for (const [what, res] of [
        ['no boundary', await post({ 'content-type': 'multipart/form-data' }, payload)],
        ['another boundary', await post({ 'content-type': 'multipart/form-data; boundary=somethingelse' }, payload)],
        ['cut short', await post({ 'content-type': contentType }, payload.subarray(0, payload.length - 40))],
        [
          'a malformed part header',
          await post(
            { 'content-type': contentType },
            `--${boundary}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${boundary}--\r\n`,
          ),
        ],
      ] as const) {
        expect(res.statusCode, `${what}: ${res.body}`).toBe(422);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        const problem = res.json();
        expect(problem.code, what).toBe('validation_failed');
        expect(problem.errors, what).toEqual([{ path: '/file', message: expect.any(String) }]);
      }
      // Not multipart at all stays 415.
      const form = await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'file=abc');
      expect(form.statusCode).toBe(415);
      expect(form.json().code).toBe('unsupported_media_type');
      expect(await stored(h, ws)).toEqual([]);
    });

    it('lists newest first with a cursor, gets, deletes; the public address then answers 404', async () => {
      const ws = await h.workspace();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await upload(h, ws.key, { filename: `${i}.png`, data: await solid('png', 10 + i, 10) })).json().id);
      const page1 = await h.call(ws.key, 'GET', '/v1/images?limit=2');
      expect(page1.statusCode).toBe(200);
      expect(page1.json().data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
      const page2 = (await h.call(ws.key, 'GET', `/v1/images?limit=2&cursor=${page1.json().nextCursor}`)).json();
      expect(page2).toMatchObject({ data: [{ id: ids[0] }], nextCursor: null });
      expect(page2.data[0]).not.toHaveProperty('data');
      const one = await h.call(ws.key, 'GET', `/v1/images/${ids[0]}`);
      expect(one.json()).toEqual(page2.data[0]);
      const url = new URL(one.json().url);
      expect((await h.app.inject({ method: 'GET', url: url.pathname })).statusCode).toBe(200);
      expect((await h.call(ws.key, 'DELETE', `/v1/images/${ids[0]}`)).statusCode).toBe(204);
      expect((await h.call(ws.key, 'DELETE', `/v1/images/${ids[0]}`)).statusCode).toBe(404);
      expect((await h.call(ws.key, 'GET', `/v1/images/${ids[0]}`)).statusCode).toBe(404);
      expect((await stored(h, ws)).map((r) => r.id)).toEqual([ids[1], ids[2]]);
      const gone = await h.app.inject({ method: 'GET', url: url.pathname });
      expect(gone.statusCode).toBe(404);
      expect(gone.headers['cache-control']).toBe('no-store');
    });

    it('serves the public address with its type, a long cache, nosniff and an ETag', async () => {
      const ws = await h.workspace();
      const data = await solid('webp', 16, 16);
      const image = (await upload(h, ws.key, { filename: 'x.webp', data })).json();
      const path = new URL(image.url).pathname;
      expect(path).toBe(`/i/${image.id}.webp`);
      for (const p of [path, `/i/${image.id}`]) {
        // No key: the address is public.
        const res = await h.app.inject({ method: 'GET', url: p });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('image/webp');
        expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers.etag).toBe(`"${crypto.createHash('sha256').update(data).digest('hex')}"`);
        expect(res.rawPayload.equals(data)).toBe(true);
      }
      const etag = (await h.app.inject({ method: 'GET', url: path })).headers.etag as string;
      const cached = await h.app.inject({ method: 'GET', url: path, headers: { 'if-none-match': etag } });
      expect(cached.statusCode).toBe(304);
      expect(cached.rawPayload.length).toBe(0);
      const head = await h.app.inject({ method: 'HEAD', url: path });
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-type']).toBe('image/webp');
      // Another extension, an unknown id, a malformed one: 404.
      for (const p of [
        `/i/${image.id}.png`,
        `/i/${image.id}.svg`,
        '/i/img_01JDB44V8Z0B2D4F6H8K0M2P4R.png',
        '/i/nope',
        '/i/..%2f..%2fetc',
      ])
        expect((await h.app.inject({ method: 'GET', url: p })).statusCode, p).toBe(404);
      const jpeg = (await upload(h, ws.key, { filename: 'x.jpg', data: await solid('jpeg') })).json();
      expect(jpeg.url).toMatch(/\.jpg$/);
      const alt = await h.app.inject({ method: 'GET', url: `/i/${jpeg.id}.jpeg` });
      expect(alt.statusCode).toBe(200);
      expect(alt.headers['content-type']).toBe('image/jpeg');
    });

    it("another workspace can't list, get or delete an image; its public address works for anyone", async () => {
      const ws = await h.workspace();
      const other = await h.workspace();
      const image = (await upload(h, ws.key, { filename: 'mine.png', data: await solid('png') })).json();
      expect((await h.call(other.key, 'GET', '/v1/images')).json().data).toEqual([]);
      expect((await h.call(other.key, 'GET', `/v1/images/${image.id}`)).statusCode).toBe(404);
      expect((await h.call(other.key, 'DELETE', `/v1/images/${image.id}`)).statusCode).toBe(404);
      expect(await stored(h, ws)).toHaveLength(1);
      expect((await h.app.inject({ method: 'GET', url: new URL(image.url).pathname })).statusCode).toBe(200);
    });

    it('scopes: write:broadcasts uploads and deletes, read:broadcasts lists; others are refused', async () => {
      const ws = await h.workspace();
      const reader = await h.key(ws, ['read:broadcasts']);
      const writer = await h.key(ws, ['write:broadcasts']);
      const formsOnly = await h.key(ws, ['write:forms']);
      const png = await solid('png');
      const denied = await upload(h, reader, { filename: 'a.png', data: png });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().detail).toMatch(/write:broadcasts/);
      expect((await upload(h, null, { filename: 'a.png', data: png })).statusCode).toBe(401);
      expect(await stored(h, ws)).toEqual([]);
      const image = (await upload(h, writer, { filename: 'a.png', data: png })).json();
      expect((await h.call(reader, 'GET', '/v1/images')).json().data).toHaveLength(1);
      expect((await h.call(formsOnly, 'GET', '/v1/images')).statusCode).toBe(403);
      expect((await h.call(reader, 'DELETE', `/v1/images/${image.id}`)).statusCode).toBe(403);
      expect((await h.call(writer, 'DELETE', `/v1/images/${image.id}`)).statusCode).toBe(204);
    });

    it('an upload with an Idempotency-Key is answered once and replayed', async () => {
      const ws = await h.workspace();
      const { payload, contentType } = multipart([{ filename: 'a.png', data: await solid('png', 9, 9) }]);
      const send = () =>
        h.app.inject({
          method: 'POST',
          url: '/v1/images',
          headers: { authorization: `Bearer ${ws.key}`, 'content-type': contentType, 'idempotency-key': 'up-1' },
          payload,
        });
      const first = await send();
      expect(first.statusCode).toBe(201);
      const second = await send();
      expect(second.statusCode).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.json()).toEqual(first.json());
      expect(await stored(h, ws)).toHaveLength(1);
    });

    it('an Idempotency-Key covers the file: another file of the same size is 422 idempotency_key_reused', async () => {
      const ws = await h.workspace();
      const blue = await solid('png', 9, 9);
      const red = await sharp({ create: { width: 9, height: 9, channels: 3, background: '#cc3333' } })
        .png()
        .toBuffer();
      expect(red.length).toBe(blue.length);
      expect(red.equals(blue)).toBe(false);
      // Each send is a new multipart body (a new boundary, of the same length), as a client's retry would be.
      const send = (data: Buffer, filename = 'a.png') => {
        const { payload, contentType } = multipart([{ filename, type: 'image/png', data }]);
        return h.app.inject({
          method: 'POST',
          url: '/v1/images',
          headers: { authorization: `Bearer ${ws.key}`, 'content-type': contentType, 'idempotency-key': 'up-2' },
          payload,
        });
      };
      const first = await send(blue);
      expect(first.statusCode, first.body).toBe(201);
      const other = await send(red);
      expect(other.statusCode, other.body).toBe(422);
      expect(other.json().code).toBe('idempotency_key_reused');
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect((await stored(h, ws)).map((r) => r.id)).toEqual([first.json().id]);
      // Another name is another request as well (the name is stored).
      const renamed = await send(blue, 'b.png');
      expect(renamed.statusCode).toBe(422);
      expect(renamed.json().code).toBe('idempotency_key_reused');
      // The same file again replays the first answer, Location included.
      const again = await send(blue);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.location).toBe(`/v1/images/${first.json().id}`);
      expect(again.json()).toEqual(first.json());
      expect(await stored(h, ws)).toHaveLength(1);
      // The red file under a key of its own is stored.
      const { payload, contentType } = multipart([{ filename: 'a.png', data: red }]);
      const own = await h.app.inject({
        method: 'POST',
        url: '/v1/images',
        headers: { authorization: `Bearer ${ws.key}`, 'content-type': contentType, 'idempotency-key': 'up-3' },
        payload,
      });
      expect(own.statusCode).toBe(201);
      expect(own.json().id).not.toBe(first.json().id);
      expect(await stored(h, ws)).toHaveLength(2);
    });
  },
  { publicUrl: PUBLIC_URL },
);

/** A PNG with noise in it (so that cutting or flipping its bytes breaks its image data). */
function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(crypto.randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}
