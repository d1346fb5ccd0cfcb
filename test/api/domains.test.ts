import crypto from 'node:crypto';
import dgram from 'node:dgram';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { getSigningKey } from '../../src/mail-setup/domains/domains.repository.js';
import { openDkimKey } from '../../src/mail-setup/domains/domains.keys.js';
import { DomainsService } from '../../src/mail-setup/domains/domains.service.js';
import { buildApp } from '../../src/app.js';
import { describeApi, type TestWorkspace } from '../helpers/app.js';
import { startDnsServer } from '../helpers/dns.js';
import { TEST_SECRET } from '../helpers/secret.js';

/*
 * A real DNS server on loopback (test/helpers/dns.ts) serving the TXT records each test publishes. Every test uses
 * domains of its own (random labels), so the zone is shared by the SQLite and PostgreSQL runs without interference.
 */
/** name → TXT records, each as the character-strings it is split into. */
const zone = new Map<string, string[][]>();
/** Names the server never answers (a per-record timeout). */
const silent = new Set<string>();
/** Names answered with SERVFAIL. */
const servfail = new Set<string>();
/** name → MX exchanges. */
const mxZone = new Map<string, string[]>();

/** name → CNAME target; IP → PTR names; name → A addresses. */
const cnameZone = new Map<string, string>();
const ptrZone = new Map<string, string[]>();
const aZone = new Map<string, string[]>();

let dnsServer: Awaited<ReturnType<typeof startDnsServer>>;
let dnsAddress = '';
/** A UDP socket on loopback that reads queries and never answers. */
const blackHole = dgram.createSocket('udp4');
let blackHoleAddress = '';

beforeAll(async () => {
  dnsServer = await startDnsServer({
    txt: zone,
    mx: mxZone,
    cname: cnameZone,
    ptr: ptrZone,
    a: aZone,
    silent,
    servfail,
  });
  dnsAddress = dnsServer.address;
  await new Promise<void>((resolve) => blackHole.bind(0, '127.0.0.1', resolve));
  blackHoleAddress = `127.0.0.1:${blackHole.address().port}`;
});

afterAll(async () => {
  blackHole.close();
  await dnsServer?.close();
});

/** Splits a TXT value into character-strings of at most 255 octets, as DNS providers do. */
function chunks(value: string, size = 255): string[] {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) out.push(value.slice(i, i + size));
  return out.length ? out : [''];
}

function publish(name: string, ...values: string[]): void {
  zone.set(
    name.toLowerCase(),
    values.map((v) => chunks(v)),
  );
}

const uniqueName = (suffix = 'example.com') => `d${crypto.randomBytes(5).toString('hex')}.${suffix}`;

const DOMAIN_KEYS = ['createdAt', 'id', 'name', 'records', 'status', 'trackingHost', 'verification', 'verifiedAt'];
const VERIFICATION_KEYS = [
  'advice',
  'alignment',
  'bounce',
  'checkedAt',
  'dmarc',
  'envelope',
  'records',
  'spf',
  'tracking',
];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Rec {
  type: string;
  name: string;
  value: string;
  priority?: number;
}
interface DomainBody {
  id: string;
  name: string;
  status: string;
  records: Rec[];
  createdAt: string;
  verifiedAt: string | null;
  verification: any;
}

const ownershipOf = (d: DomainBody) => d.records[0]!;
const dkimOf = (d: DomainBody) => d.records[1]!;

/** Publishes the domain's records (and SPF/DMARC, and the bounce domain's MX and SPF, unless told otherwise). */
function publishAll(d: DomainBody, opts: { spf?: boolean; dmarc?: boolean; bounce?: boolean } = {}): void {
  publish(ownershipOf(d).name, ownershipOf(d).value);
  publish(dkimOf(d).name, dkimOf(d).value);
  if (opts.bounce !== false) {
    mxZone.set(d.records[2]!.name, [d.records[2]!.value]);
    publish(d.records[3]!.name, d.records[3]!.value);
  }
  publish(
    d.name,
    ...(opts.spf === false
      ? ['google-site-verification=abc']
      : ['google-site-verification=abc', 'v=spf1 include:_spf.example.net ~all']),
  );
  if (opts.dmarc !== false) publish(`_dmarc.${d.name}`, 'v=DMARC1; p=none; rua=mailto:dmarc@example.net');
}

