import type { OutgoingMessage } from './compose.js';
import { bounceDomain } from './verp.js';

/**
 * Relay profiles (docs/deliverability.md, "Relays"): what the relay behind SMTP_URL does to a message on its way, and
 * so what Formcast signs, which headers it adds, and which DNS records it advises for the envelope sender's domain.
 *
 * - `smtp`: a relay that sends the message as it is, with our envelope sender (Postfix, a smart host): everything is
 *   signed; the bounce domain `bounces.<domain>` gets an MX to the inbound listener and an SPF record for the relay.
 * - `ses`: Amazon SES rewrites `Message-ID` and `Date` (a signature over them fails), and sends with the MAIL FROM
 *   domain configured in SES: `bounces.<domain>` as its custom MAIL FROM domain, with SES's MX and SPF.
 * - `postmark`: Postmark sends with its Return-Path domain, `pm-bounces.<domain>` as a CNAME to Postmark; each message
 *   carries its delivery id as metadata, which Postmark's webhooks return.
 * - `sendgrid`: SendGrid's click and open tracking rewrite the body (a signature over it fails): they are turned off
 *   per message (`X-SMTPAPI`); its Return-Path domain is the `em….<domain>` CNAME its domain authentication gives.
 * - `mailgun`: the same for Mailgun (`X-Mailgun-Track: no`); it sends with the domain it is set up for, whose SPF must
 *   include mailgun.org.
 */
export const RELAY_PROFILES = ['smtp', 'ses', 'postmark', 'sendgrid', 'mailgun'] as const;
export type RelayProfileName = (typeof RELAY_PROFILES)[number];

/** A DNS record to advise (structurally the domains API's record). */
export interface AdvisedRecord {
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  value: string;
  priority?: number;
}

export interface RelayProfile {
  name: RelayProfileName;
  /** How the docs and the console name it. */
  label: string;
  /** Headers the relay replaces on the way: left out of the DKIM signature (neither signed nor oversigned). */
  rewrites: readonly string[];
  /** Headers every message gets through this relay. */
  headers: Readonly<Record<string, string>>;
  /** The relay sends with our envelope sender (the VERP address): bounces reach the bounce domain's MX. */
  keepsEnvelope: boolean;
  /**
   * How each broadcast message carries its delivery id for the relay's own reports: Postmark's metadata
   * (`X-PM-Metadata-deliveryId`, returned as `Metadata.deliveryId`), SES's message tags (`X-SES-MESSAGE-TAGS`, returned
   * in `mail.tags` of a configuration set's events), or not at all.
   */
  deliveryTag: 'postmark' | 'ses' | null;
}

const PROFILES: Record<RelayProfileName, RelayProfile> = {
  smtp: {
    name: 'smtp',
    label: 'generic SMTP',
    rewrites: [],
    headers: {},
    keepsEnvelope: true,
    deliveryTag: null,
  },
  ses: {
    name: 'ses',
    label: 'Amazon SES',
    rewrites: ['Message-ID', 'Date'],
    headers: {},
    keepsEnvelope: false,
    deliveryTag: 'ses',
  },
  postmark: {
    name: 'postmark',
    label: 'Postmark',
    rewrites: [],
    headers: {},
    keepsEnvelope: false,
    deliveryTag: 'postmark',
  },
  sendgrid: {
    name: 'sendgrid',
    label: 'SendGrid',
    rewrites: [],
    // Its click and open tracking would rewrite the signed body (and take Formcast's own tracking's place).
    headers: {
      'X-SMTPAPI': '{"filters":{"clicktrack":{"settings":{"enable":0}},"opentrack":{"settings":{"enable":0}}}}',
    },
    keepsEnvelope: false,
    deliveryTag: null,
  },
  mailgun: {
    name: 'mailgun',
    label: 'Mailgun',
    rewrites: [],
    headers: { 'X-Mailgun-Track': 'no' },
    keepsEnvelope: false,
    deliveryTag: null,
  },
};

export function relayProfile(name: RelayProfileName): RelayProfile {
  return PROFILES[name];
}

export function isRelayProfileName(s: string): s is RelayProfileName {
  return (RELAY_PROFILES as readonly string[]).includes(s);
}

