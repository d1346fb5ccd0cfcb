import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { ConfigError } from '../../errors/config-error.js';
import type { RelayProfileName } from '../../mail/relay-profiles.js';
import { bounceDomain } from '../../mail/verp.js';
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

/**
 * TXT and MX lookups (the MX answer's values are the exchange host names), CNAME (the targets), PTR (`ptr` takes an IP
 * address: the names its reverse zone gives) and the addresses of a name (A and AAAA).
 */
export interface DnsLookup {
  txt: TxtLookup;
  mx: TxtLookup;
  cname: TxtLookup;
  ptr: TxtLookup;
  addresses: TxtLookup;
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
  const lower = (names: string[]) => names.map((n) => n.toLowerCase().replace(/\.$/, ''));
  return {
    txt: query(async (r, name) => (await r.resolveTxt(name)).map((chunks) => chunks.join(''))),
    mx: query(async (r, name) =>
      (await r.resolveMx(name)).sort((a, b) => a.priority - b.priority).map((m) => m.exchange.toLowerCase()),
    ),
    cname: query(async (r, name) => lower(await r.resolveCname(name))),
    ptr: query(async (r, ip) => lower(await r.reverse(ip))),
    addresses: query(async (r, name) => {
      const [v4, v6] = await Promise.allSettled([r.resolve4(name), r.resolve6(name)]);
      const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (!found.length) throw v4.status === 'rejected' ? v4.reason : { code: 'ENODATA' };
      return found;
    }),
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
  /** The envelope sender's domain and its records for the installation's relay (mail/relay-profiles.ts). */
  envelope: EnvelopeDns;
  /** The domain's tracking host and the name its CNAME must point at (PUBLIC_URL's host), if it has one. */
  tracking: { host: string; target: string } | null;
}

/** What relay-profiles.ts says of the envelope sender's domain, with the profile it is for. */
export interface EnvelopeDns {
  profile: RelayProfileName;
  domain: string | null;
  records: DnsRecord[];
  /** The SPF mechanism the envelope domain's record must have (`include:amazonses.com`, SENDING_SPF), or null. */
  spfInclude: string | null;
  /** What to do at the relay, said with the advice when the records are not all there. */
  advice: string | null;
}

/** The DMARC tags of a record (`p`, `aspf`, `rua`, …), lower-case names. */
export function dmarcTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return tags;
}

/** Whether an SPF record lets the mechanism through: it names it (`include:x`, `ip4:…`, `a:host`), case aside. */
function spfHas(record: string, mechanism: string): boolean {
  const terms = record.toLowerCase().split(/\s+/);
  return mechanism
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((m) => terms.includes(m) || terms.includes(`+${m}`));
}

/**
 * Looks up what receivers check for a message from this domain, and judges it (docs/deliverability.md): the ownership
 * token and DKIM key (they decide VERIFIED), SPF where receivers evaluate it (the envelope sender's domain, the
 * Return-Path: `bounces.<domain>` or the relay's), DMARC (`_dmarc.<domain>`: its presence, its `rua`, and `aspf=s`,
 * under which SPF never aligns with a Return-Path on a subdomain), the bounce domain's MX, and the tracking host's
 * CNAME. Everything but the first two is advice.
 */
