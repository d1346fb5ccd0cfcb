import crypto from 'node:crypto';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';
import { type Db, isUniqueViolation } from '../../db/connection.js';
import { conflict, notFound, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { bounceDomain } from '../../mail/verp.js';
import { checkDomain, parseDnsServers, resolverLookup, type DnsLookup } from './domains.dns.js';
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

/** Where the bounce domain's MX points and what its SPF allows (docs/bounces.md). */
export interface BounceDns {
  mxHost: string;
  spf: string;
}

/**
 * The records to publish, in this order: the ownership token, the DKIM public key, the bounce domain's MX
 * (bounce reports reach the inbound listener) and its SPF record (the Return-Path's domain).
 */
export function recordsFor(
  d: repo.DomainRecord,
  bounce: BounceDns,
): [ownership: DnsRecord, dkim: DnsRecord, bounceMx: DnsRecord, bounceSpf: DnsRecord] {
  return [
    { type: 'TXT', name: `_formcast.${d.name}`, value: `formcast-verification=${d.verificationToken}` },
    { type: 'TXT', name: `${d.dkimSelector}._domainkey.${d.name}`, value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}` },
    { type: 'MX', name: bounceDomain(d.name), value: bounce.mxHost, priority: 10 },
    { type: 'TXT', name: bounceDomain(d.name), value: `v=spf1 ${bounce.spf} ~all` },
  ];
}

export interface DomainsOptions {
  /** Resolvers for verification (DNS_SERVERS); empty: the system's. `host` or `host:port`, IP addresses. */
  dnsServers: string[];
  /** Time allowed per DNS query and server, in milliseconds (one try each). Default 5000. */
  dnsTimeoutMs?: number;
  /** BOUNCE_MX_HOST and SENDING_SPF; default: a host of the PUBLIC_URL's name. */
  bounce?: BounceDns;
  /** The installation's key (db/secrets.ts): DKIM private keys are stored sealed with it (domains.keys.ts). */
  secret: Buffer;
}

export class DomainsService {
  private readonly lookup: DnsLookup;
  private readonly bounce: BounceDns;
  private readonly secret: Buffer;

  /** Throws a ConfigError for a DNS_SERVERS entry that is not an IP address (with an optional port). */
  constructor(
    private readonly db: Db,
    options: DomainsOptions,
  ) {
    this.secret = options.secret;
    this.lookup = resolverLookup(parseDnsServers(options.dnsServers), options.dnsTimeoutMs ?? 5000);
    this.bounce = options.bounce ?? { mxHost: 'localhost', spf: 'a:localhost' };
  }

  private present(d: repo.DomainRecord): Domain {
    return {
      id: d.id,
      name: d.name,
      status: d.status,
      records: recordsFor(d, this.bounce),
      createdAt: d.createdAt,
      verifiedAt: d.verifiedAt,
      verification: d.verification,
    };
  }

  /**
   * Adds a sending domain with a fresh RSA-2048 DKIM key pair. The private key is stored for signing and
   * never returned. `verified` is the operator's shortcut (CLI `--verified`): no DNS check; and for a domain the
   * workspace already has (PENDING or FAILED), it marks that one VERIFIED, keeping its keys and records, instead of
   * refusing. Without it a domain already there is 409 domain_exists.
   */
  async add(workspaceId: string, rawName: string, opts: { verified?: boolean } = {}): Promise<Domain> {
    const verified = opts.verified ?? false;
    const name = normalizeDomainName(rawName);
    const existing = verified && name ? await repo.findDomainByName(this.db.kysely, workspaceId, name) : undefined;
    if (!existing) return this.insert(workspaceId, rawName, verified);
    if (existing.status === 'VERIFIED') return this.present(existing);
    const saved = await repo.markVerified(this.db.kysely, workspaceId, existing.id, nowIso());
    if (!saved) throw notFound('domain');
    return this.present(saved);
  }

  /** POST /v1/domains: a PENDING domain with the records to publish. */
  create(workspaceId: string, input: CreateDomainInput): Promise<Domain> {
    return this.insert(workspaceId, input.name, false);
  }

  private async insert(workspaceId: string, rawName: string, verified: boolean): Promise<Domain> {
    const name = normalizeDomainName(rawName);
    if (!name)
      throw validationFailed([
        {
          path: '/name',
          message: 'must be a domain name such as example.com (two or more labels of letters, digits and hyphens)',
        },
      ]);
    const { publicKey, privateKey } = await generateKeyPair('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const now = nowIso();
    const record: repo.DomainRecord = {
      id: newId('dom'),
      name,
      status: verified ? 'VERIFIED' : 'PENDING',
      verificationToken: crypto.randomBytes(16).toString('hex'),
      dkimSelector: `fc${now.slice(0, 10).replace(/-/g, '')}`,
      dkimPublicKey: publicKey.toString('base64'),
      verification: null,
      createdAt: now,
      verifiedAt: verified ? now : null,
    };
    try {
      await repo.insertDomain(this.db.kysely, this.secret, { ...record, workspaceId, dkimPrivateKey: privateKey });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('domain_exists', `the domain ${name} is already in this workspace`);
      throw err;
    }
    return this.present(record);
  }

  async get(workspaceId: string, id: string): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    return this.present(d);
  }

  async list(
    workspaceId: string,
    opts: { status?: DomainStatus; limit: number; beforeId?: string },
  ): Promise<Domain[]> {
    return (await repo.listDomains(this.db.kysely, workspaceId, opts)).map((d) => this.present(d));
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await repo.deleteDomain(this.db.kysely, workspaceId, id))) throw notFound('domain');
  }

  /** The DNS check of a domain of the workspace by name, not stored (preflight); undefined when there is no such domain. */
  async checkDns(workspaceId: string, name: string): Promise<Domain['verification'] | undefined> {
    const d = await repo.findDomainByName(this.db.kysely, workspaceId, name);
    if (!d) return undefined;
    const [ownership, dkim, bounceMx, bounceSpf] = recordsFor(d, this.bounce);
    return (await checkDomain(this.lookup, { domain: d.name, ownership, dkim, bounceMx, bounceSpf }, nowIso))
      .verification;
  }

  /**
   * Looks the records up in DNS (no transaction is held meanwhile) and stores the result: VERIFIED when
   * the ownership token and the DKIM key are both published, FAILED otherwise, from whatever status. A
   * domain that stays VERIFIED keeps its verifiedAt; one that fails loses it.
   */
  async verify(workspaceId: string, id: string): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    const [ownership, dkim, bounceMx, bounceSpf] = recordsFor(d, this.bounce);
    const { verified, verification } = await checkDomain(
      this.lookup,
      { domain: d.name, ownership, dkim, bounceMx, bounceSpf },
      nowIso,
    );
    const saved = await repo.saveVerification(this.db.kysely, workspaceId, id, {
      status: verified ? 'VERIFIED' : 'FAILED',
      verification,
      verifiedAt: verified ? (d.status === 'VERIFIED' && d.verifiedAt ? d.verifiedAt : verification.checkedAt) : null,
    });
    if (!saved) throw notFound('domain');
    return this.present(saved);
  }
}
