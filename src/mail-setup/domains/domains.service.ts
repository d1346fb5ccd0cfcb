import crypto from 'node:crypto';
import { SYSTEM_ACTOR, recordAudit, type AuditActor } from '../../outbox/index.js';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';
import { type Db, isUniqueViolation } from '../../db/connection.js';
import { conflict, notFound, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { envelopeDns, type RelayProfileName } from '../../mail/relay-profiles.js';
import {
  checkDomain,
  checkReverseDns,
  parseDnsServers,
  resolverLookup,
  type DnsLookup,
  type EnvelopeDns,
} from './domains.dns.js';
import * as repo from './domains.repository.js';
import type { CreateDomainInput, DnsRecord, Domain, DomainStatus, UpdateDomainInput } from './domains.schemas.js';

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

/** The installation's relay (RELAY_PROFILE, mail/relay-profiles.ts): which envelope domain and records to advise. */
export interface RelayDns {
  profile: RelayProfileName;
  sesRegion?: string | null;
}

/**
 * The records to publish, in this order: the ownership token, the DKIM public key, then what the envelope sender's
 * domain needs for the installation's relay (generic SMTP: the bounce domain's MX, where bounce reports reach the
 * inbound listener, and its SPF record; other relays: theirs, relay-profiles.ts), then the tracking host's CNAME.
 */
export function recordsFor(
  d: repo.DomainRecord,
  bounce: BounceDns,
  relay: RelayDns = { profile: 'smtp' },
  trackingTarget = 'localhost',
): { ownership: DnsRecord; dkim: DnsRecord; envelope: EnvelopeDns; tracking: DnsRecord | null; all: DnsRecord[] } {
  const ownership: DnsRecord = {
    type: 'TXT',
    name: `_formcast.${d.name}`,
    value: `formcast-verification=${d.verificationToken}`,
  };
  const dkim: DnsRecord = {
    type: 'TXT',
    name: `${d.dkimSelector}._domainkey.${d.name}`,
    value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}`,
  };
  const envelope = {
    profile: relay.profile,
    ...envelopeDns(d.name, {
      profile: relay.profile,
      bounceMxHost: bounce.mxHost,
      sendingSpf: bounce.spf,
      sesRegion: relay.sesRegion ?? null,
    }),
  };
  const tracking: DnsRecord | null = d.trackingHost
    ? { type: 'CNAME', name: d.trackingHost, value: trackingTarget }
    : null;
  return {
    ownership,
    dkim,
    envelope,
    tracking,
    all: [ownership, dkim, ...envelope.records, ...(tracking ? [tracking] : [])],
  };
}

export interface DomainsOptions {
  /** Resolvers for verification (DNS_SERVERS); empty: the system's. `host` or `host:port`, IP addresses. */
  dnsServers: string[];
  /** Time allowed per DNS query and server, in milliseconds (one try each). Default 5000. */
  dnsTimeoutMs?: number;
  /** BOUNCE_MX_HOST and SENDING_SPF; default: a host of the PUBLIC_URL's name. */
  bounce?: BounceDns;
  /** RELAY_PROFILE and SES_REGION: the envelope domain and records to advise. Default generic SMTP. */
  relay?: RelayDns;
  /** Where a tracking host's CNAME must point: the host of PUBLIC_URL. */
  trackingTarget?: string;
  /** The installation's key (db/secrets.ts): DKIM private keys are stored sealed with it (domains.keys.ts). */
  secret: Buffer;
}

export class DomainsService {
  private readonly lookup: DnsLookup;
  private readonly bounce: BounceDns;
  private readonly relay: RelayDns;
  private readonly trackingTarget: string;
  private readonly secret: Buffer;

  /** Throws a ConfigError for a DNS_SERVERS entry that is not an IP address (with an optional port). */
  constructor(
    private readonly db: Db,
    options: DomainsOptions,
  ) {
    this.secret = options.secret;
    this.lookup = resolverLookup(parseDnsServers(options.dnsServers), options.dnsTimeoutMs ?? 5000);
    this.bounce = options.bounce ?? { mxHost: 'localhost', spf: 'a:localhost' };
    this.relay = options.relay ?? { profile: 'smtp' };
    this.trackingTarget = options.trackingTarget ?? this.bounce.mxHost;
  }

  private records(d: repo.DomainRecord) {
    return recordsFor(d, this.bounce, this.relay, this.trackingTarget);
  }

  private present(d: repo.DomainRecord): Domain {
    return {
      id: d.id,
      name: d.name,
      status: d.status,
      records: this.records(d).all,
      createdAt: d.createdAt,
      verifiedAt: d.verifiedAt,
      trackingHost: d.trackingHost,
      verification: d.verification,
    };
  }

  /** A tracking host must be a host under the domain (it is the domain's own, and aligns with its From). */
  private trackingHostOf(domain: string, input: string | null | undefined, path: string): string | null {
    if (input == null) return null;
    const host = normalizeDomainName(input);
    if (!host || !host.endsWith(`.${domain}`))
      throw validationFailed([
        { path, message: `must be a host name under ${domain}, such as links.${domain} (a CNAME to this service)` },
      ]);
    return host;
  }

  /** PUT /v1/domains/{id}: sets or clears the tracking host; it is used once a DNS check (verify) finds its CNAME. */
  async update(
    workspaceId: string,
    id: string,
    input: UpdateDomainInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    const host = this.trackingHostOf(d.name, input.trackingHost, '/trackingHost');
    if (host === d.trackingHost) return this.present(d);
    const saved = await this.db.kysely.transaction().execute(async (trx) => {
      const saved = await repo.setTrackingHost(trx, workspaceId, id, host);
      if (!saved) throw notFound('domain');
      await recordAudit(trx, workspaceId, actor, {
        action: 'domain.updated',
        target: { type: 'domain', id, label: d.name },
        changes: { trackingHost: { before: d.trackingHost, after: host } },
      });
      return saved;
    });
    return this.present(saved);
  }

  /**
   * The reverse DNS (PTR) of the addresses mail leaves from, each forward-confirmed or not (doctor; docs/deliverability.md).
   */
  checkSendingIps(ips: readonly string[]) {
    return Promise.all(ips.map((ip) => checkReverseDns(this.lookup, ip)));
  }

  /** The addresses of a host (a relay's), for the PTR check of doctor. */
  async addressesOf(host: string): Promise<string[]> {
    const found = await this.lookup.addresses(host);
    return found.ok ? found.values : [];
  }

  /**
   * Adds a sending domain with a fresh RSA-2048 DKIM key pair. The private key is stored for signing and
   * never returned. `verified` is the operator's shortcut (CLI `--verified`): no DNS check; and for a domain the
   * workspace already has (PENDING or FAILED), it marks that one VERIFIED, keeping its keys and records, instead of
   * refusing. Without it a domain already there is 409 domain_exists.
   */
  async add(
    workspaceId: string,
    rawName: string,
    opts: { verified?: boolean } = {},
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<Domain> {
    const verified = opts.verified ?? false;
    const name = normalizeDomainName(rawName);
    const existing = verified && name ? await repo.findDomainByName(this.db.kysely, workspaceId, name) : undefined;
    if (!existing) return this.insert(workspaceId, rawName, verified, undefined, actor);
    if (existing.status === 'VERIFIED') return this.present(existing);
    const saved = await this.db.kysely.transaction().execute(async (trx) => {
      const saved = await repo.markVerified(trx, workspaceId, existing.id, nowIso());
      if (!saved) throw notFound('domain');
      await recordAudit(trx, workspaceId, actor, {
        action: 'domain.verified',
        target: { type: 'domain', id: existing.id, label: existing.name },
        changes: { status: { before: existing.status, after: 'VERIFIED' } },
      });
      return saved;
    });
    return this.present(saved);
  }

  /** POST /v1/domains: a PENDING domain with the records to publish. */
  create(workspaceId: string, input: CreateDomainInput, actor: AuditActor = SYSTEM_ACTOR): Promise<Domain> {
    return this.insert(workspaceId, input.name, false, input.trackingHost, actor);
  }

  private async insert(
    workspaceId: string,
    rawName: string,
    verified: boolean,
    rawTrackingHost: string | null | undefined,
    actor: AuditActor,
  ): Promise<Domain> {
    const name = normalizeDomainName(rawName);
    if (!name)
      throw validationFailed([
        {
          path: '/name',
          message: 'must be a domain name such as example.com (two or more labels of letters, digits and hyphens)',
        },
      ]);
    const trackingHost = this.trackingHostOf(name, rawTrackingHost, '/trackingHost');
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
      trackingHost,
      trackingVerifiedAt: null,
    };
    try {
      await this.db.kysely.transaction().execute(async (trx) => {
        await repo.insertDomain(trx, this.secret, { ...record, workspaceId, dkimPrivateKey: privateKey });
        // The DKIM private key is a secret: named only (docs/audit-log.md).
        await recordAudit(trx, workspaceId, actor, {
          action: 'domain.added',
          target: { type: 'domain', id: record.id, label: name },
          changes: {
            status: { before: null, after: record.status },
            ...(trackingHost ? { trackingHost: { before: null, after: trackingHost } } : {}),
            dkimPrivateKey: { secret: true },
          },
        });
      });
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

  async remove(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.db.kysely.transaction().execute(async (trx) => {
      const d = await repo.getDomain(trx, workspaceId, id);
      if (!d || !(await repo.deleteDomain(trx, workspaceId, id))) throw notFound('domain');
      await recordAudit(trx, workspaceId, actor, {
        action: 'domain.removed',
        target: { type: 'domain', id, label: d.name },
        changes: { status: { before: d.status, after: null } },
      });
    });
  }

  /** The DNS check of a domain of the workspace by name, not stored (preflight); undefined when there is no such domain. */
  async checkDns(workspaceId: string, name: string): Promise<Domain['verification'] | undefined> {
    const d = await repo.findDomainByName(this.db.kysely, workspaceId, name);
    if (!d) return undefined;
    return (await checkDomain(this.lookup, this.verifyInput(d), nowIso)).verification;
  }

  private verifyInput(d: repo.DomainRecord) {
    const { ownership, dkim, envelope, tracking } = this.records(d);
    return {
      domain: d.name,
      ownership,
      dkim,
      envelope,
      tracking: tracking ? { host: tracking.name, target: tracking.value } : null,
    };
  }

  /**
   * Looks the records up in DNS (no transaction is held meanwhile) and stores the result: VERIFIED when
   * the ownership token and the DKIM key are both published, FAILED otherwise, from whatever status. A
   * domain that stays VERIFIED keeps its verifiedAt; one that fails loses it.
   */
  async verify(workspaceId: string, id: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Domain> {
    const d = await repo.getDomain(this.db.kysely, workspaceId, id);
    if (!d) throw notFound('domain');
    const { verified, verification } = await checkDomain(this.lookup, this.verifyInput(d), nowIso);
    const trackingOk = verification.tracking?.status === 'VERIFIED';
    const status = verified ? 'VERIFIED' : 'FAILED';
    const saved = await this.db.kysely.transaction().execute(async (trx) => {
      const saved = await repo.saveVerification(trx, workspaceId, id, {
        status,
        verification,
        verifiedAt: verified ? (d.status === 'VERIFIED' && d.verifiedAt ? d.verifiedAt : verification.checkedAt) : null,
        // The tracking host is used once its CNAME is found, and no longer once it is gone (or the domain failed).
        tracking: d.trackingHost
          ? { host: d.trackingHost, verifiedAt: trackingOk && verified ? verification.checkedAt : null }
          : null,
      });
      if (!saved) throw notFound('domain');
      // A check that moves the status is a change of the domain (docs/audit-log.md); one that confirms it, none.
      if (status !== d.status)
        await recordAudit(trx, workspaceId, actor, {
          action: verified ? 'domain.verified' : 'domain.updated',
          target: { type: 'domain', id, label: d.name },
          changes: { status: { before: d.status, after: status } },
        });
      return saved;
    });
    if (!saved) throw notFound('domain');
    return this.present(saved);
  }
}
