import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { OutgoingMessage } from './compose.js';
import { dkimSignature, dkimSignatureAsync } from './dkim.js';
import { composeMime, mimeBytes } from './mime.js';
import type { RelayUrl } from './relay-urls.js';
import { forRelay, relayProfile, type RelayProfileName } from './relay-profiles.js';
import { createRelaySet, type RelayState } from './relays.js';

/** How the transport is doing, for logs and /readyz (docs/bounces.md, "The transport"). */
export interface TransportState {
  mode: 'smtp' | 'outbox';
  description: string;
  /** null: not checked yet; false: the last check or the last sends failed to reach the server. */
  ok: boolean | null;
  detail: string | null;
  checkedAt: string | null;
  /** Each relay's health (SMTP only): the transport works while one of them does. */
  relays?: RelayState[];
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  readonly description: string;
  send(message: OutgoingMessage): Promise<{ messageId: string; response: string }>;
  /** A message already built and signed (buildRaw, in a send thread): `from` is the envelope sender, `to` the one recipient. */
  sendRaw(message: RawMessage): Promise<{ messageId: string; response: string; bytesHeld?: boolean }>;
  /** Connects and greets the server (SMTP) or checks the directory (outbox); updates state(). */
  verify(): Promise<TransportState>;
  state(): TransportState;
  close(): Promise<void>;
}

export interface RawMessage {
  from: string;
  to: string;
  messageId: string;
  raw: Uint8Array;
}

export interface MailerOptions {
  /** smtp:// or smtps:// URL; null (and no `relays`) writes .eml files to `outboxDir` instead. */
  smtpUrl: string | null;
  /** Several relays with weights (SMTP_URLS); when given, `smtpUrl` is not used. */
  relays?: readonly RelayUrl[];
  outboxDir: string;
  /** Concurrent SMTP connections of the pool (of each relay's). */
  maxConnections: number;
  /** Messages per second, at most (0: no limit), per relay. */
  rateLimit: number;
  /** The EHLO name (SMTP_HELO_NAME); default nodemailer's (the host name). */
  heloName?: string | null;
  /** Send credentials over a connection without TLS (SMTP_ALLOW_PLAINTEXT_AUTH). */
  allowPlaintextAuth?: boolean;
  /** Told about repeated failures to reach the server (a log line). */
  onFailure?: (state: TransportState, consecutive: number) => void;
  /** What the relay does to a message (RELAY_PROFILE, relay-profiles.ts): `send` signs and adds headers by it. Default `smtp`. */
  relayProfile?: RelayProfileName;
}

/**
 * DKIM keys parsed once. Given the PEM text, OpenSSL parses the key again for every message, which costs
 * more than the RSA signature itself (RSA-2048: ~2.7 times fewer signatures a second; bench/README.md, bench:send,
 * issue 4). Keyed by the PEM; a handful of keys.
 */
const parsedKeys = new Map<string, crypto.KeyObject>();

function signingKey(pem: string): crypto.KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) {
    key = crypto.createPrivateKey(pem);
    if (parsedKeys.size >= 100) parsedKeys.delete(parsedKeys.keys().next().value!);
    parsedKeys.set(pem, key);
  }
  return key;
}

/**
 * The message as bytes: MIME by mime.ts (nodemailer's encoders, structured addresses: nothing re-parses them), then
 * DKIM-signed with oversigning (dkim.ts), its DKIM-Signature first.
 */
export function buildRaw(m: OutgoingMessage): Buffer {
  const { headers, body, plainWhitespace, key } = unsignedMessage(m);
  return mimeBytes(
    key
      ? [dkimSignature(headers, body, key, plainWhitespace), ...headers.map((h) => h.line)]
      : headers.map((h) => h.line),
    body,
  );
}

/** buildRaw with the RSA signature computed in libuv's thread pool (dkim.ts, dkimSignatureAsync): the same bytes. */
export async function buildRawAsync(m: OutgoingMessage): Promise<Buffer> {
  const { headers, body, plainWhitespace, key } = unsignedMessage(m);
  return mimeBytes(
    key
      ? [await dkimSignatureAsync(headers, body, key, plainWhitespace), ...headers.map((h) => h.line)]
      : headers.map((h) => h.line),
    body,
  );
}

/**
 * The message composed (mime.ts) and the key that signs it, if any: what buildRaw and buildRawAsync sign. The body
 * as bytes once (it is ASCII): hashed and copied into the message from them.
 */
