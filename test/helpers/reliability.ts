/**
 * What the reliability tests (test/reliability/*) share: an SMTP sink on two loopback ports that records every
 * copy it accepts, can hold transactions at MAIL FROM and can misbehave on purpose, and a PostgreSQL database of
 * a suite's own (the `formcast worker` children it starts connect to it by URL).
 */
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { connect, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export interface Received {
  messageId: string;
  subject: string;
}

export interface Faults {
  /**
   * Probability of a 451 reply to RCPT TO: a temporary failure retried with an attempt. (A 421 is a throttle of
   * the destination, waited out without using attempts: test/api/pacing.test.ts.)
   */
  rcpt451: number;
  /** Probability of a 451 reply after a message was received (the message is refused, not recorded). */
  data451: number;
  /** Probability, per transaction, of destroying the socket: a third before RCPT, a third after it, a third after the message arrived. */
  drop: number;
}

export interface Smtp {
  /** Two listening ports, one recorder: a worker given its own port can be told apart from the other. */
  port: number;
  secondPort: number;
  /** Recipient → every copy accepted, by Message-ID and Subject (a copy counts once the message arrived in full). */
  received: Map<string, Received[]>;
  total(): number;
  stats: { accepted: number; rcpt451: number; data451: number; droppedBeforeData: number; droppedAfterData: number };
  /**
   * Makes new transactions wait at MAIL FROM until release(). A delivery waiting there has been handed off
   * and cannot be recorded, so its worker stays in the middle of its batch for as long as the hold lasts.
   */
  hold(): void;
  /** How many transactions wait at MAIL FROM on this port. */
  heldOn(port: number): number;
  release(): void;
  close(): Promise<void>;
}

function tempError(message: string): Error {
  return Object.assign(new Error(message), { responseCode: 451 });
}

export async function startSmtp(faults: Faults | null = null): Promise<Smtp> {
  const received = new Map<string, Received[]>();
  const stats = { accepted: 0, rcpt451: 0, data451: 0, droppedBeforeData: 0, droppedAfterData: 0 };
  let total = 0;
  let held: { port: number; go: () => void }[] | null = null;
  const roll = (p: number) => faults !== null && Math.random() < p;
  const servers: SMTPServer[] = [];
  /** Cuts the TCP connection of this session without a reply (what a crash or a network failure looks like). */
  const drop = (session: SMTPServerSession) => {
    for (const server of servers) {
      for (const conn of (server as unknown as { connections: Set<{ id: string; _socket: { destroy(): void } }> })
        .connections) {
        if (conn.id === session.id) conn._socket.destroy();
      }
    }
  };
  const options: SMTPServerOptions = {
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onMailFrom(_address, session, callback) {
      if (held) return void held.push({ port: session.localPort, go: () => callback() });
      if (roll((faults?.drop ?? 0) / 3)) {
        stats.droppedBeforeData++;
        return drop(session);
      }
      callback();
    },
    onRcptTo(_address, session, callback) {
      if (roll(faults?.rcpt451 ?? 0)) {
        stats.rcpt451++;
        return callback(tempError('4.3.0 temporary failure'));
      }
      if (roll((faults?.drop ?? 0) / 3)) {
        stats.droppedBeforeData++;
        return drop(session);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        // The headers are all we need (Message-ID); the rest is read and discarded.
        if (size < 16_384) chunks.push(c);
        size += c.length;
      });
      stream.on('error', () => {}); // the client went away mid-message: nothing arrived
      stream.on('end', () => {
        if (roll(faults?.data451 ?? 0)) {
          stats.data451++;
          return callback(tempError('4.3.0 message not accepted'));
        }
        const head = Buffer.concat(chunks)
          .toString('utf8')
          .split(/\r?\n\r?\n/)[0]!
          .replace(/\r?\n[ \t]+/g, ' ');
        const messageId = /^message-id:\s*(<[^>\r\n]+>)/im.exec(head)?.[1] ?? '(none)';
        const subject = /^subject:[ \t]*(.*)$/im.exec(head)?.[1]?.trim() ?? '(none)';
        for (const rcpt of session.envelope.rcptTo) {
          const list = received.get(rcpt.address.toLowerCase()) ?? [];
          list.push({ messageId, subject });
          received.set(rcpt.address.toLowerCase(), list);
        }
        total++;
        // The message arrived in full; now and then the reply is lost (the connection drops before it).
        if (roll((faults?.drop ?? 0) / 3)) {
          stats.droppedAfterData++;
          return drop(session);
        }
        stats.accepted++;
        callback(null, 'OK queued');
      });
    },
  };
  const ports: number[] = [];
  for (let i = 0; i < 2; i++) {
    const server = new SMTPServer(options);
    server.on('error', () => {}); // a dropped connection is reported here; it is what we wanted
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    ports.push((server.server.address() as AddressInfo).port);
  }
  return {
    port: ports[0]!,
    secondPort: ports[1]!,
    received,
    total: () => total,
    stats,
    hold: () => void (held ??= []),
    heldOn: (port) => held?.filter((h) => h.port === port).length ?? 0,
    release: () => {
      const waiting = held ?? [];
      held = null;
      for (const h of waiting) h.go();
    },
    close: async () => {
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/** A fresh, migrated PostgreSQL database next to `pgUrl`'s, for one suite; `drop()` removes it (with its connections). */
export async function ownPostgresDatabase(pgUrl: string): Promise<{ url: string; db: Db; drop(): Promise<void> }> {
  const name = `formcast_rel_${crypto.randomBytes(5).toString('hex')}`;
  const admin = async (query: string) => {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      await c.query(query);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  const db = connect(url.toString(), { poolSize: 4 });
  await migrateToLatest(db);
  return {
    url: url.toString(),
    db,
    drop: async () => {
      await db.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}