export async function checkDomain(
  dnsLookup: DnsLookup,
  input: VerifyInput,
  checkedAt: () => string,
): Promise<{ verified: boolean; verification: Verification }> {
  const { domain, ownership, dkim, envelope, tracking } = input;
  const lookup = dnsLookup.txt;
  const dmarcName = `_dmarc.${domain}`;
  const mxRecord = envelope.records.find((r) => r.type === 'MX');
  const cnameRecord = envelope.records.find((r) => r.type === 'CNAME');
  const none = Promise.resolve<TxtAnswer>({ ok: false, status: 'MISSING', code: 'ENODATA' });
  const [own, key, apex, dmarc, mx, envelopeTxt, envelopeCname, trackingCname] = await Promise.all([
    lookup(ownership.name),
    lookup(dkim.name),
    lookup(domain),
    lookup(dmarcName),
    mxRecord ? dnsLookup.mx(mxRecord.name) : none,
    envelope.domain && envelope.domain !== domain ? lookup(envelope.domain) : none,
    cnameRecord ? dnsLookup.cname(cnameRecord.name) : none,
    tracking ? dnsLookup.cname(tracking.host) : none,
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

  // SPF of the From domain itself: not what receivers check for Formcast's mail (they check the Return-Path's domain,
  // below), unless the relay sends with it (Mailgun). Two records are an error whatever sends.
  const spfRecords = apex.ok ? apex.values.filter((v) => SPF.test(v.trim())) : [];
  if (spfRecords.length > 1) {
    advice.push(
      `${domain} has ${spfRecords.length} SPF records; receivers treat more than one as an error (RFC 7208). Merge them into one.`,
    );
  }

  // SPF where receivers evaluate it: the envelope sender's (Return-Path's) domain; for a CNAME (Postmark's
  // pm-bounces.<domain>) the relay's record behind it.
  const envelopeAnswer = envelope.domain === domain ? apex : envelopeTxt;
  const envelopeSpf = envelopeAnswer.ok ? envelopeAnswer.values.filter((v) => SPF.test(v.trim())) : [];
  const relayAllowed =
    envelope.spfInclude && envelopeSpf.length ? envelopeSpf.some((r) => spfHas(r, envelope.spfInclude!)) : null;
  const envelopeChecks: RecordCheck[] = envelope.records.map((r) => {
    if (r.type === 'MX') {
      const hosts = mx.ok ? mx.values.map((h) => h.replace(/\.$/, '')) : [];
      if (!mx.ok && mx.status !== 'MISSING') return { ...r, status: mx.status, found: [] };
      return {
        ...r,
        status: hosts.includes(r.value.toLowerCase()) ? 'VERIFIED' : hosts.length ? 'MISMATCH' : 'MISSING',
        found: hosts,
      };
    }
    if (r.type === 'CNAME') {
      if (!envelopeCname.ok) return { ...r, status: envelopeCname.status, found: [] };
      return {
        ...r,
        status: envelopeCname.values.includes(r.value.toLowerCase()) ? 'VERIFIED' : 'MISMATCH',
        found: envelopeCname.values,
      };
    }
    if (!envelopeAnswer.ok) return { ...r, status: envelopeAnswer.status, found: [] };
    if (!envelopeSpf.length) return { ...r, status: 'MISSING', found: envelopeAnswer.values };
    return { ...r, status: relayAllowed === false ? 'MISMATCH' : 'VERIFIED', found: envelopeSpf };
  });
  const mxCheck = envelopeChecks.find((c) => c.type === 'MX');
  if (mxCheck && mxCheck.status !== 'VERIFIED') {
    if (mxCheck.status === 'TIMEOUT' || mxCheck.status === 'ERROR')
      advice.push(
        `The bounce domain's MX was not checked: ${describeFailure(mx as Extract<TxtAnswer, { ok: false }>, mxCheck.name)}.`,
      );
    else
      advice.push(
        envelope.profile === 'smtp'
          ? `Warning: publish an MX record at ${mxCheck.name} pointing at ${mxCheck.value} (priority ${mxCheck.priority ?? 10}): bounce and complaint reports go there. Sending works without it, but later bounces are then not seen.`
          : `Warning: publish an MX record at ${mxCheck.name} pointing at ${mxCheck.value} (priority ${mxCheck.priority ?? 10}), as your relay asks for its MAIL FROM domain.`,
      );
  }
  for (const c of envelopeChecks.filter((c) => c.type === 'CNAME' && c.status !== 'VERIFIED'))
    advice.push(
      `Warning: publish a CNAME record at ${c.name} pointing at ${c.value}${c.found.length ? ` (it points at ${c.found.join(', ')})` : ''}: it is the Return-Path domain receivers check SPF on.`,
    );
  const spfCheck = envelopeChecks.find((c) => c.type === 'TXT');
  if (spfCheck && spfCheck.status !== 'VERIFIED') {
    if (spfCheck.status === 'TIMEOUT' || spfCheck.status === 'ERROR')
      advice.push(
        `SPF of ${spfCheck.name} was not checked: ${describeFailure(envelopeAnswer as Extract<TxtAnswer, { ok: false }>, spfCheck.name)}.`,
      );
    else if (spfCheck.status === 'MISMATCH')
      advice.push(
        `Warning: the SPF record at ${spfCheck.name} ("${envelopeSpf[0]}") does not allow your relay: add "${envelope.spfInclude}" to it. Messages go out with a Return-Path at that name, and receivers check SPF there.`,
      );
    else
      advice.push(
        `Warning: publish an SPF record at ${spfCheck.name}: "${spfCheck.value}". Messages go out with a Return-Path at that name, and receivers check SPF there${envelope.profile === 'mailgun' ? ' (merge it into the SPF record you have, if any: a domain has one)' : ''}.`,
      );
  }
  if (envelope.advice && envelopeChecks.some((c) => c.status !== 'VERIFIED')) advice.push(envelope.advice);
  else if (envelope.advice && !envelopeChecks.length) advice.push(envelope.advice);

  // DMARC: its presence (Gmail and Yahoo require it of bulk senders), where aggregate reports go, and alignment.
  const dmarcRecords = dmarc.ok ? dmarc.values.filter((v) => DMARC.test(v.trim())) : [];
  const reportsTo = `dmarc@${bounceDomain(domain)}`;
  let aspf: 'r' | 's' | null = null;
  if (!dmarc.ok && dmarc.status !== 'MISSING') {
    advice.push(`DMARC was not checked: ${describeFailure(dmarc, dmarcName)}.`);
  } else if (dmarcRecords.length === 0) {
    advice.push(
      `Add a DMARC record: a TXT record at ${dmarcName} such as "v=DMARC1; p=none; rua=mailto:${reportsTo}" (Formcast reads the reports sent there). Gmail and Yahoo require DMARC of bulk senders.`,
    );
  } else {
    const tags = dmarcTags(dmarcRecords[0]!);
    aspf = tags.get('aspf')?.toLowerCase() === 's' ? 's' : 'r';
    if (aspf === 's' && envelope.domain !== domain)
      advice.push(
        `Warning: the DMARC record at ${dmarcName} has aspf=s (strict SPF alignment): messages go out with a Return-Path at ${envelope.domain ?? `a subdomain of ${domain}`}, which strict alignment never matches, so DMARC rests on DKIM alone. Remove aspf=s (relaxed alignment is the default).`,
      );
    if (!tags.has('rua'))
      advice.push(
        `Add rua=mailto:${reportsTo} to the DMARC record at ${dmarcName}: receivers then send daily reports of who sends as ${domain}, which Formcast reads.`,
      );
  }

  // The tracking host: a CNAME to the service's public host, so that links and the pixel are on the sender's domain.
  let trackingCheck: Verification['tracking'] = null;
  if (tracking) {
    const found = trackingCname.ok ? trackingCname.values : [];
    const status: RecordStatus = !trackingCname.ok
      ? trackingCname.status
      : found.includes(tracking.target.toLowerCase())
        ? 'VERIFIED'
        : 'MISMATCH';
    trackingCheck = { type: 'CNAME', name: tracking.host, value: tracking.target, status, found };
    if (status !== 'VERIFIED')
      advice.push(
        `Publish a CNAME record at ${tracking.host} pointing at ${tracking.target}${found.length ? ` (it points at ${found.join(', ')})` : ''}: until it is verified, links and the open pixel stay on ${tracking.target}.`,
      );
  }

  const bounceMx = envelopeChecks.find((c) => c.type === 'MX');
  const bounceSpf = envelope.domain === bounceDomain(domain) ? envelopeSpf : [];
  return {
    verified: ownershipCheck.status === 'VERIFIED' && dkimCheck.status === 'VERIFIED',
    verification: {
      checkedAt: checkedAt(),
      records: [ownershipCheck, dkimCheck],
      spf: { found: spfRecords.length > 0, record: spfRecords[0] ?? null },
      dmarc: { found: dmarcRecords.length > 0, record: dmarcRecords[0] ?? null },
      bounce: {
        mx: { found: bounceMx?.status === 'VERIFIED', hosts: bounceMx?.found ?? [] },
        spf: { found: bounceSpf.length > 0, record: bounceSpf[0] ?? null },
      },
      envelope: {
        relay: envelope.profile,
        domain: envelope.domain,
        spf: {
          found: envelopeSpf.length > 0 || envelopeChecks.some((c) => c.type === 'CNAME' && c.status === 'VERIFIED'),
          record: envelopeSpf[0] ?? null,
        },
        records: envelopeChecks,
      },
      alignment: { spf: aspf === 's' ? 'strict' : 'relaxed', spfAligns: envelope.domain === domain || aspf !== 's' },
      tracking: trackingCheck,
      advice,
    },
  };
}

/**
 * The reverse DNS of an address mail leaves from (docs/deliverability.md, "PTR"): its PTR names, and whether one of
 * them resolves back to it (forward-confirmed reverse DNS, which receivers such as Gmail and Outlook expect).
 */
export async function checkReverseDns(
  dnsLookup: DnsLookup,
  ip: string,
): Promise<{ ip: string; names: string[]; confirmed: boolean; failure: string | null }> {
  const ptr = await dnsLookup.ptr(ip);
  if (!ptr.ok)
    return {
      ip,
      names: [],
      confirmed: false,
      failure: ptr.status === 'MISSING' ? null : describeFailure(ptr, `the PTR of ${ip}`),
    };
  for (const name of ptr.values) {
    const back = await dnsLookup.addresses(name);
    if (back.ok && back.values.includes(ip)) return { ip, names: ptr.values, confirmed: true, failure: null };
  }
  return { ip, names: ptr.values, confirmed: false, failure: null };
}
