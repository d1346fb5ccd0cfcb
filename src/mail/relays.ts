import { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { isRelayFailure } from './outcome.js';
import { redact, type RelayUrl } from './relay-urls.js';

/**
 * Several SMTP relays (docs/sending.md, "Several relays"): SMTP_URLS lists them with weights; each message goes to
 * one chosen at random by weight among those not known to be down, and to the next one when that relay fails as
 * a relay (refuses the connection, will not greet, drops it without a reply: outcome.ts `isRelayFailure`). A relay
 * that failed is left alone for a while (1 s, doubling up to a minute), then given a message again. SMTP_URL is
 * the case of one relay.
 */

/** One relay's health, as /readyz shows it (the URL without credentials). */
export interface RelayState {
  url: string;
  weight: number;
  /** null: not tried yet; false: the last connection or check failed. */
  ok: boolean | null;
  detail: string | null;
  checkedAt: string | null;
  /** Until when it is passed over (after a failure), or null. */
  downUntil: string | null;
}

export interface RelayOptions {
  /** Connections of each relay's pool. */
  maxConnections: number;
  /** Messages per second at most, per relay (0: no limit). */
  rateLimit: number;
  heloName?: string | null;
  allowPlaintextAuth?: boolean;
  /** Told about each relay failure, with the relay's state and its failures in a row. */
  onFailure?: (relay: RelayState, consecutive: number) => void;
  now?: () => number;
  random?: () => number;
}

interface Relay {
  state: RelayState;
  consecutive: number;
  downUntil: number;
  transport: ReturnType<typeof nodemailer.createTransport>;
}

/** The nodemailer pool options of one relay URL. */
export function poolOptions(relayUrl: string, options: RelayOptions): SMTPPool.Options {
  const url = new URL(relayUrl);
  const secure = url.protocol === 'smtps:';
  const auth = url.username
    ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
    : undefined;
  return {
    pool: true,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(auth ? { auth } : {}),
    // Credentials never cross the network in clear: STARTTLS is required unless the operator says otherwise.
    ...(auth && !secure && !options.allowPlaintextAuth ? { requireTLS: true } : {}),
    ...(options.heloName ? { name: options.heloName } : {}),
    maxConnections: options.maxConnections,
    maxMessages: Infinity,
    // nodemailer's pool re-sends a message by itself, up to five times, when a reused connection closes before the
    // message was sent: what a server that throttles does ("421 try later", then close). Once is enough: the
    // reply is recovered (closedBeforeSending) and the pipeline decides.
    maxRequeues: 0,
    ...(options.rateLimit > 0 ? { rateDelta: 1000, rateLimit: options.rateLimit } : {}),
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
  };
}

/**
 * The reply a server closed a reused pooled connection with before the message was sent, by Message-ID. nodemailer
 * then fails the message with a bare "connection was closed" and says the reply only in its log; this logger keeps
 * it, so that a "421 4.7.0 try later" stays a reply about the message (a throttle), not a relay failure.
 */
function closedBeforeSending() {
  const replies = new Map<string, string>();
  const ignore = () => {};
  const logger = {
    trace: ignore,
    debug: ignore,
    warn: ignore,
    error: ignore,
    fatal: ignore,
    level: ignore,
    info(meta: unknown, format?: unknown, ...args: unknown[]) {
      const messageId = (meta as { messageId?: unknown } | null)?.messageId;
      if (
        typeof messageId !== 'string' ||
        typeof format !== 'string' ||
        !format.includes('closed by the server before message')
      )
        return;
      const reply = /: (\d{3}[ -].*)$/s.exec(String(args.at(-1)))?.[1];
      if (!reply) return;
      if (replies.size >= 1000) replies.delete(replies.keys().next().value!);
      replies.set(messageId, reply);
    },
    child: () => logger,
  };
  /** The error to report: nodemailer's, or the server's reply it stood for. */
  const explain = (err: unknown, messageId: string): unknown => {
    const reply = replies.get(messageId);
    replies.delete(messageId);
    if (
      !reply ||
      (err as { code?: unknown }).code !== 'ECONNECTION' ||
      typeof (err as { responseCode?: unknown }).responseCode === 'number'
    )
      return err;
    return Object.assign(new Error(`Server closed the connection: ${reply}`), {
      code: 'ECONNECTION',
      command: 'CONN',
      response: reply,
      responseCode: Number(reply.slice(0, 3)),
    });
  };
  return { logger, explain };
}

/** A relay by weight among the candidates not down at `now`; when all are down, the one that comes back first. */
export function pickRelay<R extends { weight: number; downUntil: number }>(
  candidates: readonly R[],
  now: number,
  random: () => number,
): R {
  const up = candidates.filter((r) => r.downUntil <= now);
  if (!up.length) return candidates.reduce((a, b) => (b.downUntil < a.downUntil ? b : a));
  let r = random() * up.reduce((sum, x) => sum + x.weight, 0);
  for (const relay of up) {
    r -= relay.weight;
    if (r < 0) return relay;
  }
  return up[up.length - 1]!;
}

/** An envelope address nodemailer would take as it is: a dot-atom local part and a lower-case ASCII domain. */
const PLAIN_ADDRESS = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[a-z0-9.-]+$/;
const CRLF = Buffer.from('\r\n');

/**
 * A message already built and signed, handed to the relay's pool as it is. nodemailer's sendMail wraps every message,
 * a raw one too, in a MailMessage and a MimeNode whose stream is a pipeline of three streams (with its AbortController
 * and DOMException): ~10 % of the pipeline thread's CPU in a send, where what the pool needs is the envelope, the
 * Message-ID and a stream of the bytes (SMTPPool.send and its PoolResource, nodemailer 10.6). The bytes get the ending
 * line break nodemailer's LastNewline would add. An envelope nodemailer would rewrite (an address it parses, a domain
 * it lower-cases or turns into punycode) goes through sendMail, as before.
 */
function sendPrepared(
  transport: Relay['transport'],
  envelope: { from: string; to: string[] },
  raw: Buffer,
  messageId: string,
): Promise<{ response: string }> {
  const pool = (transport as unknown as { transporter: { send?: unknown } }).transporter;
  if (
    typeof pool.send !== 'function' ||
    !PLAIN_ADDRESS.test(envelope.from) ||
    !envelope.to.every((a) => PLAIN_ADDRESS.test(a))
  ) {
    return transport.sendMail({ envelope, raw, messageId });
  }
  const last = raw[raw.length - 1];
  const bytes = last === 0x0a ? raw : Buffer.concat([raw, last === 0x0d ? CRLF.subarray(1) : CRLF]);
  const mail = {
    data: {},
    message: {
      getEnvelope: () => ({ from: envelope.from, to: [...envelope.to] }),
      messageId: () => messageId,
      getHeader: (key: string) => (key.toLowerCase() === 'message-id' ? messageId : undefined),
      createReadStream: () => Readable.from([bytes], { objectMode: false }),
    },
  };
  return new Promise((resolve, reject) => {
    (pool.send as (mail: unknown, done: (err: Error | null, info: { response: string }) => void) => void)(
      mail,
      (err, info) => (err ? reject(err) : resolve(info)),
    );
  });
}

const DOWN_BASE_MS = 1_000;
const DOWN_MAX_MS = 60_000;

export interface RelaySet {
  readonly description: string;
  /**
   * Sends through one relay, failing over to the others on a relay failure; throws the last error. `bytesHeld`: a relay
   * failed with the message before another took it, and a connection that failed (a timeout mid-message) may still be
   * writing the bytes while it closes: they are not to be written over (send-threads.ts, slabs).
   */
  send(
    envelope: { from: string; to: string[] },
    raw: Buffer,
    messageId: string,
  ): Promise<{ response: string; bytesHeld?: boolean }>;
  /** Connects to and greets every relay. */
  verify(): Promise<void>;
  relays(): RelayState[];
  close(): void;
}

export function createRelaySet(urls: readonly RelayUrl[], options: RelayOptions): RelaySet {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const stamp = () => new Date(now()).toISOString();
  const closed = closedBeforeSending();
  const relays: Relay[] = urls.map(({ url, weight }) => ({
    state: { url: redact(url), weight, ok: null, detail: null, checkedAt: null, downUntil: null },
    consecutive: 0,
    downUntil: 0,
    transport: nodemailer.createTransport({ ...poolOptions(url, options), logger: closed.logger } as SMTPPool.Options),
  }));
  const up = (r: Relay) => {
    r.consecutive = 0;
    r.downUntil = 0;
    if (r.state.ok !== true || r.state.downUntil)
      Object.assign(r.state, { ok: true, detail: null, checkedAt: stamp(), downUntil: null });
  };
  const down = (r: Relay, err: unknown) => {
    r.consecutive++;
    r.downUntil = now() + Math.min(DOWN_MAX_MS, DOWN_BASE_MS * 2 ** Math.min(16, r.consecutive - 1));
    const code = (err as { code?: unknown }).code;
    Object.assign(r.state, {
      ok: false,
      detail: `${typeof code === 'string' ? `${code}: ` : ''}${(err as Error).message}`,
      checkedAt: stamp(),
      downUntil: new Date(r.downUntil).toISOString(),
    });
    options.onFailure?.({ ...r.state }, r.consecutive);
  };
  const pool = `pool of ${options.maxConnections}`;
  const description =
    relays.length === 1
      ? `SMTP ${relays[0]!.state.url} (${pool})`
      : `SMTP relays ${relays.map((r) => `${r.state.url} (weight ${r.state.weight})`).join(', ')}; ${pool} each`;
  return {
    description,
    async send(envelope, raw, messageId) {
      const left = [...relays.map((r) => ({ relay: r, weight: r.state.weight, downUntil: r.downUntil }))];
      let last: unknown;
      while (left.length) {
        const choice = pickRelay(left, now(), random);
        left.splice(left.indexOf(choice), 1);
        const relay = choice.relay;
        try {
          const info = await sendPrepared(relay.transport, envelope, raw, messageId);
          up(relay);
          // After a relay failed with it, the message's bytes may still be queued on that relay's closing connection.
          return { response: String(info.response), ...(last === undefined ? {} : { bytesHeld: true }) };
        } catch (thrown) {
          const err = closed.explain(thrown, messageId);
          if (!isRelayFailure(err)) {
            // The relay answered about the message: it works; the answer is the message's.
            up(relay);
            throw err;
          }
          down(relay, err);
          last = err;
        }
      }
      throw last;
    },
    async verify() {
      await Promise.all(
        relays.map(async (r) => {
          try {
            await r.transport.verify();
            up(r);
          } catch (err) {
            Object.assign(r.state, { ok: false, detail: (err as Error).message, checkedAt: stamp() });
          }
        }),
      );
    },
    relays: () => relays.map((r) => ({ ...r.state, downUntil: r.downUntil > now() ? r.state.downUntil : null })),
    close() {
      for (const r of relays) r.transport.close();
    },
  };
}