/** The profile the relays' host names suggest (RELAY_PROFILE unset): the first one recognised, else generic SMTP. */
export function detectRelayProfile(hosts: readonly string[]): RelayProfileName {
  for (const host of hosts) {
    const h = host.toLowerCase();
    if (/^email-smtp(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/.test(h)) return 'ses';
    if (/(^|\.)postmarkapp\.com$/.test(h)) return 'postmark';
    if (/(^|\.)sendgrid\.net$/.test(h)) return 'sendgrid';
    if (/(^|\.)mailgun\.org$/.test(h)) return 'mailgun';
  }
  return 'smtp';
}

/** The SES message tag naming the delivery (`X-SES-MESSAGE-TAGS`); SES returns it in `mail.tags`. */
export const SES_DELIVERY_TAG = 'formcast-delivery';

/** The headers that carry a delivery's id for the relay's own reports (its profile's `deliveryTag`). */
export function deliveryTagHeaders(profile: RelayProfile, deliveryId: string): Record<string, string> {
  if (profile.deliveryTag === 'postmark') return { 'X-PM-Metadata-deliveryId': deliveryId };
  if (profile.deliveryTag === 'ses') return { 'X-SES-MESSAGE-TAGS': `${SES_DELIVERY_TAG}=${deliveryId}` };
  return {};
}

/** The SES region of an SES SMTP endpoint (`email-smtp.eu-west-1.amazonaws.com` → `eu-west-1`), or null. */
export function sesRegionOf(hosts: readonly string[]): string | null {
  for (const host of hosts) {
    const m = /^email-smtp(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/i.exec(host);
    if (m) return m[1]!.toLowerCase();
  }
  return null;
}

/** The message as this relay should get it: its headers added, the headers it rewrites left out of the signature. */
export function forRelay(m: OutgoingMessage, profile: RelayProfile): OutgoingMessage {
  if (!profile.rewrites.length && !Object.keys(profile.headers).length) return m;
  return {
    ...m,
    headers: { ...m.headers, ...profile.headers },
    dkim: m.dkim && profile.rewrites.length ? { ...m.dkim, unsigned: profile.rewrites } : m.dkim,
  };
}

/** What the installation's relay needs to advise DNS: the profile, and the settings of the generic one. */
export interface EnvelopeDnsSettings {
  profile: RelayProfileName;
  /** BOUNCE_MX_HOST: where the inbound listener receives mail. */
  bounceMxHost: string;
  /** SENDING_SPF: the SPF mechanism of the relay (generic SMTP). */
  sendingSpf: string;
  /** SES's region (from the relay's host name, or SES_REGION). */
  sesRegion?: string | null;
}

/**
 * The envelope sender's domain (the Return-Path: where receivers check SPF, and which DMARC aligns with From) and the
 * records it needs, for a sending domain and the installation's relay. `domain` null: the relay chooses it per account
 * (SendGrid's `em….<domain>`), nothing can be computed; `advice` says what to publish then.
 */
export function envelopeDns(
  sendingDomain: string,
  s: EnvelopeDnsSettings,
): { domain: string | null; records: AdvisedRecord[]; spfInclude: string | null; advice: string | null } {
  const bounces = bounceDomain(sendingDomain);
  switch (s.profile) {
    case 'ses': {
      const region = s.sesRegion ?? 'us-east-1';
      return {
        domain: bounces,
        records: [
          { type: 'MX', name: bounces, value: `feedback-smtp.${region}.amazonses.com`, priority: 10 },
          { type: 'TXT', name: bounces, value: 'v=spf1 include:amazonses.com ~all' },
        ],
        spfInclude: 'include:amazonses.com',
        advice: `In SES, set ${bounces} as the custom MAIL FROM domain of ${sendingDomain}, so that SPF aligns with the From domain; reports then come back through SNS (/hooks/ses).`,
      };
    }
    case 'postmark': {
      const name = `pm-bounces.${sendingDomain}`;
      return {
        domain: name,
        records: [{ type: 'CNAME', name, value: 'pm.mtasv.net' }],
        spfInclude: null,
        advice: `In Postmark, set ${name} as the custom Return-Path domain of ${sendingDomain}, so that SPF aligns with the From domain; reports come back through its webhook (/hooks/postmark).`,
      };
    }
    case 'sendgrid':
      return {
        domain: null,
        records: [],
        spfInclude: null,
        advice: `Publish the CNAME records SendGrid's domain authentication gives for ${sendingDomain} (em….${sendingDomain}, s1._domainkey and s2._domainkey): its Return-Path domain em….${sendingDomain} is what receivers check SPF on, and it aligns with the From domain.`,
      };
    case 'mailgun':
      return {
        domain: sendingDomain,
        records: [{ type: 'TXT', name: sendingDomain, value: 'v=spf1 include:mailgun.org ~all' }],
        spfInclude: 'include:mailgun.org',
        advice: `Mailgun sends with a Return-Path at the domain it is set up for: set it up for ${sendingDomain}, and include mailgun.org in that domain's SPF record (merge it into the one you have: a domain has one SPF record).`,
      };
    case 'smtp':
      return {
        domain: bounces,
        records: [
          { type: 'MX', name: bounces, value: s.bounceMxHost, priority: 10 },
          { type: 'TXT', name: bounces, value: `v=spf1 ${s.sendingSpf} ~all` },
        ],
        spfInclude: s.sendingSpf,
        advice: null,
      };
  }
}
