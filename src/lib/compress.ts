/**
 * Response compression without a plugin: `negotiateEncoding` picks br or gzip from a request's
 * Accept-Encoding (q-values honoured, `q=0` refuses, `*` accepted), and `sendCompressed` compresses a small
 * text answer made per request (index.html with its nonce, the hosted pages, embed.js) on the fly. Static,
 * larger files are compressed once at build time instead (see console/vite.config.ts).
 */
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip';

/** Below this many bytes, compressing saves less than it costs. */
export const MIN_COMPRESS_BYTES = 512;

/** The encoding to answer with for this Accept-Encoding header: br over gzip at equal weight; null for identity. */
export function negotiateEncoding(header: string | string[] | undefined): Encoding | null {
  if (!header) return null;
  const text = Array.isArray(header) ? header.join(',') : header;
  const weights = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (Number.isFinite(q)) weights.set(name.trim(), q);
  }
  const weight = (name: string) =>
    weights.get(name) ?? (name === 'gzip' ? weights.get('x-gzip') : undefined) ?? weights.get('*') ?? 0;
  const br = weight('br');
  const gzip = weight('gzip');
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? 'br' : 'gzip';
}

/** Compresses `body` for this request when it asks for it and the body is worth it; sets Vary either way. */
export function sendCompressed(req: FastifyRequest, reply: FastifyReply, body: string | Buffer): FastifyReply {
  reply.header('vary', 'Accept-Encoding');
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const encoding = raw.length >= MIN_COMPRESS_BYTES ? negotiateEncoding(req.headers['accept-encoding']) : null;
  if (!encoding) return reply.send(raw);
  const packed = compress(raw, encoding);
  return reply.header('content-encoding', encoding).header('content-length', packed.length).send(packed);
}

function compress(raw: Buffer, encoding: Encoding): Buffer {
  return encoding === 'br'
    ? zlib.brotliCompressSync(raw, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
      })
    : zlib.gzipSync(raw, { level: 6 });
}

interface Made {
  raw: Buffer;
  packed: Partial<Record<Encoding, Buffer>>;
}

const made = new WeakMap<object, Map<string, Made>>();

/**
 * sendCompressed for an answer that is the same every time for `key` (an object that lives as long as the answer
 * holds, e.g. a cached form) and `name`: the body is made, and compressed for each encoding, once. A hosted form's
 * page and success page are the same for every visitor; brotli alone cost ~0.3 ms per answer under load
 * (bench/README.md, bench:submit).
 */
export function sendCompressedOnce(
  req: FastifyRequest,
  reply: FastifyReply,
  key: object,
  name: string,
  body: () => string | Buffer,
): FastifyReply {
  let byName = made.get(key);
  if (!byName) made.set(key, (byName = new Map()));
  let entry = byName.get(name);
  if (!entry) {
    const b = body();
    entry = { raw: typeof b === 'string' ? Buffer.from(b, 'utf8') : b, packed: {} };
    byName.set(name, entry);
  }
  reply.header('vary', 'Accept-Encoding');
  const encoding = entry.raw.length >= MIN_COMPRESS_BYTES ? negotiateEncoding(req.headers['accept-encoding']) : null;
  if (!encoding) return reply.send(entry.raw);
  const packed = (entry.packed[encoding] ??= compress(entry.raw, encoding));
  return reply.header('content-encoding', encoding).header('content-length', packed.length).send(packed);
}
