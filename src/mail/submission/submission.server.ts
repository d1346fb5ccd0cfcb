import type { Socket } from 'node:net';
import type { SMTPServer as SMTPServerType, SMTPServerSession } from 'smtp-server';
import { DomainError } from '../../errors/errors.js';
import { listenSmtp, type ListeningSmtp } from '../smtp-listen.js';
import { parseSubmission, SubmissionRejected, type SubmittedEmail } from './submission.parse.js';
import { DEFAULT_SUBMISSION_GUARDS, SubmissionGuards, type SubmissionGuardSettings } from './submission.guards.js';

/** The API key an AUTH presented: its workspace and id. */
export interface SubmissionAuth {
  workspaceId: string;
  apiKeyId: string;
}

/**
 * The port the listener is handed by the composition root (composition/submission.ts): plumbing knows no API key
 * and no sending service.
 */
export interface SubmissionSink {
  /** The key whose secret `password` is, when it holds `send:emails`; null otherwise (refused with 535). */
  authenticate(password: string): Promise<SubmissionAuth | null>;
  /** Makes the message a transactional email; throws the service's DomainError for what it refuses. */
  submit(auth: SubmissionAuth, email: SubmittedEmail): Promise<{ id: string }>;
}

/** The settings of `SUBMISSION_*` (config.ts; docs/smtp-submission.md). */
export interface SubmissionSettings {
  port: number;
  host: string;
  /** PEM texts of the certificate (chain) and its key for STARTTLS; null: no STARTTLS (only with allowInsecureAuth). */
  tls: { cert: string; key: string } | null;
  /** AUTH over a connection without TLS (SUBMISSION_ALLOW_INSECURE_AUTH). */
  allowInsecureAuth: boolean;
  /** The largest message, in bytes (SUBMISSION_MAX_BYTES; advertised with SIZE). */
  maxBytes: number;
}

/** 10 MB of attachments base64-encoded (4/3) and room for the body and headers. */
export const SUBMISSION_MAX_BYTES = 15 * 1024 * 1024;
/** Recipients of one message at most (a transactional email's 50); beyond, RCPT is answered 452. */
export const SUBMISSION_MAX_RECIPIENTS = 50;
/** Connections at once, all addresses together; then 421. */
const MAX_CLIENTS = 500;

export interface SubmissionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export type SubmissionServer = ListeningSmtp;

type SmtpError = Error & { responseCode: number };

/**
 * An SMTP reply: the code, its enhanced status code (RFC 3463) and the text. smtp-server adds an enhanced code of
 * its own choosing by the reply code (550 is always 5.1.1 there), so the text carries ours first and the
 * connection's send (withOwnEnhancedCodes) writes it in place of the library's.
 */
export function reply(code: number, enhanced: string, text: string): SmtpError {
  return Object.assign(new Error(`${enhanced} ${text}`), { responseCode: code });
}

const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3}) /;

/** A connection whose replies that begin with an enhanced status code keep it (see reply()). */
function withOwnEnhancedCodes(connection: { send(code: number, data: unknown, context?: unknown): void }): void {
  const send = connection.send.bind(connection);
  connection.send = (code, data, context) =>
    typeof data === 'string' && ENHANCED.test(data) ? send(code, data, false) : send(code, data, context);
}

/** What a sink's error means for the client (docs/smtp-submission.md, "Replies"). */
export function replyToError(err: unknown): { error: SmtpError; temporary: boolean } {
  if (err instanceof SubmissionRejected) return { error: reply(550, '5.6.0', err.message), temporary: false };
  if (err instanceof DomainError) {
    const text = err.message.slice(0, 400);
    if (err.code === 'sender_domain_not_verified')
      return { error: reply(550, '5.7.1', `Sender domain not verified: ${text}`), temporary: false };
    if (err.code === 'rate_limited') return { error: reply(450, '4.7.1', text), temporary: true };
    if (err.status >= 500 || err.code === 'idempotency_conflict')
      return { error: reply(451, '4.3.0', `Temporary failure, try again later: ${text}`), temporary: true };
    if (err.code === 'unauthorized' || err.code === 'insufficient_scope' || err.code === 'forbidden')
      return { error: reply(550, '5.7.0', text), temporary: false };
    return { error: reply(550, '5.6.0', text), temporary: false };
  }
  return { error: reply(451, '4.3.0', 'Temporary failure, try again later'), temporary: true };
}

/**
 * The SMTP submission listener (contract §20, docs/smtp-submission.md): STARTTLS with the configured certificate,
 * AUTH PLAIN or LOGIN (any user name, an API key holding `send:emails` as the password; refused before TLS unless
 * allowInsecureAuth), SIZE, at most 50 recipients, and each message read once and handed to the sink; the reply
 * says the email's id or why not. Nothing a client sends ends the process: every error becomes a reply.
 */
