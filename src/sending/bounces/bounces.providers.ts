import crypto from 'node:crypto';
import { classify, enhancedStatus, replyCode, type BounceClass } from '../../mail/classify.js';
import { SES_DELIVERY_TAG } from '../../mail/relay-profiles.js';

/**
 * Relays that report bounces and complaints over HTTP (docs/bounces.md): Amazon SES through SNS, and
 * Postmark. Each event is turned into the same report the inbound listener makes from a DSN or an ARF
 * report, naming the delivery by its Message-ID (`<deliveryId@domain>`) or by the metadata sent with it.
 */
export type ProviderEvent =
  | { kind: 'bounce'; deliveryId: string; results: { email: string; class: BounceClass; detail: string }[] }
  | { kind: 'complaint'; deliveryId: string; detail: string }
  /** `warn`: the operator should hear of it (a setting of the provider's keeps its reports from being matched). */
  | { kind: 'ignored'; why: string; warn?: boolean };

const DELIVERY_IN_MESSAGE_ID = /<?(dlv_[0-9A-Z]{26})@[^>]+>?/;

export function deliveryIdOfMessageId(messageId: string | null | undefined): string | null {
  return DELIVERY_IN_MESSAGE_ID.exec(messageId ?? '')?.[1] ?? null;
}

// ---------------------------------------------------------------------------------------------------
// Amazon SNS (for SES)

export interface SnsMessage {
  Type: string;
  MessageId: string;
  TopicArn: string;
  Subject?: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  SubscribeURL?: string;
  Token?: string;
}

/** The string SNS signs (its documented field order; Subject only when present, Token and SubscribeURL for confirmations). */
export function snsStringToSign(m: SnsMessage): string {
  const fields =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', ...(m.Subject !== undefined ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return fields.map((f) => `${f}\n${(m as unknown as Record<string, string>)[f] ?? ''}\n`).join('');
}

/**
 * Whether a URL SNS gave (its signing certificate, a subscription's confirmation) is one to fetch: https on a
 * host SNS uses (SNS_CERT_HOST_PATTERN); plain http only on a loopback host the pattern names (tests).
 */
export function snsUrlAllowed(text: string, hostPattern: RegExp): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (!hostPattern.test(url.hostname)) return null;
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return null;
  if (url.username || url.password) return null;
  return url;
}

/** Verifies an SNS message's signature with its certificate (fetched by `fetchCert`, which the caller caches). */
export async function verifySns(
  m: SnsMessage,
  hostPattern: RegExp,
  fetchCert: (url: URL) => Promise<string>,
): Promise<boolean> {
  if (!m || typeof m.Signature !== 'string' || typeof m.SigningCertURL !== 'string') return false;
  const certUrl = snsUrlAllowed(m.SigningCertURL, hostPattern);
  if (!certUrl || !certUrl.pathname.endsWith('.pem')) return false;
  const algorithm = m.SignatureVersion === '2' ? 'RSA-SHA256' : m.SignatureVersion === '1' ? 'RSA-SHA1' : null;
  if (!algorithm) return false;
  const pem = await fetchCert(certUrl);
  try {
    return crypto.verify(
      algorithm,
      Buffer.from(snsStringToSign(m), 'utf8'),
      new crypto.X509Certificate(pem).publicKey,
      Buffer.from(m.Signature, 'base64'),
    );
  } catch {
    return false;
  }
}

interface SesNotification {
  notificationType?: string;
  eventType?: string;
  mail?: {
    messageId?: string;
    headers?: { name: string; value: string }[];
    commonHeaders?: { messageId?: string };
    tags?: Record<string, string[] | undefined>;
  };
  bounce?: {
    bounceType?: string;
    bounceSubType?: string;
    bouncedRecipients?: { emailAddress?: string; status?: string; diagnosticCode?: string; action?: string }[];
  };
  complaint?: {
    complainedRecipients?: { emailAddress?: string }[];
    complaintFeedbackType?: string;
    complaintSubType?: string | null;
  };
}

/**
 * The delivery an SES notification is about: the message tag Formcast sent (`X-SES-MESSAGE-TAGS`, which SES returns in
 * `mail.tags` of the events a configuration set publishes), else the original Message-ID, from the common headers or
 * the headers (SES rewrites the Message-ID on the way, but reports the original one among the original headers).
 */
function sesDeliveryId(n: SesNotification): string | null {
  const tag = n.mail?.tags?.[SES_DELIVERY_TAG]?.[0];
  if (tag && /^dlv_[0-9A-Z]{26}$/.test(tag)) return tag;
  return (
    deliveryIdOfMessageId(n.mail?.commonHeaders?.messageId) ??
    deliveryIdOfMessageId(n.mail?.headers?.find((h) => h.name.toLowerCase() === 'message-id')?.value)
  );
}

/**
 * An SES bounce or complaint notification (SNS `Message`). A bounce recipient is classified by its status and
 * diagnostic code through the one table; without them, Permanent is hard and Transient soft (mailbox full,
 * too large) or, for content rejections, blocked.
 */
