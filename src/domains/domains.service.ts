import crypto from 'node:crypto';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';
import type { Db } from '../db/connection.js';
import { isUniqueViolation } from '../db/connection.js';
import { conflict, notFound, validationFailed } from '../errors/errors.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import { checkDomain, parseDnsServers, resolverLookup, type TxtLookup } from './domains.dns.js';
import * as repo from './domains.repository.js';
import type { CreateDomainInput, DnsRecord, Domain, DomainStatus } from './domains.schemas.js';

export type { DnsRecord, Domain } from './domains.schemas.js';

const generateKeyPair = promisify(crypto.generateKeyPair);

/** What `formcast domain add` prints: the domain without the (not yet run) DNS check. */

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-cased ASCII (punycode for IDNs), at least two labels; null if it is not a domain name. */
export function normalizeDomainName(input: string): string | null {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '').toLowerCase());
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!) ? ascii : null;
}

/** The records to publish, in this order: the ownership token, then the DKIM public key. */
export function recordsFor(d: repo.DomainRecord): [ownership: DnsRecord, dkim: DnsRecord] {
  return [
    { type: 'TXT', name: `_formcast.${d.name}`, value: `formcast-verification=${d.verificationToken}` },
    { type: 'TXT', name: `${d.dkimSelector}._domainkey.${d.name}`, value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}` },
  ];
}

function present(d: repo.DomainRecord): Domain {
  return {
    id: d.id, name: d.name, status: d.status, records: recordsFor(d), createdAt: d.createdAt, verifiedAt: d.verifiedAt,
    verification: d.verification,
  };
}

export interface DomainsOptions {
  /** Resolvers for verification (DNS_SERVERS); empty: the system's. `host` or `host:port`, IP addresses. */
  dnsServers: string[];
  /** Time allowed per DNS query and server, in milliseconds (one try each). Default 5000. */
  dnsTimeoutMs?: number;
}

export class DomainsService {
  private readonly lookup: TxtLookup;

  /** Throws a ConfigError for a DNS_SERVERS entry that is not an IP address (with an optional port). */
  constructor(private readonly db: Db, options: DomainsOptions = { dnsServers: [] }) {
    this.lookup = resolverLookup(parseDnsServers(options.dnsServers), options.dnsTimeoutMs ?? 5000);
  }

  /**
   * Adds a sending domain with a fresh RSA-2048 DKIM key pair. The private key is stored for signing and
   * never returned. `verified` is the operator's shortcut (CLI `--verified`): no DNS check.
   */
  add(workspaceId: string, rawName: string, opts: { verified?: boolean } = {}): Promise<Domain> {
    return this.insert(workspaceId, rawName, opts.verified ?? false);
  }

  /** POST /v1/domains: a PENDING domain with the records to publish. */
  create(workspaceId: string, input: CreateDomainInput): Promise<Domain> {
    return this.insert(workspaceId, input.name, false);
  }

  private async insert(workspaceId: string, rawName: string, verified: boolean): Promise<Domain> {
    const name = normalizeDomainName(rawName);
    if (!name) throw validationFailed([{ path: '/name', message: 'must be a domain name such as example.com (two or more labels of letters, digits and hyphens)' }]);
    const { publicKey, privateKey } = await generateKeyPair('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const now = nowIso();
    const record: repo.DomainRecord = {
      id: newId('dom'), name, status: verified ? 'VERIFIED' : 'PENDING',
      verificationToken: crypto.randomBytes(16).toString('hex'),
      dkimSelector: `fc${now.slice(0, 10).replace(/-/g, '')}`,
      dkimPublicKey: publicKey.toString('base64'), verification: null, createdAt: now, verifiedAt: verified ? now : null,
    };
    try {
      await repo.insertDomain(this.db.kysely, { ...record, workspaceId, dkimPrivateKey: privateKey });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('domain_exists', `the domain ${name} is already in this workspace`);
      throw err;
    }
    return present(record);
  }

  async get(workspaceId: string, id: string): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    return present(d);
  }

  async list(workspaceId: string, opts: { status?: DomainStatus; limit: number; beforeId?: string }): Promise<Domain[]> {
    return (await repo.listDomains(this.db.kysely, workspaceId, opts)).map(present);
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await repo.deleteDomain(this.db.kysely, workspaceId, id))) throw notFound('domain');
  }

  /**
   * Looks the records up in DNS (no transaction is held meanwhile) and stores the result: VERIFIED when
   * the ownership token and the DKIM key are both published, FAILED otherwise, from whatever status. A
   * domain that stays VERIFIED keeps its verifiedAt; one that fails loses it.
   */
  async verify(workspaceId: string, id: string): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    const [ownership, dkim] = recordsFor(d);
    const { verified, verification } = await checkDomain(this.lookup, { domain: d.name, ownership, dkim }, nowIso);
    const saved = await repo.saveVerification(this.db.kysely, workspaceId, id, {
      status: verified ? 'VERIFIED' : 'FAILED',
      verification,
      verifiedAt: verified ? (d.status === 'VERIFIED' && d.verifiedAt ? d.verifiedAt : verification.checkedAt) : null,
    });
    if (!saved) throw notFound('domain');
    return present(saved);
  }
}