export async function startSubmissionServer(opts: {
  settings: SubmissionSettings;
  sink: SubmissionSink;
  log: SubmissionLog;
  /** The name in the greeting (the host clients connect to). */
  name?: string;
  guards?: Partial<SubmissionGuardSettings>;
  /** The clock of the guards (tests). */
  now?: () => number;
}): Promise<SubmissionServer> {
  const { settings, sink, log } = opts;
  const guards = new SubmissionGuards({ ...DEFAULT_SUBMISSION_GUARDS, ...opts.guards }, opts.now);
  const { SMTPServer } = await import('smtp-server');
  const authOf = (session: SMTPServerSession) => session.user as unknown as SubmissionAuth | undefined;
  const server: SMTPServerType = new SMTPServer({
    name: opts.name,
    banner: 'Formcast submission',
    // Without a certificate there is no STARTTLS (never the library's built-in certificate, whose key is public).
    disabledCommands: settings.tls ? [] : ['STARTTLS'],
    ...(settings.tls ? { key: settings.tls.key, cert: settings.tls.cert } : {}),
    allowInsecureAuth: settings.allowInsecureAuth,
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    size: settings.maxBytes,
    maxRecipients: SUBMISSION_MAX_RECIPIENTS,
    maxClients: MAX_CLIENTS,
    disableReverseLookup: true,
    // Enhanced status codes (RFC 2034/3463) on every reply: off by default in smtp-server.
    hideENHANCEDSTATUSCODES: false,
    logger: false,
    onConnect(session, cb) {
      const verdict = guards.admit(session.remoteAddress, session.id);
      if (verdict === 'locked')
        return cb(reply(421, '4.7.0', 'Too many failed authentications from your address; try again later'));
      if (verdict === 'too_many')
        return cb(reply(421, '4.7.0', 'Too many connections from your address; try again in a moment'));
      cb();
    },
    onClose(session) {
      guards.closed(session.remoteAddress, session.id);
    },
    onAuth(auth, session, cb) {
      const ip = session.remoteAddress;
      // The library refuses AUTH before STARTTLS itself (538); without STARTTLS at all it would not, so here too.
      if (!session.secure && !settings.allowInsecureAuth)
        return cb(reply(530, '5.7.0', 'Must issue a STARTTLS command first'));
      if (guards.lockedOut(ip))
        return cb(reply(454, '4.7.0', 'Too many failed authentications from your address; try again later'));
      const refuse = () => {
        const locked = guards.authFailed(ip);
        if (locked) log.warn({ ip }, 'SMTP submission: address locked out after failed authentications');
        cb(reply(535, '5.7.8', 'Authentication credentials invalid (the password is an API key with send:emails)'));
      };
      if (auth.method !== 'PLAIN' && auth.method !== 'LOGIN') return refuse();
      Promise.resolve()
        .then(() => sink.authenticate(auth.password ?? ''))
        .then(
          (found) => {
            if (!found) return refuse();
            guards.authSucceeded(ip);
            cb(null, { user: found as unknown as string });
          },
          (err: unknown) => {
            log.error({ err }, 'SMTP submission: an API key could not be checked');
            cb(reply(454, '4.7.0', 'Temporary authentication failure, try again later'));
          },
        );
    },
    onMailFrom(_address, session, cb) {
      const auth = authOf(session);
      const wait = auth ? guards.message(auth.apiKeyId) : 0;
      if (wait > 0) return cb(reply(450, '4.7.1', `Too many messages for this API key; try again in ${wait} s`));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= settings.maxBytes) chunks.push(c);
      });
      stream.on('error', (err) => cb(err));
      stream.on('end', () => {
        // The library answers 552 itself for a message over SIZE, whatever this says.
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded)
          return cb(reply(552, '5.3.4', 'Message too big'));
        const auth = authOf(session);
        if (!auth) return cb(reply(530, '5.7.0', 'Authentication required'));
        const rcptTo = session.envelope.rcptTo.map((r) => r.address);
        parseSubmission(Buffer.concat(chunks), rcptTo)
          .then((email) => sink.submit(auth, email))
          .then(
            ({ id }) => {
              log.info({ emailId: id, workspaceId: auth.workspaceId, apiKeyId: auth.apiKeyId }, 'SMTP submission');
              cb(null, `2.0.0 Ok: queued as ${id}`);
            },
            (err: unknown) => {
              const { error, temporary } = replyToError(err);
              if (temporary) log.error({ err, workspaceId: auth.workspaceId }, 'SMTP submission failed');
              cb(error);
            },
          );
      });
    },
  });
  // Replies with our enhanced status codes (reply()): every connection's send, from its first reply on.
  const connect = server.connect.bind(server) as (socket: Socket, options: unknown) => void;
  (server as unknown as { connect: typeof connect }).connect = (socket, options) => {
    connect(socket, options);
    const connections = (server as unknown as { connections: Set<Parameters<typeof withOwnEnhancedCodes>[0]> })
      .connections;
    let last: Parameters<typeof withOwnEnhancedCodes>[0] | undefined;
    for (const c of connections) last = c;
    if (last) withOwnEnhancedCodes(last);
  };
  return listenSmtp(server, settings.port, settings.host, (err) => log.error({ err }, 'SMTP submission server error'));
}
