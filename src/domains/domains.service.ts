import crypto from 'node:crypto';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';
import type { Db } from '../db/connection.js';
import { isUniqueViolation } from '../db/connection.js';
import { conflict, validationFailed } from '../http/errors.js';
import { newId } from '../lib/ids.js';
import { nowIso } from '../lib/time.js';
import * as repo from './domains.repository.js';

const generateKeyPair = promisify(crypto.generateKeyPair);

export interface DnsRecord {
  type: 'TXT';
  name: string;
  value: string;
}

export interface Domain {
  id: string;
  name: string;
  status: repo.DomainRecord['status'];
  records: DnsRecord[];
  createdAt: string;
  verifiedAt: string | null;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-cased ASCII (punycode for IDNs), at least two labels; null if it is not a domain name. */
export function normalizeDomainName(input: string): string | null {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '').toLowerCase());
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!) ? ascii : null;
}

export function recordsFor(d: repo.DomainRecord): DnsRecord[] {
  return [
    { type: 'TXT', name: `_formcast.${d.name}`, value: `formcast-verification=${d.verificationToken}` },
    { type: 'TXT', name: `${d.dkimSelector}._domainkey.${d.name}`, value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}` },
  ];
}

function present(d: repo.DomainRecord): Domain {
  return { id: d.id, name: d.name, status: d.status, records: recordsFor(d), createdAt: d.createdAt, verifiedAt: d.verifiedAt };
}

export interface DomainsOptions {
  /** Resolvers for verification (DNS_SERVERS); empty: the system's. `host` or `host:port`. */
  dnsServers: string[];
}

export class DomainsService {
  constructor(private readonly db: Db, private readonly options: DomainsOptions = { dnsServers: [] }) {}

  /**
   * Adds a sending domain with a fresh RSA-2048 DKIM key pair. The private key is stored for signing and
   * never returned. `verified` is the operator's shortcut (CLI `--verified`): no DNS check.
   */
  async add(workspaceId: string, rawName: string, opts: { verified?: boolean } = {}): Promise<Domain> {
    const name = normalizeDomainName(rawName);
    if (!name) throw validationFailed([{ path: '/name', message: 'must be a domain name such as example.com' }]);
    const { publicKey, privateKey } = await generateKeyPair('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const now = nowIso();
    const record: repo.DomainRecord = {
      id: newId('dom'), name, status: opts.verified ? 'VERIFIED' : 'PENDING',
      verificationToken: crypto.randomBytes(16).toString('hex'),
      dkimSelector: `fc${now.slice(0, 10).replace(/-/g, '')}`,
      dkimPublicKey: publicKey.toString('base64'), createdAt: now, verifiedAt: opts.verified ? now : null,
    };
    try {
      await repo.insertDomain(this.db.kysely, { ...record, workspaceId, dkimPrivateKey: privateKey });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('domain_exists', `the domain ${name} is already in this workspace`);
      throw err;
    }
    return present(record);
  }
}
