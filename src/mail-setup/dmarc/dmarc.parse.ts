import { isIP } from 'node:net';
import zlib from 'node:zlib';
import { Unzip, UnzipInflate } from 'fflate';
import { XMLParser } from 'fast-xml-parser';

/**
 * DMARC aggregate reports (RFC 7489 appendix C, and DMARCbis's `urn:ietf:params:xml:ns:dmarc-2.0`), as receivers
 * mail them to the `rua` address: an XML file, gzipped (`.xml.gz`: Microsoft, Yahoo) or zipped (`.zip`: Google), attached
 * to a message. Read here with fflate (zip, streamed under a size cap), node's zlib (gzip, with the same cap: a small
 * bomb never expands past it) and fast-xml-parser (its entity limits on), into plain records: nothing of the file is
 * trusted beyond its shape, and every string is bounded.
 */
export interface DmarcAggregate {
  orgName: string;
  email: string | null;
  reportId: string;
  /** The report's range, ISO timestamps. */
  begin: string;
  end: string;
  /** The UTC day it counts on: the middle of its range (a receiver's day in its own time zone lands on that day). */
  day: string;
  policy: {
    domain: string;
    p: string | null;
    sp: string | null;
    adkim: string | null;
    aspf: string | null;
    pct: number | null;
  };
  records: DmarcRecord[];
}

export interface DmarcRecord {
  sourceIp: string;
  count: number;
  /** What the receiver did: none, quarantine, reject. */
  disposition: string;
  /** The receiver's DMARC verdicts (aligned): pass or fail. */
  dkim: string;
  spf: string;
  headerFrom: string;
  envelopeFrom: string | null;
  dkimResults: { domain: string; selector: string | null; result: string }[];
  spfResults: { domain: string; scope: string | null; result: string }[];
  /** Policy overrides the receiver applied (forwarded, mailing_list, local_policy, …). */
  reasons: { type: string; comment: string | null }[];
}

/** The largest XML a report may expand to (the biggest receivers' daily reports are a few MB). */
export const DMARC_MAX_XML_BYTES = 20 * 1024 * 1024;
/** Records kept of one report; the rest is dropped (and said so). */
export const DMARC_MAX_RECORDS = 20_000;
const MAX_FILES_PER_ZIP = 10;

export class DmarcFormatError extends Error {}

const GZIP = [0x1f, 0x8b];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const startsWith = (buf: Uint8Array, magic: number[]) => magic.every((b, i) => buf[i] === b);

function capped(): { add(chunk: Uint8Array): void; bytes(): Buffer } {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    add(chunk) {
      size += chunk.length;
      if (size > DMARC_MAX_XML_BYTES)
        throw new DmarcFormatError(`the report expands past ${DMARC_MAX_XML_BYTES / 1024 / 1024} MB`);
      chunks.push(chunk);
    },
    bytes: () => Buffer.concat(chunks),
  };
}

function gunzip(data: Uint8Array): Buffer {
  try {
    // zlib stops at the cap (and refuses a truncated stream) rather than expanding all of it first.
    return zlib.gunzipSync(data, { maxOutputLength: DMARC_MAX_XML_BYTES });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new DmarcFormatError(`the report expands past ${DMARC_MAX_XML_BYTES / 1024 / 1024} MB`);
    throw new DmarcFormatError(`not a readable gzip file (${(err as Error).message})`);
  }
}

/** The XML files of a zip archive (at most a few, each under the cap). */
function unzip(data: Uint8Array): Buffer[] {
  const files: Buffer[] = [];
  let failure: Error | null = null;
  const uz = new Unzip((file) => {
    if (!/\.xml$/i.test(file.name) || files.length >= MAX_FILES_PER_ZIP) return;
    const out = capped();
    file.ondata = (err, chunk, final) => {
      if (failure) return;
      if (err) {
        failure = new DmarcFormatError(`not a readable zip entry (${err.message})`);
        return;
      }
      try {
        out.add(chunk);
      } catch (e) {
        failure = e as Error;
        file.terminate();
        return;
      }
      if (final) files.push(out.bytes());
    };
    file.start();
  });
  uz.register(UnzipInflate);
  try {
    uz.push(data, true);
  } catch (err) {
    throw new DmarcFormatError(`not a readable zip file (${(err as Error).message})`);
  }
  if (failure) throw failure;
  return files;
}

/** The XML documents in an attachment: itself, gunzipped, or the .xml files of a zip; none if it is something else. */
export function xmlFilesOf(content: Buffer): Buffer[] {
  if (startsWith(content, GZIP)) return [gunzip(content)];
  if (startsWith(content, ZIP)) return unzip(content);
  const head = content
    .subarray(0, 200)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return head.startsWith('<') ? [content] : [];
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
});

type Node = Record<string, unknown>;
const obj = (v: unknown): Node => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
const str = (v: unknown, max = 255): string | null => {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  const s = String(v).trim().slice(0, max);
  return s || null;
};
const word = (v: unknown, fallback: string): string => {
  const s = str(v, 40)?.toLowerCase();
  return s && /^[a-z0-9_-]+$/.test(s) ? s : fallback;
};
const domainOf = (v: unknown): string | null => {
  const s = str(v, 253)?.toLowerCase().replace(/\.$/, '');
  return s && /^[a-z0-9._-]+$/.test(s) ? s : null;
};

