import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Received {
  to: string;
  /** The envelope sender (MAIL FROM). */
  mailFrom: string;
  raw: Buffer;
  parsed: ParsedMail;
}

/** What the server answers for one recipient: null accepts, otherwise an SMTP error code and text. */
export type RcptPolicy = (address: string) => { code: number; message: string } | null;

/** A real SMTP server on loopback that keeps what it receives (tests parse and check it). */
export async function startSmtpServer(): Promise<{
  port: number;
  received: Received[];
  setPolicy(p: RcptPolicy): void;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  let policy: RcptPolicy = () => null;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    // No reverse lookup of 127.0.0.1 through the system's resolver at every connection (a third of a second here).
    disableReverseLookup: true,
    onRcptTo(address, _session, cb) {
      const verdict = policy(address.address);
      if (!verdict) return cb();
      const err = new Error(verdict.message) as Error & { responseCode: number };
      err.responseCode = verdict.code;
      cb(err);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const parsed = await simpleParser(raw);
        for (const r of session.envelope.rcptTo)
          received.push({
            to: r.address,
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            raw,
            parsed,
          });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    setPolicy(p) {
      policy = p;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
