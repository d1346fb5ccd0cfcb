import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { ConfigError } from '../../errors/config-error.js';
import type { DnsRecord, RecordCheck, RecordStatus, Verification } from './domains.schemas.js';

/**
 * DNS verification of a sending domain: TXT lookups over `node:dns` (c-ares), and the pure rules that
 * turn the answers into a result per record plus SPF/DMARC advice.
 */

/** The outcome of one TXT lookup: the values found (each record's strings joined), or why there are none. */
export type TxtAnswer =
  | { ok: true; values: string[] }
  | { ok: false; status: Extract<RecordStatus, 'MISSING' | 'TIMEOUT' | 'ERROR'>; code: string };

export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** TXT and MX lookups (the MX answer's values are the exchange host names). */
export interface DnsLookup {
  txt: TxtLookup;
  mx: TxtLookup;
}

/**
 * Checks DNS_SERVERS entries (`host` or `host:port`, IPv6 as `[addr]:port`) and returns them as
 * `Resolver.setServers` takes them. Host names are refused: a resolver is found by its address.
 */
export function parseDnsServers(entries: readonly string[]): string[] {
  return entries.map((raw) => {
    const entry = raw.trim();
    let host = entry;
    let port: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      host = bracketed[1]!;
      port = bracketed[2];
    } else if (isIP(entry) !== 6 && entry.includes(':')) {
      const i = entry.lastIndexOf(':');
      host = entry.slice(0, i);
      port = entry.slice(i + 1);
    }
    const p = port === undefined ? 53 : Number(port);
    if (!isIP(host) || !/^\d{1,5}$/.test(port ?? '53') || p < 1 || p > 65535) {
      throw new ConfigError(`DNS_SERVERS: "${raw}" is not an IP address or IP:port (e.g. 1.1.1.1 or 127.0.0.1:5353)`);
    }
    return isIP(host) === 6 ? `[${host}]:${p}` : `${host}:${p}`;
  });
}

/**
 * A TXT lookup through c-ares with the given servers (empty: the system's), one try per server and a
 * wall-clock limit per query (c-ares' own timer can run to twice its setting). A fresh Resolver per query,
 * so that cancelling one query on timeout leaves the others alone.
 */
export function resolverLookup(servers: readonly string[], timeoutMs: number): DnsLookup {
  const limit = timeoutMs * Math.max(1, servers.length);
  const query =
    (ask: (resolver: InstanceType<typeof dns.Resolver>, name: string) => Promise<string[]>) =>
    async (name: string): Promise<TxtAnswer> => {
      const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
      if (servers.length) resolver.setServers([...servers]);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<TxtAnswer>((resolve) => {
        timer = setTimeout(() => {
          resolver.cancel();
          resolve({ ok: false, status: 'TIMEOUT', code: 'ETIMEOUT' });
        }, limit);
      });
      const lookup = ask(resolver, name).then(
        (values): TxtAnswer => ({ ok: true, values }),
        (err: unknown): TxtAnswer => {
          const code = String((err as { code?: unknown } | null)?.code ?? 'EUNKNOWN');
          if (code === 'ENODATA' || code === 'ENOTFOUND') return { ok: false, status: 'MISSING', code };
          if (code === 'ETIMEOUT' || code === 'ECANCELLED') return { ok: false, status: 'TIMEOUT', code: 'ETIMEOUT' };
          return { ok: false, status: 'ERROR', code };
        },
      );
      try {
        return await Promise.race([lookup, timedOut]);
      } finally {
        clearTimeout(timer);
      }
    };
  return {
    txt: query(async (r, name) => (await r.resolveTxt(name)).map((chunks) => chunks.join(''))),
    mx: query(async (r, name) =>
      (await r.resolveMx(name)).sort((a, b) => a.priority - b.priority).map((m) => m.exchange.toLowerCase()),
    ),
  };
}

/**
 * A DKIM tag list (RFC 6376 section 3.2): `tag=value` pairs separated by `;`, whitespace around tags and
 * values (and inside base64 values) not significant. Returns null if it is not a tag list.
 */