export function sesEvent(message: string): ProviderEvent {
  let n: SesNotification;
  try {
    n = JSON.parse(message) as SesNotification;
  } catch {
    return { kind: 'ignored', why: 'the SNS message is not an SES notification' };
  }
  const type = (n.notificationType ?? n.eventType ?? '').toLowerCase();
  if (type !== 'bounce' && type !== 'complaint')
    return { kind: 'ignored', why: `an SES ${type || 'unknown'} notification` };
  const deliveryId = sesDeliveryId(n);
  if (!deliveryId) {
    // Without the original headers (an identity's notifications, by default) nor the message tag (a configuration
    // set's events), nothing in the notification names a delivery: said loudly, it is a setting to change in SES.
    if (!n.mail?.headers?.length && !n.mail?.commonHeaders && !n.mail?.tags?.[SES_DELIVERY_TAG])
      return {
        kind: 'ignored',
        warn: true,
        why: 'the notification carries neither the original headers nor the formcast-delivery tag: in SES, turn on "Include original headers" for the identity\'s Bounce and Complaint notifications (or publish events through a configuration set)',
      };
    return { kind: 'ignored', why: 'the notification names no message Formcast sent' };
  }
  if (type === 'complaint') {
    return {
      kind: 'complaint',
      deliveryId,
      detail: `SES complaint: ${n.complaint?.complaintFeedbackType ?? n.complaint?.complaintSubType ?? 'abuse'}`,
    };
  }
  const bounceType = n.bounce?.bounceType ?? 'Undetermined';
  const sub = n.bounce?.bounceSubType ?? '';
  const fallback: BounceClass =
    bounceType === 'Permanent'
      ? 'hard'
      : bounceType === 'Transient'
        ? /Content|Attachment/i.test(sub)
          ? 'blocked'
          : 'soft'
        : 'failed';
  const results = (n.bounce?.bouncedRecipients ?? []).map((r) => {
    const text = r.diagnosticCode ?? '';
    const status = r.status && /^[245]\.\d{1,3}\.\d{1,3}$/.test(r.status) ? r.status : enhancedStatus(text);
    const cls =
      status || replyCode(text.replace(/^smtp;\s*/i, ''))
        ? (classify({ code: replyCode(text.replace(/^smtp;\s*/i, '')), status, text }) ?? fallback)
        : fallback;
    // SES suppressing an address itself (its suppression list) is a hard bounce to us as well.
    return {
      email: (r.emailAddress ?? '').toLowerCase(),
      class: /Suppressed/i.test(sub) ? ('hard' as const) : cls,
      detail: `SES ${bounceType}/${sub}: ${[status, text].filter(Boolean).join(' ')}`.trim(),
    };
  });
  return {
    kind: 'bounce',
    deliveryId,
    results: results.length ? results : [{ email: '', class: fallback, detail: `SES ${bounceType}/${sub}` }],
  };
}

// ---------------------------------------------------------------------------------------------------
// Postmark

interface PostmarkRecord {
  RecordType?: string;
  Type?: string;
  TypeCode?: number;
  Email?: string;
  Details?: string;
  Description?: string;
  Metadata?: Record<string, string>;
  MessageID?: string;
}

/** Postmark's bounce types (its documentation's table) → our classes; anything else by its details. */
const POSTMARK_TYPES: Record<string, BounceClass> = {
  HardBounce: 'hard',
  BadEmailAddress: 'hard',
  ManuallyDeactivated: 'hard',
  AddressChange: 'hard',
  SoftBounce: 'soft',
  Transient: 'soft',
  DnsError: 'soft',
  Unknown: 'failed',
  SpamNotification: 'blocked',
  VirusNotification: 'blocked',
  ChallengeVerification: 'blocked',
  BlockedBounce: 'blocked',
  SMTPApiError: 'failed',
  ContentRelated: 'blocked',
  Blocked: 'blocked',
  InboundError: 'failed',
  DMARCPolicy: 'blocked',
  TemplateRenderingFailed: 'failed',
};

/**
 * A Postmark Bounce or SpamComplaint webhook. The delivery is named by the metadata Formcast sends with every
 * message through Postmark (`X-PM-Metadata-deliveryId`, which Postmark returns as `Metadata.deliveryId`).
 */
export function postmarkEvent(body: unknown): ProviderEvent {
  const r = (body ?? {}) as PostmarkRecord;
  const deliveryId = /^dlv_[0-9A-Z]{26}$/.test(r.Metadata?.deliveryId ?? '') ? r.Metadata!.deliveryId! : null;
  if (r.RecordType !== 'Bounce' && r.RecordType !== 'SpamComplaint')
    return { kind: 'ignored', why: `a Postmark ${r.RecordType ?? 'unknown'} record` };
  if (!deliveryId) return { kind: 'ignored', why: 'the record carries no deliveryId metadata' };
  if (r.RecordType === 'SpamComplaint' || r.Type === 'SpamComplaint')
    return { kind: 'complaint', deliveryId, detail: 'Postmark spam complaint' };
  if (r.Type === 'AutoResponder') return { kind: 'ignored', why: 'an auto-reply' };
  const text = r.Details ?? '';
  const status = enhancedStatus(text);
  const cls = POSTMARK_TYPES[r.Type ?? ''] ?? classify({ code: replyCode(text), status, text }) ?? 'failed';
  return {
    kind: 'bounce',
    deliveryId,
    results: [
      {
        email: (r.Email ?? '').toLowerCase(),
        class: cls,
        detail: `Postmark ${r.Type ?? 'bounce'}: ${r.Description ?? ''} ${text}`.trim(),
      },
    ],
  };
}
