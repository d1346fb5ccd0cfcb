import type { FastifyBaseLogger } from 'fastify';
import { listenSmtp, type ListeningSmtp } from '../../mail/smtp-listen.js';
import { ipKey } from '../../lib/ip-key.js';
import type { InboundProcessor, InboundRecipient } from './bounces.inbound.js';

/** The largest message the listener takes (bounce reports carry the original message, usually small). */
export const INBOUND_MAX_BYTES = 10 * 1024 * 1024;
/** The most recipients one message may have: a report is about one message, and each recipient costs a lookup and a write. */
export const INBOUND_MAX_RECIPIENTS = 50;
/** Connections at once, all addresses together (each may hold up to INBOUND_MAX_BYTES of data); then 421. */
export const INBOUND_MAX_CLIENTS = 200;
/** Connections at once from one address (IPv6: one /64); then 421. Relays deliver over a few connections each. */
export const INBOUND_MAX_CLIENTS_PER_IP = 20;

export type InboundServer = ListeningSmtp;

/**
 * The inbound SMTP listener (docs/bounces.md): the bounce domain's MX points here. RCPT to a bounce or
 * unsubscribe address with a valid token is accepted, and to `postmaster@`, `abuse@`, `fbl@` and `dmarc@` the bounce
 * domain of a domain verified in some workspace; anything else is refused with 550 before any data is sent; a repeated recipient is accepted once, and beyond INBOUND_MAX_RECIPIENTS distinct ones RCPT is answered
 * 452 (the sender sends the rest in another transaction). The data is parsed once and applied before the answer, and the answer is then 250 whatever the processing found
 * (what cannot be read is kept): a sender is never told a 5xx about data it sent. Plain SMTP on the port given (no AUTH, no STARTTLS:
 * reports are not secret, and relays deliver to an MX without TLS when it offers none).
 */
export async function startInboundServer(opts: {
  port: number;
  host: string;
  processor: InboundProcessor;
  log: FastifyBaseLogger;
  banner?: string;
}): Promise<InboundServer> {
  const { processor, log } = opts;
  // Loaded when the listener starts: processes that do not listen never load it.
  const { SMTPServer } = await import('smtp-server');
  // Connections open per address (ipKey), and the sessions counted in it (a refused one is not).
  const open = new Map<string, number>();
  const counted = new Set<string>();
  const server = new SMTPServer({
    name: opts.banner,
    banner: 'Formcast bounce processor',
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    size: INBOUND_MAX_BYTES,
    maxClients: INBOUND_MAX_CLIENTS,
    logger: false,
    // The listener takes mail from anyone: a bound on the connections (and so on the data held) per address as well as
    // in all, so that one sender cannot fill the process's memory with parallel 10 MB messages.
    onConnect(session, cb) {
      const key = ipKey(session.remoteAddress);
      const n = open.get(key) ?? 0;
      if (n >= INBOUND_MAX_CLIENTS_PER_IP) {
        const err = new Error('4.7.0 Too many connections from your address; try again in a moment');
        return cb(Object.assign(err, { responseCode: 421 }));
      }
      open.set(key, n + 1);
      counted.add(session.id);
      cb();
    },
    onClose(session) {
      if (!counted.delete(session.id)) return;
      const key = ipKey(session.remoteAddress);
      const n = (open.get(key) ?? 1) - 1;
      if (n > 0) open.set(key, n);
      else open.delete(key);
    },
    onRcptTo(address, session, cb) {
      const fail = (code: number, text: string) =>
        cb(Object.assign(new Error(text), { responseCode: code }) as Error & { responseCode: number });
      processor.accept(address.address).then(
        (accepted) => {
          if (!accepted) return fail(550, '5.1.1 No such mailbox here');
          // smtp-server keeps one entry per address (case-insensitive) and replaces a repeat: a repeat is not counted.
          const key = address.address.toLowerCase();
          if (
            session.envelope.rcptTo.length >= INBOUND_MAX_RECIPIENTS &&
            !session.envelope.rcptTo.some((r) => r.address.toLowerCase() === key)
          )
            return fail(452, '4.5.3 Too many recipients');
          cb();
        },
        (err: unknown) => {
          // The database could not say (it is down): a temporary answer, the sender tries again later.
          log.error({ err }, 'inbound RCPT could not be checked');
          fail(451, '4.3.0 Try again later');
        },
      );
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= INBOUND_MAX_BYTES) chunks.push(c);
      });
      stream.on('error', (err) => cb(err));
      stream.on('end', () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          const err = new Error('5.3.4 Message too big') as Error & { responseCode: number };
          err.responseCode = 552;
          return cb(err);
        }
        const raw = Buffer.concat(chunks);
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
        // The envelope's recipients, each accepted at RCPT (so its token verified, or its domain is known); what it
        // names is read again from the address rather than kept beside the list, so the two cannot disagree.
        const recipients = async () =>
          (
            await Promise.all(
              session.envelope.rcptTo.map(async (r): Promise<InboundRecipient[]> => {
                const address = await processor.accept(r.address);
                return address ? [{ rcptTo: r.address, address }] : [];
              }),
            )
          ).flat();
        // Applied before the 250 is sent, so that a report the sender saw accepted is never lost to a crash;
        // processMessage() never throws (what it cannot apply it keeps), so the answer is 250 whatever it found.
        void recipients()
          .then((list) => processor.processMessage(list, mailFrom, raw))
          .then((outcomes) => {
            for (const o of outcomes) log.info(o, 'inbound message');
          })
          .catch((err: unknown) => log.error({ err }, 'inbound message could not be processed'))
          .finally(() => cb());
      });
    },
  });
  return listenSmtp(server, opts.port, opts.host, (err) => log.error({ err }, 'inbound SMTP server error'));
}