export function parseTagList(text: string): Map<string, string> | null {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const tag = part.slice(0, eq).trim();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(tag) || tags.has(tag)) return null;
    tags.set(tag, part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/** Why a DKIM record does not match the expected one (`v`, `k` and `p` compared), or null if it does. */
export function dkimDifference(found: string, expected: string): string | null {
  const f = parseTagList(found);
  const e = parseTagList(expected)!;
  if (!f) return 'it is not a DKIM tag list (tag=value; …)';
  if (f.has('v') && f.get('v') !== e.get('v')) return `v= is "${f.get('v')}", expected "${e.get('v')}"`;
  if ((f.get('k') ?? 'rsa') !== e.get('k')) return `k= is "${f.get('k')}", expected "${e.get('k')}"`;
  if (!f.has('p')) return 'it has no p= (public key) tag';
  if (f.get('p') !== e.get('p'))
    return f.get('p') === '' ? 'its p= is empty (a revoked key)' : "its p= (public key) differs from this domain's key";
  return null;
}

const unquote = (s: string) =>
  s
    .trim()
    .replace(/^"(.*)"$/s, '$1')
    .trim();

export const SPF = /^v=spf1(\s|$)/i;
export const DMARC = /^v\s*=\s*DMARC1\s*(;|$)/i;

function describeFailure(answer: Extract<TxtAnswer, { ok: false }>, name: string): string {
  if (answer.status === 'TIMEOUT')
    return `the DNS lookup of ${name} timed out; check that the DNS servers are reachable and verify again`;
  const why: Record<string, string> = {
    ESERVFAIL: 'the DNS server reported a failure (SERVFAIL)',
    EREFUSED: 'the DNS server refused the query',
    ECONNREFUSED: 'the DNS server could not be reached',
    EFORMERR: 'the DNS server could not parse the query',
    EBADRESP: 'the DNS server sent a malformed answer',
  };
  return `the DNS lookup of ${name} failed: ${why[answer.code] ?? answer.code}; verify again later`;
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export interface VerifyInput {
  domain: string;
  ownership: DnsRecord;
  dkim: DnsRecord;
  /** The bounce domain's MX target and SPF record (advisory). */
  bounceMx: DnsRecord;
  bounceSpf: DnsRecord;
}

/**
 * Looks up the ownership and DKIM records, SPF (TXT on the domain) and DMARC (`_dmarc.<domain>`) at
 * once, and judges them. The domain is verified when ownership and DKIM both are; SPF and DMARC only
 * produce advice.
 */
export async function checkDomain(
  dnsLookup: DnsLookup,
  input: VerifyInput,
  checkedAt: () => string,
): Promise<{ verified: boolean; verification: Verification }> {
  const { domain, ownership, dkim, bounceMx, bounceSpf } = input;
  const lookup = dnsLookup.txt;
  const dmarcName = `_dmarc.${domain}`;
  const [own, key, apex, dmarc, mx, bounceTxt] = await Promise.all([
    lookup(ownership.name),
    lookup(dkim.name),
    lookup(domain),
    lookup(dmarcName),
    dnsLookup.mx(bounceMx.name),
    lookup(bounceSpf.name),
  ]);
  const advice: string[] = [];

  const judge = (
    record: DnsRecord,
    answer: TxtAnswer,
    matches: (value: string) => string | null,
    what: string,
  ): RecordCheck => {
    if (!answer.ok) {
      if (answer.status === 'MISSING')
        advice.push(`Publish ${what}: a TXT record at ${record.name} with the value given in records.`);
      else advice.push(`${capitalize(describeFailure(answer, record.name))}.`);
      return { ...record, status: answer.status, found: [] };
    }
    if (answer.values.length === 0) {
      advice.push(`Publish ${what}: a TXT record at ${record.name} with the value given in records.`);
      return { ...record, status: 'MISSING', found: [] };
    }
    const reasons = answer.values.map(matches);
    if (reasons.includes(null)) return { ...record, status: 'VERIFIED', found: answer.values };
    advice.push(
      `The TXT record at ${record.name} does not match ${what}: ${reasons[0]}. Replace it with the value given in records.`,
    );
    return { ...record, status: 'MISMATCH', found: answer.values };
  };

  const ownershipCheck = judge(
    ownership,
    own,
    (v) => (unquote(v) === ownership.value ? null : `found "${v}"`),
    'the ownership token',
  );
  const dkimCheck = judge(dkim, key, (v) => dkimDifference(v, dkim.value), 'the DKIM key');
  if (dkimCheck.status !== 'VERIFIED' && dkim.value.length > 255) {
    advice.push(
      'A TXT string holds at most 255 characters: if your DNS provider asks for it, split the DKIM value into several quoted strings; resolvers join them again.',
    );
  }

  const spfRecords = apex.ok ? apex.values.filter((v) => SPF.test(v.trim())) : [];
  if (!apex.ok && apex.status !== 'MISSING') {
    advice.push(`SPF was not checked: ${describeFailure(apex, domain)}.`);
  } else if (spfRecords.length === 0) {
    advice.push(
      `Add an SPF record: a TXT record on ${domain} starting with "v=spf1" that lists the servers allowed to send its mail, e.g. "v=spf1 include:<your mail provider> ~all". Gmail and Yahoo require SPF of bulk senders.`,
    );
  } else if (spfRecords.length > 1) {
    advice.push(
      `${domain} has ${spfRecords.length} SPF records; receivers treat more than one as an error (RFC 7208). Merge them into one.`,
    );
  }

  const dmarcRecords = dmarc.ok ? dmarc.values.filter((v) => DMARC.test(v.trim())) : [];
  if (!dmarc.ok && dmarc.status !== 'MISSING') {
    advice.push(`DMARC was not checked: ${describeFailure(dmarc, dmarcName)}.`);
  } else if (dmarcRecords.length === 0) {
    advice.push(
      `Add a DMARC record: a TXT record at ${dmarcName} such as "v=DMARC1; p=none; rua=mailto:dmarc-reports@${domain}". Gmail and Yahoo require DMARC of bulk senders.`,
    );
  }

  // The bounce domain: advice only. Without its MX, bounce reports never reach the inbound listener (the
  // bounces at send time still count); without its SPF, receivers cannot align SPF with the From domain.
  const mxHosts = mx.ok ? mx.values.map((h) => h.replace(/\.$/, '')) : [];
  if (!mx.ok && mx.status !== 'MISSING')
    advice.push(`The bounce domain's MX was not checked: ${describeFailure(mx, bounceMx.name)}.`);
  else if (!mxHosts.includes(bounceMx.value.toLowerCase())) {
    advice.push(
      `Warning: publish an MX record at ${bounceMx.name} pointing at ${bounceMx.value} (priority ${bounceMx.priority ?? 10}): bounce and complaint reports go there. Sending works without it, but later bounces are then not seen.`,
    );
  }
  const bounceSpfRecords = bounceTxt.ok ? bounceTxt.values.filter((v) => SPF.test(v.trim())) : [];
  if (bounceSpfRecords.length === 0 && (bounceTxt.ok || bounceTxt.status === 'MISSING')) {
    advice.push(
      `Warning: publish an SPF record at ${bounceSpf.name}: "${bounceSpf.value}". Messages go out with a Return-Path at that name, and SPF is checked there.`,
    );
  }

  return {
    verified: ownershipCheck.status === 'VERIFIED' && dkimCheck.status === 'VERIFIED',
    verification: {
      checkedAt: checkedAt(),
      records: [ownershipCheck, dkimCheck],
      spf: { found: spfRecords.length > 0, record: spfRecords[0] ?? null },
      dmarc: { found: dmarcRecords.length > 0, record: dmarcRecords[0] ?? null },
      bounce: {
        mx: { found: mxHosts.includes(bounceMx.value.toLowerCase()), hosts: mxHosts },
        spf: { found: bounceSpfRecords.length > 0, record: bounceSpfRecords[0] ?? null },
      },
      advice,
    },
  };
}
