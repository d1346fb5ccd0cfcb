/**
 * The parts of a report as its sender laid them out (RFC 3462 `multipart/report`, RFC 5965 ARF): a light walk of the
 * MIME tree that does not open the returned message. mailparser opens a `message/rfc822` part that is not an attachment
 * (Microsoft's JMRP and many DSNs mark it `inline`, or not at all) and mixes its text into the report's: the copy of our
 * own newsletter would then be read as the receiver's words, and its headers (the DKIM signature above all) would be
 * lost. Here the returned message stays one leaf, kept as it came, and the notice is the report's own first text part.
 */
export interface MimeLeaf {
  /** Lower case, without parameters: `text/plain`, `message/delivery-status`, `message/rfc822`. */
  type: string;
  /** The decoded body (base64 and quoted-printable undone). */
  body: Buffer;
  charset: string | null;
  filename: string | null;
}

const MAX_DEPTH = 5;
const MAX_LEAVES = 50;

/** Header fields of a block, unfolded, names lower-cased (the first of each). */
function headerMap(block: string): Map<string, string> {
  const out = new Map<string, string>();
  let last: string | null = null;
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && last) {
      out.set(last, `${out.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) {
      last = null;
      continue;
    }
    last = line.slice(0, colon).trim().toLowerCase();
    if (!out.has(last)) out.set(last, line.slice(colon + 1).trim());
    else last = null;
  }
  return out;
}

/** `text/plain; charset="utf-8"; name=x` → the type and its parameters (lower-case names, unquoted values). */
function contentType(value: string | undefined): { type: string; params: Map<string, string> } {
  const [head = '', ...rest] = (value ?? 'text/plain').split(';');
  const params = new Map<string, string>();
  for (const p of rest.join(';').matchAll(/([a-z0-9*_-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^;\s]+)/gi))
    params.set(p[1]!.toLowerCase(), (p[3] ?? p[2]!).replace(/\\(.)/g, '$1'));
  return { type: head.trim().toLowerCase() || 'text/plain', params };
}

function decodeQuotedPrintable(s: string): Buffer {
  const bytes: number[] = [];
  const text = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, 'latin1'));
  }
  return Buffer.from(bytes);
}

function decodeBody(raw: string, encoding: string | undefined): Buffer {
  const e = (encoding ?? '7bit').trim().toLowerCase();
  if (e === 'base64') return Buffer.from(raw.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (e === 'quoted-printable') return decodeQuotedPrintable(raw);
  return Buffer.from(raw, 'latin1');
}

/** The leaves of the MIME tree of `raw`, in order; `message/*` parts are leaves (never opened). */
export function mimeLeaves(raw: Buffer): MimeLeaf[] {
  // latin1 keeps every byte as one character, so slicing never splits a UTF-8 sequence: bodies are bytes again later.
  const leaves: MimeLeaf[] = [];
  const walk = (entity: string, depth: number) => {
    if (leaves.length >= MAX_LEAVES) return;
    const split = /\r?\n\r?\n/.exec(entity);
    const headBlock = split ? entity.slice(0, split.index) : entity;
    const body = split ? entity.slice(split.index + split[0].length) : '';
    const headers = headerMap(headBlock);
    const { type, params } = contentType(headers.get('content-type'));
    const boundary = params.get('boundary');
    if (type.startsWith('multipart/') && boundary && depth < MAX_DEPTH) {
      const delimiter = `--${boundary}`;
      // A delimiter line is the boundary alone (or closing with "--"): a longer boundary that starts the same is not it.
      const escaped = delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const chunks = body.split(new RegExp(`(?:^|\\r?\\n)${escaped}(?=--|[ \\t]*\\r?\\n|[ \\t]*$)`));
      // No delimiter at all (a mail system that declared parts and wrote none): the body is read as one text.
      if (chunks.length < 2) {
        leaves.push({ type: 'text/plain', body: Buffer.from(body, 'latin1'), charset: null, filename: null });
        return;
      }
      // chunks[0] is the preamble; a chunk starting with "--" is the end (and the epilogue).
      for (const chunk of chunks.slice(1)) {
        if (chunk.startsWith('--')) break;
        walk(chunk.replace(/^[ \t]*\r?\n/, ''), depth + 1);
      }
      return;
    }
    const disposition = contentType(headers.get('content-disposition'));
    leaves.push({
      type,
      body: decodeBody(body, headers.get('content-transfer-encoding')),
      charset: params.get('charset')?.toLowerCase() ?? null,
      filename: disposition.params.get('filename') ?? params.get('name') ?? null,
    });
  };
  walk(raw.toString('latin1'), 0);
  return leaves;
}

/** A leaf's text in its charset (UTF-8 when it names none or one Node does not know). */
export function leafText(leaf: MimeLeaf): string {
  try {
    return new TextDecoder(leaf.charset ?? 'utf-8').decode(leaf.body);
  } catch {
    return leaf.body.toString('utf8');
  }
}