describeApi('domains', (h) => {
  // The suite's app resolves through the loopback server. The routes hold the app's service, so the resolver of a
  // service built for the test is copied onto it (useDns); a test below checks the DNS_SERVERS wiring itself. The
  // per-query timeout is generous: the DNS server runs in this process, and a loaded machine must not turn its
  // answers into TIMEOUTs.
  function useDns(dnsServers: string[], dnsTimeoutMs: number): () => void {
    const service = h.app.services.domains;
    const before = { ...service };
    Object.assign(service, new DomainsService(h.db, { dnsServers, dnsTimeoutMs, secret: TEST_SECRET }));
    return () => void Object.assign(service, before);
  }
  beforeAll(() => {
    useDns([dnsAddress], 3000);
  });

  async function create(ws: TestWorkspace, name = uniqueName()): Promise<DomainBody> {
    const res = await h.call(ws.key, 'POST', '/v1/domains', { name });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  }

  async function verify(ws: TestWorkspace, d: DomainBody): Promise<DomainBody> {
    const res = await h.call(ws.key, 'POST', `/v1/domains/${d.id}/verify`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  /** The domain's private key, opened with the installation's key (it is stored sealed: domains.keys.ts). */
  async function privateKeyOf(id: string): Promise<string> {
    const row = await h.db.kysely
      .selectFrom('domains')
      .select('dkim_private_key')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return openDkimKey(TEST_SECRET, row.dkim_private_key, id);
  }

  /** No body may hold the private key, whole, as its base64 body, or any line of its PEM. */
  async function expectNoPrivateKey(id: string, ...responses: LightMyRequestResponse[]): Promise<void> {
    const pem = await privateKeyOf(id);
    expect(pem).toContain('PRIVATE KEY');
    const lines = pem.split('\n').filter((l) => l && !l.startsWith('-----'));
    const base64 = lines.join('');
    for (const res of responses) {
      expect(res.body).not.toContain('PRIVATE');
      expect(res.body).not.toContain(base64);
      for (const line of lines) expect(res.body).not.toContain(line);
    }
  }

  it('POST creates a PENDING domain with its ownership and DKIM records, a Location, and nothing else', async () => {
    const ws = await h.workspace();
    const name = uniqueName();
    const res = await h.call(ws.key, 'POST', '/v1/domains', { name });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const d = res.json();
    expect(res.headers.location).toBe(`/v1/domains/${d.id}`);
    expect(Object.keys(d).sort()).toEqual(DOMAIN_KEYS);
    expect(d).toMatchObject({ name, status: 'PENDING', verifiedAt: null, verification: null });
    expect(d.id).toMatch(/^dom_[0-9A-Z]{26}$/);
    expect(d.createdAt).toMatch(ISO);
    expect(d.records).toHaveLength(4);
    for (const r of d.records.slice(0, 2)) expect(Object.keys(r).sort()).toEqual(['name', 'type', 'value']);
    // The bounce domain: an MX to the inbound listener (BOUNCE_MX_HOST: here the PUBLIC_URL's host) and SPF advice.
    expect(d.records[2]).toEqual({ type: 'MX', name: `bounces.${name}`, value: 'localhost', priority: 10 });
    expect(d.records[3]).toEqual({ type: 'TXT', name: `bounces.${name}`, value: 'v=spf1 a:localhost ~all' });

    const [ownership, dkim] = d.records;
    expect(ownership).toMatchObject({ type: 'TXT', name: `_formcast.${name}` });
    expect(ownership.value).toMatch(/^formcast-verification=[0-9a-f]{32}$/);
    expect(dkim.type).toBe('TXT');
    expect(dkim.name).toMatch(new RegExp(`^[a-z0-9-]+\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
    const publicKey = crypto.createPublicKey({
      key: Buffer.from(dkim.value.split('p=')[1], 'base64'),
      format: 'der',
      type: 'spki',
    });
    expect(publicKey.asymmetricKeyType).toBe('rsa');
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // The stored private key is the pair of the published public key.
    const privateKey = await privateKeyOf(d.id);
    const signature = crypto.sign('sha256', Buffer.from('hello'), privateKey);
    expect(crypto.verify('sha256', Buffer.from('hello'), publicKey, signature)).toBe(true);

    const got = await h.call(ws.key, 'GET', `/v1/domains/${d.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(d);
    const listed = await h.call(ws.key, 'GET', '/v1/domains');
    expect(listed.json()).toEqual({ data: [d], nextCursor: null });
    publishAll(d);
    const verified = await h.call(ws.key, 'POST', `/v1/domains/${d.id}/verify`);
    expect(verified.json().status).toBe('VERIFIED');
    const failed = await h.call(ws.key, 'POST', '/v1/domains', { name });
    expect(failed.statusCode).toBe(409);
    await expectNoPrivateKey(
      d.id,
      res,
      got,
      listed,
      verified,
      failed,
      await h.call(ws.key, 'GET', `/v1/domains/${d.id}`),
      await h.call(ws.key, 'GET', '/v1/domains?status=VERIFIED'),
    );
    // Nor is it in the published API description.
    const openapi = await h.call(null, 'GET', '/openapi.json');
    expect(openapi.body).not.toMatch(/private/i);
    expect(Object.keys(openapi.json().paths)).toEqual(
      expect.arrayContaining(['/v1/domains', '/v1/domains/{domainId}', '/v1/domains/{domainId}/verify']),
    );
  });

  it('verify: every record published → VERIFIED with a result per record, SPF and DMARC found, no advice', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    const v = await verify(ws, d);
    expect(Object.keys(v).sort()).toEqual(DOMAIN_KEYS);
    expect(v.status).toBe('VERIFIED');
    expect(v.verifiedAt).toMatch(ISO);
    expect(Object.keys(v.verification).sort()).toEqual(VERIFICATION_KEYS);
    expect(v.verification.checkedAt).toMatch(ISO);
    expect(v.verifiedAt).toBe(v.verification.checkedAt);
    expect(v.verification.records).toEqual([
      { ...ownershipOf(d), status: 'VERIFIED', found: [ownershipOf(d).value] },
      { ...dkimOf(d), status: 'VERIFIED', found: [dkimOf(d).value] },
    ]);
    expect(v.verification.spf).toEqual({ found: true, record: 'v=spf1 include:_spf.example.net ~all' });
    expect(v.verification.dmarc).toEqual({ found: true, record: 'v=DMARC1; p=none; rua=mailto:dmarc@example.net' });
    expect(v.verification.bounce).toEqual({
      mx: { found: true, hosts: ['localhost'] },
      spf: { found: true, record: 'v=spf1 a:localhost ~all' },
    });
    expect(v.verification.advice).toEqual([]);
    // Stored: GET shows the same result.
    expect((await h.call(ws.key, 'GET', `/v1/domains/${d.id}`)).json()).toEqual(v);
  });

  it('verify: the DKIM value is compared by its tags, whatever the whitespace and however it is split', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    const p = dkimOf(d).value.split('p=')[1]!;
    const spaced = `v=DKIM1;k=rsa ;  p= ${p.slice(0, 100)} ${p.slice(100, 300)}\t${p.slice(300)} ;`;
    zone.set(dkimOf(d).name, [chunks(spaced, 100)]);
    const v = await verify(ws, d);
    expect(v.status).toBe('VERIFIED');
    expect(v.verification.records[1]).toMatchObject({ status: 'VERIFIED', found: [spaced] });
  });

  it('verify: a missing ownership record → FAILED, MISSING, with advice; the other records still checked', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    zone.delete(ownershipOf(d).name);
    const v = await verify(ws, d);
    expect(v.status).toBe('FAILED');
    expect(v.verifiedAt).toBeNull();
    expect(v.verification.records.map((r: any) => [r.status, r.found])).toEqual([
      ['MISSING', []],
      ['VERIFIED', [dkimOf(d).value]],
    ]);
    expect(v.verification.advice).toHaveLength(1);
    expect(v.verification.advice[0]).toContain(ownershipOf(d).name);
  });

  it('verify: a name that exists with no TXT record of the kind asked for is MISSING too', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    zone.set(dkimOf(d).name, []);
    const v = await verify(ws, d);
    expect(v.status).toBe('FAILED');
    expect(v.verification.records[1]).toMatchObject({ status: 'MISSING', found: [] });
    expect(v.verification.advice.join(' ')).toContain(dkimOf(d).name);
  });

  it('verify: a wrong DKIM key → MISMATCH with what was found', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    const other = crypto
      .generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    const wrong = `v=DKIM1; k=rsa; p=${other}`;
    publish(dkimOf(d).name, wrong);
    const v = await verify(ws, d);
    expect(v.status).toBe('FAILED');
    expect(v.verification.records[0].status).toBe('VERIFIED');
    expect(v.verification.records[1]).toEqual({ ...dkimOf(d), status: 'MISMATCH', found: [wrong] });
    expect(v.verification.advice.join(' ')).toMatch(/DKIM/);
    expect(v.verification.advice.join(' ')).toContain(dkimOf(d).name);

    // The right key with another key type, or a revoked (empty) key, does not match either.
    for (const bad of [dkimOf(d).value.replace('k=rsa', 'k=ed25519'), 'v=DKIM1; k=rsa; p=', 'not a tag list']) {
      publish(dkimOf(d).name, bad);
      const again = await verify(ws, d);
      expect(again.verification.records[1]).toMatchObject({ status: 'MISMATCH', found: [bad] });
      expect(again.status).toBe('FAILED');
    }
  });

  it('verify: a wrong ownership value → MISMATCH; one right record among others is enough', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    publish(ownershipOf(d).name, 'formcast-verification=0123456789abcdef0123456789abcdef');
    const v = await verify(ws, d);
    expect(v.status).toBe('FAILED');
    expect(v.verification.records[0]).toEqual({
      ...ownershipOf(d),
      status: 'MISMATCH',
      found: ['formcast-verification=0123456789abcdef0123456789abcdef'],
    });
    expect(v.verification.advice.join(' ')).toContain(ownershipOf(d).name);

    publish(ownershipOf(d).name, 'formcast-verification=0123456789abcdef0123456789abcdef', ownershipOf(d).value);
    expect((await verify(ws, d)).status).toBe('VERIFIED');
  });

  it('verify: a DNS server that never answers → TIMEOUT for every lookup', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    const restore = useDns([blackHoleAddress], 300);
    try {
      const v = await verify(ws, d);
      expect(v.status).toBe('FAILED');
      expect(v.verification.records.map((r: any) => [r.status, r.found])).toEqual([
        ['TIMEOUT', []],
        ['TIMEOUT', []],
      ]);
      expect(v.verification.spf).toEqual({ found: false, record: null });
      expect(v.verification.dmarc).toEqual({ found: false, record: null });
      const advice = v.verification.advice.join('\n');
      expect(advice).toMatch(/timed out/);
      expect(advice).toMatch(/SPF of bounces\.\S+ was not checked/);
      expect(advice).toMatch(/DMARC was not checked/);
    } finally {
      restore();
    }
  });

  it('verify: one record timing out, another failing with SERVFAIL: TIMEOUT and ERROR for those alone', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    silent.add(dkimOf(d).name);
    servfail.add(`_dmarc.${d.name}`);
    // A shorter timeout here, to wait less for the silent record; the others still have ample time to answer.
    onTestFinished(useDns([dnsAddress], 1000));
    const v = await verify(ws, d);
    expect(v.status).toBe('FAILED');
    expect(v.verification.records.map((r: any) => r.status)).toEqual(['VERIFIED', 'TIMEOUT']);
    expect(v.verification.spf.found).toBe(true);
    expect(v.verification.dmarc).toEqual({ found: false, record: null });
    expect(v.verification.advice.join('\n')).toMatch(/SERVFAIL/);

    servfail.add(ownershipOf(d).name);
    const again = await verify(ws, d);
    expect(again.verification.records.map((r: any) => [r.status, r.found])).toEqual([
      ['ERROR', []],
      ['TIMEOUT', []],
    ]);
    silent.delete(dkimOf(d).name);
    servfail.clear();
    expect((await verify(ws, d)).status).toBe('VERIFIED');
  });

  it('the bounce domain is advice only: without its MX and SPF the domain is VERIFIED, with two warnings', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d, { bounce: false });
    const v = await verify(ws, d);
    expect(v.status).toBe('VERIFIED');
    expect(v.verification.bounce).toEqual({ mx: { found: false, hosts: [] }, spf: { found: false, record: null } });
    expect(v.verification.advice).toEqual([
      expect.stringMatching(
        new RegExp(`^Warning: publish an MX record at bounces\\.${d.name.replace(/\./g, '\\.')} pointing at localhost`),
      ),
      expect.stringContaining(`Warning: publish an SPF record at bounces.${d.name}: "v=spf1 a:localhost ~all"`),
    ]);
    mxZone.set(`bounces.${d.name}`, ['mx.elsewhere.example']);
    const wrong = await verify(ws, d);
    expect(wrong.verification.bounce.mx).toEqual({ found: false, hosts: ['mx.elsewhere.example'] });
  });

  it('SPF and DMARC are advice only: without them the domain is VERIFIED and the advice says what to add', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d, { spf: false, dmarc: false, bounce: false });
    mxZone.set(d.records[2]!.name, [d.records[2]!.value]);
    const v = await verify(ws, d);
    expect(v.status).toBe('VERIFIED');
    expect(v.verification.spf).toEqual({ found: false, record: null });
    expect(v.verification.dmarc).toEqual({ found: false, record: null });
    // SPF is asked for where receivers check it: the Return-Path's domain, bounces.<domain>, not the From domain.
    expect(v.verification.advice).toHaveLength(2);
    expect(v.verification.advice[0]).toContain(`publish an SPF record at bounces.${d.name}: "v=spf1 a:localhost ~all"`);
    expect(v.verification.advice[1]).toMatch(/DMARC/);
    expect(v.verification.advice[1]).toContain(`_dmarc.${d.name}`);
    expect(v.verification.advice[1]).toContain(`rua=mailto:dmarc@bounces.${d.name}`);
    expect(v.verification.envelope).toMatchObject({
      relay: 'smtp',
      domain: `bounces.${d.name}`,
      spf: { found: false, record: null },
    });
    publish(d.records[3]!.name, d.records[3]!.value);

    // Two SPF records are an error for receivers: said so, still not blocking.
    publish(d.name, 'v=spf1 -all', 'v=spf1 include:x.example.net -all');
    publish(`_dmarc.${d.name}`, 'v=DMARC1; p=reject');
    const two = await verify(ws, d);
    expect(two.status).toBe('VERIFIED');
    expect(two.verification.spf).toEqual({ found: true, record: 'v=spf1 -all' });
    expect(two.verification.dmarc).toEqual({ found: true, record: 'v=DMARC1; p=reject' });
    expect(two.verification.advice).toEqual([
      expect.stringMatching(/2 SPF records/),
      // No rua: the aggregate reports would go nowhere.
      expect.stringContaining(`Add rua=mailto:dmarc@bounces.${d.name} to the DMARC record`),
    ]);

    // A record that merely mentions them is not one.
    publish(d.name, 'spf is v=spf1 -all');
    publish(`_dmarc.${d.name}`, 'v=DMARC2; p=none');
    const none = await verify(ws, d);
    expect(none.verification.spf.found).toBe(false);
    expect(none.verification.dmarc.found).toBe(false);
    expect(none.status).toBe('VERIFIED');
  });

  it('DMARC with aspf=s is warned (SPF of the bounce domain never aligns); SPF at the bounce domain must allow the relay', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    publish(`_dmarc.${d.name}`, `v=DMARC1; p=quarantine; aspf=s; rua=mailto:dmarc@bounces.${d.name}`);
    publish(`bounces.${d.name}`, 'v=spf1 include:other-provider.example ~all');
    const v = await verify(ws, d);
    expect(v.status).toBe('VERIFIED');
    expect(v.verification.alignment).toEqual({ spf: 'strict', spfAligns: false });
    expect(v.verification.envelope.records[1]).toMatchObject({ type: 'TXT', status: 'MISMATCH' });
    expect(v.verification.advice).toEqual([
      expect.stringContaining(`does not allow your relay: add "a:localhost"`),
      expect.stringContaining('aspf=s (strict SPF alignment)'),
    ]);
    const pf = await h.call(ws.key, 'POST', `/v1/broadcasts`, { name: 'x', from: `news@${d.name}` });
    const checks = Object.fromEntries(
      (await h.call(ws.key, 'POST', `/v1/broadcasts/${pf.json().id}/preflight`))
        .json()
        .checks.map((c: { id: string }) => [c.id, c]),
    );
    expect(checks.dns_spf).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining(`SPF at bounces.${d.name}`),
    });
    expect(checks.dns_dmarc_alignment).toMatchObject({ status: 'warn', detail: expect.stringContaining('aspf=s') });
  });

  it('relay profiles advise the records of their own Return-Path domain, checked through DNS', async () => {
    const ws = await h.workspace();
    const service = (profile: 'ses' | 'postmark') =>
      new DomainsService(h.db, {
        dnsServers: [dnsAddress],
        dnsTimeoutMs: 3000,
        secret: TEST_SECRET,
        relay: { profile, sesRegion: 'eu-west-1' },
      });
    const d = await create(ws);
    publishAll(d, { bounce: false });
    const ses = await service('ses').get(ws.id, d.id);
    expect(ses.records.slice(2)).toEqual([
      { type: 'MX', name: `bounces.${d.name}`, value: 'feedback-smtp.eu-west-1.amazonses.com', priority: 10 },
      { type: 'TXT', name: `bounces.${d.name}`, value: 'v=spf1 include:amazonses.com ~all' },
    ]);
    const sesCheck = await service('ses').verify(ws.id, d.id);
    expect(sesCheck.verification!.advice).toEqual(
      expect.arrayContaining([expect.stringContaining('set bounces.' + d.name + ' as the custom MAIL FROM domain')]),
    );
    mxZone.set(`bounces.${d.name}`, ['feedback-smtp.eu-west-1.amazonses.com']);
    publish(`bounces.${d.name}`, 'v=spf1 include:amazonses.com ~all');
    expect((await service('ses').verify(ws.id, d.id)).verification!.envelope).toMatchObject({
      relay: 'ses',
      domain: `bounces.${d.name}`,
      spf: { found: true, record: 'v=spf1 include:amazonses.com ~all' },
      records: [{ status: 'VERIFIED' }, { status: 'VERIFIED' }],
    });

    const pm = await service('postmark').get(ws.id, d.id);
    expect(pm.records.slice(2)).toEqual([{ type: 'CNAME', name: `pm-bounces.${d.name}`, value: 'pm.mtasv.net' }]);
    expect((await service('postmark').verify(ws.id, d.id)).verification!.envelope!.records[0]!.status).toBe('MISSING');
    cnameZone.set(`pm-bounces.${d.name}`, 'pm.mtasv.net');
    zone.set('pm.mtasv.net', [['v=spf1 ip4:50.31.156.96/27 ~all']]);
    expect((await service('postmark').verify(ws.id, d.id)).verification!.envelope).toMatchObject({
      domain: `pm-bounces.${d.name}`,
      spf: { found: true, record: 'v=spf1 ip4:50.31.156.96/27 ~all' },
      records: [{ type: 'CNAME', status: 'VERIFIED', found: ['pm.mtasv.net'] }],
    });
  });

  it('a tracking host under the domain: set by PUT, verified by its CNAME, then handed to sending; gone, it is not used', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    const outside = await h.call(ws.key, 'PUT', `/v1/domains/${d.id}`, { trackingHost: 'links.elsewhere.example' });
    expect(outside.statusCode).toBe(422);
    expect(outside.json().errors).toEqual([
      { path: '/trackingHost', message: expect.stringContaining(`under ${d.name}`) },
    ]);
    const set = await h.call(ws.key, 'PUT', `/v1/domains/${d.id}`, { trackingHost: `Links.${d.name}` });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().trackingHost).toBe(`links.${d.name}`);
    expect(set.json().records.at(-1)).toEqual({ type: 'CNAME', name: `links.${d.name}`, value: 'localhost' });
    const unpublished = await verify(ws, d);
    expect(unpublished.verification.tracking).toMatchObject({ status: 'MISSING' });
    expect(unpublished.verification.advice).toEqual([
      expect.stringContaining(`Publish a CNAME record at links.${d.name} pointing at localhost`),
    ]);
    expect((await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET))?.trackingHost).toBeNull();
    cnameZone.set(`links.${d.name}`, 'localhost');
    const ok = await verify(ws, d);
    expect(ok.verification.tracking).toEqual({
      type: 'CNAME',
      name: `links.${d.name}`,
      value: 'localhost',
      status: 'VERIFIED',
      found: ['localhost'],
    });
    expect((await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET))?.trackingHost).toBe(`links.${d.name}`);
    cnameZone.set(`links.${d.name}`, 'someone-else.example');
    expect((await verify(ws, d)).verification.tracking.status).toBe('MISMATCH');
    expect((await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET))?.trackingHost).toBeNull();
    const cleared = await h.call(ws.key, 'PUT', `/v1/domains/${d.id}`, { trackingHost: null });
    expect(cleared.json()).toMatchObject({ trackingHost: null });
    expect(cleared.json().records).toHaveLength(4);
  });

  it('re-verify from any status: FAILED → VERIFIED once fixed; verifiedAt kept while VERIFIED, cleared on failure', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    const failed = await verify(ws, d);
    expect(failed.status).toBe('FAILED');
    expect(failed.verification.records.map((r: any) => r.status)).toEqual(['MISSING', 'MISSING']);
    expect(failed.verifiedAt).toBeNull();
    expect((await verify(ws, d)).status).toBe('FAILED');

    publishAll(d);
    const ok = await verify(ws, d);
    expect(ok.status).toBe('VERIFIED');
    expect(ok.verifiedAt).toMatch(ISO);
    await new Promise((r) => setTimeout(r, 5));
    const again = await verify(ws, d);
    expect(again.status).toBe('VERIFIED');
    expect(again.verifiedAt).toBe(ok.verifiedAt);
    expect(again.verification.checkedAt > ok.verification.checkedAt).toBe(true);

    zone.delete(dkimOf(d).name);
    const broken = await verify(ws, d);
    expect(broken).toMatchObject({ status: 'FAILED', verifiedAt: null });
    expect((await h.call(ws.key, 'GET', `/v1/domains/${d.id}`)).json()).toMatchObject({
      status: 'FAILED',
      verifiedAt: null,
    });
  });

  it('verify works for a domain added as VERIFIED by an operator (CLI --verified), and can fail it', async () => {
    const ws = await h.workspace();
    const added = await h.app.services.domains.add(ws.id, uniqueName(), { verified: true });
    expect(Object.keys(added).sort()).toEqual([
      'createdAt',
      'id',
      'name',
      'records',
      'status',
      'trackingHost',
      'verification',
      'verifiedAt',
    ]);
    expect(added.status).toBe('VERIFIED');
    const d = (await h.call(ws.key, 'GET', `/v1/domains/${added.id}`)).json();
    expect(d).toMatchObject({ status: 'VERIFIED', verifiedAt: added.verifiedAt, verification: null });
    publishAll(d);
    expect((await verify(ws, d)).verifiedAt).toBe(added.verifiedAt);
    zone.delete(ownershipOf(d).name);
    expect((await verify(ws, d)).status).toBe('FAILED');
  });

  it('DNS_SERVERS from the configuration reaches the resolver', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    publishAll(d);
    let app: FastifyInstance | undefined;
    try {
      app = await buildApp({
        db: h.db,
        config: {
          logLevel: 'silent',
          publicUrl: 'http://localhost:3000',
          dnsServers: [dnsAddress],
          secret: TEST_SECRET,
        },
        logger: false,
      });
      const res = await app.inject({
        method: 'POST',
        url: `/v1/domains/${d.id}/verify`,
        headers: { authorization: `Bearer ${ws.key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe('VERIFIED');
    } finally {
      await app?.close();
    }
    expect(() => new DomainsService(h.db, { dnsServers: ['dns.example.net'], secret: TEST_SECRET })).toThrow(
      /DNS_SERVERS/,
    );
    expect(() => new DomainsService(h.db, { dnsServers: ['127.0.0.1:99999'], secret: TEST_SECRET })).toThrow(
      /DNS_SERVERS/,
    );
    expect(
      () =>
        new DomainsService(h.db, {
          dnsServers: ['1.1.1.1', '127.0.0.1:5353', '::1', '[::1]:5353'],
          secret: TEST_SECRET,
        }),
    ).not.toThrow();
  });

  it('list: newest first, cursor pagination, ?status= filter', async () => {
    const ws = await h.workspace();
    const a = await create(ws);
    const b = await create(ws);
    const c = await create(ws);
    publishAll(b);
    await verify(ws, b);
    await verify(ws, c); // nothing published: FAILED

    const first = (await h.call(ws.key, 'GET', '/v1/domains?limit=2')).json();
    expect(first.data.map((x: DomainBody) => x.id)).toEqual([c.id, b.id]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (
      await h.call(ws.key, 'GET', `/v1/domains?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)
    ).json();
    expect(second.data.map((x: DomainBody) => x.id)).toEqual([a.id]);
    expect(second.nextCursor).toBeNull();
    expect(first.data[1].verification.records[0].status).toBe('VERIFIED');

    for (const [status, ids] of [
      ['PENDING', [a.id]],
      ['VERIFIED', [b.id]],
      ['FAILED', [c.id]],
    ] as const) {
      const res = await h.call(ws.key, 'GET', `/v1/domains?status=${status}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((x: DomainBody) => x.id)).toEqual(ids);
    }
    const bad = await h.call(ws.key, 'GET', '/v1/domains?status=ACTIVE');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/query/status' }] });
    for (const q of ['limit=0', 'limit=101', 'cursor=nope', 'other=1']) {
      const res = await h.call(ws.key, 'GET', `/v1/domains?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('DELETE removes the domain (204), then it is gone; the name can be added again', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    const res = await h.call(ws.key, 'DELETE', `/v1/domains/${d.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await h.call(ws.key, 'GET', `/v1/domains/${d.id}`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'DELETE', `/v1/domains/${d.id}`)).json()).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect((await h.call(ws.key, 'POST', `/v1/domains/${d.id}/verify`)).statusCode).toBe(404);
    expect((await h.call(ws.key, 'GET', '/v1/domains')).json().data).toEqual([]);
    expect(
      await h.db.kysely.selectFrom('domains').select('id').where('id', '=', d.id).executeTakeFirst(),
    ).toBeUndefined();
    expect((await create(ws, d.name)).id).not.toBe(d.id);
  });

  it('409 domain_exists for a name already in the workspace, however it is written; other workspaces may add it', async () => {
    const ws = await h.workspace();
    const name = uniqueName();
    await create(ws, name);
    for (const again of [name, name.toUpperCase(), `${name}.`, ` ${name} `]) {
      const res = await h.call(ws.key, 'POST', '/v1/domains', { name: again });
      expect(res.statusCode, again).toBe(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 409, code: 'domain_exists', type: '/docs/errors#domain_exists' });
      expect(res.json().detail).toContain(name);
    }
    expect((await h.call(ws.key, 'GET', '/v1/domains')).json().data).toHaveLength(1);
    const other = await h.workspace();
    await create(other, name);
  });

  it.each([
    ['empty', ''],
    ['localhost', 'localhost'],
    ['a space', 'a b.com'],
    ['one label', 'com'],
    ['leading hyphen', '-bad.example.com'],
    ['trailing hyphen', 'bad-.example.com'],
    ['empty label', 'example..com'],
    ['leading dot', '.example.com'],
    ['a URL', 'https://example.com'],
    ['an email address', 'news@example.com'],
    ['a port', 'example.com:25'],
    ['an IPv4 address', '192.0.2.1'],
    ['an IPv6 address', '2001:db8::1'],
    ['an underscore label', '_dmarc.example.com'],
    ['a 64-character label', `${'a'.repeat(64)}.com`],
    ['254 characters', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.com`],
    ['a wildcard', '*.example.com'],
  ])('422 validation_failed /name for %s', async (_label, name) => {
    const ws = await h.workspace();
    const res = await h.call(ws.key, 'POST', '/v1/domains', { name });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: '/name' }] });
    expect((await h.call(ws.key, 'GET', '/v1/domains')).json().data).toEqual([]);
  });

  it('422 for a body that is not { name: string } and nothing else', async () => {
    const ws = await h.workspace();
    for (const [body, paths] of [
      [{}, ['/name']],
      [{ name: 5 }, ['/name']],
      [{ name: null }, ['/name']],
      [{ name: 'example.com', status: 'VERIFIED' }, ['/status']],
      [{ name: 'example.com', records: [] }, ['/records']],
    ] as const) {
      const res = await h.call(ws.key, 'POST', '/v1/domains', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(paths);
    }
    expect((await h.call(ws.key, 'POST', '/v1/domains', ['example.com'])).statusCode).toBe(422);
    expect((await h.call(ws.key, 'POST', '/v1/domains')).statusCode).toBe(422);
    expect((await h.call(ws.key, 'POST', '/v1/domains', '{"name":')).json().code).toBe('invalid_json');
    expect(
      (
        await h.call(ws.key, 'POST', '/v1/domains', 'name=example.com', {
          'content-type': 'application/x-www-form-urlencoded',
        })
      ).statusCode,
    ).toBe(415);
    expect((await h.call(ws.key, 'GET', '/v1/domains')).json().data).toEqual([]);
  });

  it('an internationalized name is stored, published and verified as punycode', async () => {
    const ws = await h.workspace();
    const label = `bücher-${crypto.randomBytes(3).toString('hex')}`;
    const d = await create(ws, `${label.toUpperCase()}.Example`);
    const ascii = `${new URL(`http://${label}.example`).hostname}`;
    expect(ascii).toMatch(/^xn--/);
    expect(d.name).toBe(ascii);
    expect(ownershipOf(d).name).toBe(`_formcast.${ascii}`);
    expect(dkimOf(d).name.endsWith(`._domainkey.${ascii}`)).toBe(true);
    const dup = await h.call(ws.key, 'POST', '/v1/domains', { name: ascii });
    expect(dup.json().code).toBe('domain_exists');
    publishAll(d);
    expect((await verify(ws, d)).status).toBe('VERIFIED');
  });

  it("another workspace's domain is answered like a missing one (404) by every operation, and left alone", async () => {
    const mine = await h.workspace();
    const theirs = await h.workspace();
    const d = await create(theirs);
    publishAll(d);
    for (const [method, url] of [
      ['GET', `/v1/domains/${d.id}`],
      ['DELETE', `/v1/domains/${d.id}`],
      ['POST', `/v1/domains/${d.id}/verify`],
      ['GET', '/v1/domains/dom_01JD0000000000000000000000'],
      ['DELETE', '/v1/domains/dom_01JD0000000000000000000000'],
      ['POST', '/v1/domains/dom_01JD0000000000000000000000/verify'],
    ] as const) {
      const res = await h.call(mine.key, method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'not_found', status: 404 });
    }
    expect((await h.call(mine.key, 'GET', '/v1/domains')).json().data).toEqual([]);
    // Theirs is untouched: still there, still PENDING, never checked.
    expect((await h.call(theirs.key, 'GET', `/v1/domains/${d.id}`)).json()).toMatchObject({
      status: 'PENDING',
      verification: null,
    });
  });

  it('scopes: read:domains reads, write:domains writes (and reads); 403 insufficient_scope otherwise; 401 without a key', async () => {
    const ws = await h.workspace();
    const d = await create(ws);
    const reader = await h.key(ws, ['read:domains']);
    const writer = await h.key(ws, ['write:domains']);
    const other = await h.key(ws, ['read:forms', 'write:broadcasts']);

    expect((await h.call(reader, 'GET', '/v1/domains')).statusCode).toBe(200);
    expect((await h.call(reader, 'GET', `/v1/domains/${d.id}`)).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['POST', '/v1/domains', { name: uniqueName() }],
      ['POST', `/v1/domains/${d.id}/verify`, undefined],
      ['DELETE', `/v1/domains/${d.id}`, undefined],
    ] as const) {
      const res = await h.call(reader, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ code: 'insufficient_scope' });
      expect(res.json().detail).toContain('write:domains');
    }
    for (const url of ['/v1/domains', `/v1/domains/${d.id}`]) {
      const res = await h.call(other, 'GET', url);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('read:domains');
      expect((await h.call(null, 'GET', url)).statusCode).toBe(401);
    }
    expect((await h.call(other, 'POST', '/v1/domains', { name: uniqueName() })).statusCode).toBe(403);
    expect((await h.call(null, 'POST', '/v1/domains', { name: uniqueName() })).statusCode).toBe(401);
    expect((await h.call(writer, 'GET', `/v1/domains/${d.id}`)).statusCode).toBe(200);
    expect((await h.call(writer, 'POST', `/v1/domains/${d.id}/verify`)).statusCode).toBe(200);
    expect((await h.call(writer, 'POST', '/v1/domains', { name: uniqueName() })).statusCode).toBe(201);
    expect((await h.call(writer, 'DELETE', `/v1/domains/${d.id}`)).statusCode).toBe(204);
    expect((await h.call(reader, 'GET', '/v1/domains')).json().data).toHaveLength(1);
  });

  it('getSigningKey hands the sending pipeline the key of a VERIFIED domain of the workspace only', async () => {
    const ws = await h.workspace();
    const other = await h.workspace();
    const d = await create(ws);
    expect(await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET)).toBeUndefined(); // PENDING
    publishAll(d);
    await verify(ws, d);
    const key = await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET);
    expect(key).toEqual({
      domain: d.name,
      selector: dkimOf(d).name.split('._domainkey.')[0],
      privateKey: await privateKeyOf(d.id),
      trackingHost: null,
    });
    const publicKey = crypto.createPublicKey({
      key: Buffer.from(dkimOf(d).value.split('p=')[1]!, 'base64'),
      format: 'der',
      type: 'spki',
    });
    const sig = crypto.sign('sha256', Buffer.from('x'), key!.privateKey);
    expect(crypto.verify('sha256', Buffer.from('x'), publicKey, sig)).toBe(true);
    expect(await getSigningKey(h.db.kysely, ws.id, d.name.toUpperCase(), TEST_SECRET)).toEqual(key);
    expect(await getSigningKey(h.db.kysely, other.id, d.name, TEST_SECRET)).toBeUndefined();
    expect(await getSigningKey(h.db.kysely, ws.id, `sub.${d.name}`, TEST_SECRET)).toBeUndefined();
    zone.delete(dkimOf(d).name);
    await verify(ws, d); // FAILED
    expect(await getSigningKey(h.db.kysely, ws.id, d.name, TEST_SECRET)).toBeUndefined();
  });
});