function unsignedMessage(m: OutgoingMessage) {
  const { headers, body, plainWhitespace } = composeMime(m, new Date());
  const key = m.dkim
    ? {
        domainName: m.dkim.domainName,
        keySelector: m.dkim.keySelector,
        privateKey: signingKey(m.dkim.privateKey),
        ...(m.dkim.unsigned?.length ? { unsigned: m.dkim.unsigned } : {}),
      }
    : null;
  // (ASCII by construction; were it not, its UTF-8 is what is both hashed and sent.)
  const bytes = Buffer.from(body, Buffer.byteLength(body, 'utf8') === body.length ? 'latin1' : 'utf8');
  return { headers, body: bytes, plainWhitespace, key };
}

/** A message built and signed in this thread, with its envelope: what sendRaw takes. */
function rawMessageOf(m: OutgoingMessage): RawMessage {
  return { from: m.returnPath, to: m.to, messageId: m.messageId, raw: buildRaw(m) };
}

/** nodemailer's pooled SMTP transport to one relay or several (relays.ts), or (without SMTP_URL) an outbox of .eml files for development. */
export function createMailer(options: MailerOptions): Mailer {
  const profile = relayProfile(options.relayProfile ?? 'smtp');
  const rawMessage = (m: OutgoingMessage) => rawMessageOf(forRelay(m, profile));
  const urls = options.relays?.length ? options.relays : options.smtpUrl ? [{ url: options.smtpUrl, weight: 1 }] : [];
  const state: TransportState = {
    mode: urls.length ? 'smtp' : 'outbox',
    description: '',
    ok: null,
    detail: null,
    checkedAt: null,
  };

  if (urls.length) {
    const relays = createRelaySet(urls, {
      ...options,
      onFailure: (relay, consecutive) =>
        options.onFailure?.(
          { ...state, description: relay.url, ok: false, detail: relay.detail, checkedAt: relay.checkedAt },
          consecutive,
        ),
    });
    state.description = relays.description;
    /** The relays' states summed up: working while one relay works. */
    const current = (): TransportState => {
      const list = relays.relays();
      const failing = list.filter((r) => r.ok === false);
      const ok = list.some((r) => r.ok === true) ? true : failing.length === list.length ? false : null;
      const detail =
        failing.length === 0
          ? null
          : list.length === 1
            ? failing[0]!.detail
            : `${failing.length} of ${list.length} relays failing: ${failing.map((r) => `${r.url}: ${r.detail}`).join('; ')}`;
      const checkedAt =
        list
          .map((r) => r.checkedAt)
          .filter((t): t is string => t !== null)
          .sort()
          .at(-1) ?? null;
      return { ...state, ok, detail, checkedAt, relays: list };
    };
    const smtp: Mailer = {
      kind: 'smtp',
      description: state.description,
      async send(m) {
        return smtp.sendRaw(rawMessage(m));
      },
      async sendRaw(m) {
        const raw = Buffer.isBuffer(m.raw) ? m.raw : Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
        const info = await relays.send({ from: m.from, to: [m.to] }, raw, m.messageId);
        return { messageId: m.messageId, response: info.response, ...(info.bytesHeld ? { bytesHeld: true } : {}) };
      },
      async verify() {
        await relays.verify();
        return current();
      },
      state: current,
      async close() {
        relays.close();
      },
    };
    return smtp;
  }
  state.description = `OUTBOX: messages are written to ${path.resolve(options.outboxDir)} and NOT sent (SMTP_URL is not set)`;
  const outbox: Mailer = {
    kind: 'outbox',
    description: state.description,
    async send(m) {
      return outbox.sendRaw(rawMessage(m));
    },
    async sendRaw(m) {
      await fs.mkdir(options.outboxDir, { recursive: true });
      const file = `${m.messageId.replace(/[<>]/g, '').replace(/[^A-Za-z0-9._@-]/g, '_')}.eml`;
      // The envelope as a Return-Path line, as a delivering server would write it.
      await fs.writeFile(
        path.join(options.outboxDir, file),
        Buffer.concat([Buffer.from(`Return-Path: <${m.from}>\r\n`), m.raw]),
      );
      return { messageId: m.messageId, response: `${OUTBOX_RESPONSE} ${file}` };
    },
    async verify() {
      try {
        await fs.mkdir(options.outboxDir, { recursive: true });
        await fs.access(options.outboxDir, fs.constants.W_OK);
        Object.assign(state, {
          ok: true,
          detail: 'nothing is sent: set SMTP_URL to send',
          checkedAt: new Date().toISOString(),
        });
      } catch (err) {
        Object.assign(state, { ok: false, detail: (err as Error).message, checkedAt: new Date().toISOString() });
      }
      return { ...state };
    },
    state: () => ({ ...state }),
    async close() {},
  };
  return outbox;
}

/** How a delivery written to the outbox records its "reply" (stats count them as `outboxed`). */
export const OUTBOX_RESPONSE = 'OUTBOX: written to';