function epoch(v: unknown, what: string): Date {
  const n = Number(str(v));
  if (!Number.isFinite(n) || n < 0 || n > 32_503_680_000)
    throw new DmarcFormatError(`date_range ${what} is not a Unix time`);
  return new Date(n * 1000);
}

/** One aggregate report from its XML. Throws DmarcFormatError for anything that is not one. */
export function parseAggregateXml(xml: Buffer | string): DmarcAggregate {
  let doc: Node;
  try {
    doc = obj(parser.parse(typeof xml === 'string' ? xml : xml.toString('utf8')));
  } catch (err) {
    throw new DmarcFormatError(`not well-formed XML (${(err as Error).message.split('\n')[0]})`);
  }
  const feedback = obj(doc.feedback);
  const meta = obj(feedback.report_metadata);
  const published = obj(feedback.policy_published);
  const orgName = str(meta.org_name);
  const reportId = str(meta.report_id);
  const policyDomain = domainOf(published.domain);
  if (!orgName || !reportId || !policyDomain)
    throw new DmarcFormatError('not a DMARC aggregate report (no org_name, report_id or policy_published domain)');
  const range = obj(meta.date_range);
  const begin = epoch(range.begin, 'begin');
  const end = epoch(range.end, 'end');
  if (end < begin) throw new DmarcFormatError('date_range ends before it begins');
  const middle = new Date((begin.getTime() + end.getTime()) / 2);
  const pct = Number(str(published.pct));
  const records = arr(feedback.record)
    .slice(0, DMARC_MAX_RECORDS)
    .flatMap((r): DmarcRecord[] => {
      const rec = obj(r);
      const row = obj(rec.row);
      const evaluated = obj(row.policy_evaluated);
      const ids = obj(rec.identifiers);
      const auth = obj(rec.auth_results);
      const ip = str(row.source_ip, 45);
      const count = Number(str(row.count));
      if (!ip || !isIP(ip) || !Number.isInteger(count) || count < 0 || count > 1e12) return [];
      return [
        {
          sourceIp: ip,
          count,
          disposition: word(evaluated.disposition, 'none'),
          dkim: word(evaluated.dkim, 'fail') === 'pass' ? 'pass' : 'fail',
          spf: word(evaluated.spf, 'fail') === 'pass' ? 'pass' : 'fail',
          headerFrom: domainOf(ids.header_from) ?? policyDomain,
          envelopeFrom: domainOf(ids.envelope_from),
          dkimResults: arr(auth.dkim)
            .slice(0, 10)
            .map((d) => obj(d))
            .map((d) => ({
              domain: domainOf(d.domain) ?? '',
              selector: str(d.selector, 100),
              result: word(d.result, 'none'),
            })),
          spfResults: arr(auth.spf)
            .slice(0, 10)
            .map((s) => obj(s))
            .map((s) => ({
              domain: domainOf(s.domain) ?? '',
              scope: str(s.scope, 20),
              result: word(s.result, 'none'),
            })),
          reasons: arr(evaluated.reason)
            .slice(0, 10)
            .map((x) => obj(x))
            .map((x) => ({ type: word(x.type, 'other'), comment: str(x.comment) })),
        },
      ];
    });
  return {
    orgName,
    email: str(meta.email),
    reportId,
    begin: begin.toISOString(),
    end: end.toISOString(),
    day: middle.toISOString().slice(0, 10),
    policy: {
      domain: policyDomain,
      p: word(published.p, '') || null,
      sp: word(published.sp, '') || null,
      adkim: word(published.adkim, '') || null,
      aspf: word(published.aspf, '') || null,
      pct: Number.isFinite(pct) && str(published.pct) !== null ? pct : null,
    },
    records,
  };
}

/** Whether two domains align under relaxed alignment, near enough for words: one is the other or under it. */
function aligned(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}

/**
 * Why a record failed DMARC, in words a sender acts on (null when it passed): DKIM not signed by the From domain (or
 * signed by the relay's), SPF passing for someone else's envelope domain, or failing; and a receiver's override.
 */
export function failureReason(r: DmarcRecord): string | null {
  if (r.dkim === 'pass' || r.spf === 'pass') return null;
  const from = r.headerFrom;
  const parts: string[] = [];
  const ownDkim = r.dkimResults.filter((d) => d.domain && aligned(d.domain, from));
  const otherDkim = r.dkimResults.filter((d) => d.domain && !aligned(d.domain, from) && d.result === 'pass');
  if (ownDkim.length) parts.push(`DKIM signature of ${ownDkim[0]!.domain}: ${ownDkim[0]!.result}`);
  else if (otherDkim.length) parts.push(`DKIM signed by ${otherDkim[0]!.domain}, not by ${from}`);
  else parts.push(r.dkimResults.length ? `DKIM ${r.dkimResults[0]!.result}` : 'no DKIM signature');
  const spf = r.spfResults[0];
  if (!spf) parts.push('no SPF result');
  else if (spf.result === 'pass' && spf.domain && !aligned(spf.domain, from))
    parts.push(`SPF passes for ${spf.domain}, not aligned with ${from}`);
  else parts.push(`SPF ${spf.result}${spf.domain ? ` for ${spf.domain}` : ''}`);
  const overrides = r.reasons.map((x) => x.type).filter((t) => t !== 'other');
  if (overrides.length) parts.push(`receiver override: ${[...new Set(overrides)].join(', ')}`);
  return parts.join('; ').slice(0, 300);
}
