import net from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelaySet } from '../../src/mail/relays.js';
import { createMailer } from '../../src/mail/transport.js';
import { startSmtpServer } from '../helpers/smtp.js';

// A message already built and signed goes to the relay's pool as it is (mail/relays.ts, sendPrepared): the server must
// receive exactly what nodemailer's sendMail would have sent for it, its dots escaped on the wire and its last line
// ended, and an envelope nodemailer would rewrite still goes through sendMail.
describe('messages handed to the SMTP pool as they are', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp.close();
  });

  const message = (id: string, ending: string) =>
    Buffer.from(
      [
        'From: News <news@acme.test>',
        'To: ann@example.com',
        'Subject: Dots',
        `Message-ID: <${id}@acme.test>`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'A line.',
        '.A line that begins with a dot',
        '.',
        `The end.${ending}`,
      ].join('\r\n'),
    );

  it('arrive as nodemailer sends them, whatever their last line ends with', async () => {
    const url = `smtp://127.0.0.1:${smtp.port}`;
    const mailer = createMailer({ smtpUrl: url, outboxDir: '/nonexistent', maxConnections: 1, rateLimit: 0 });
    const reference = nodemailer.createTransport({
      host: '127.0.0.1',
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
    });
    try {
      for (const [i, ending] of ['\r\n', '', '\r'].entries()) {
        const raw = message(`m${i}`, ending);
        await mailer.sendRaw({ from: 'bounces@acme.test', to: 'ann@example.com', messageId: `<m${i}@acme.test>`, raw });
        await reference.sendMail({ envelope: { from: 'bounces@acme.test', to: ['ann@example.com'] }, raw });
        const [ours, theirs] = smtp.received.splice(0);
        expect(ours!.raw.equals(theirs!.raw)).toBe(true);
        expect(ours).toMatchObject({ to: 'ann@example.com', mailFrom: 'bounces@acme.test' });
        expect(ours!.raw.toString()).toContain('\r\n.A line that begins with a dot\r\n.\r\nThe end.');
      }
      // An envelope nodemailer rewrites (the domain in lower case) goes through sendMail, which does it.
      await mailer.sendRaw({
        from: 'bounces@ACME.test',
        to: 'Ann@Example.COM',
        messageId: '<m9@acme.test>',
        raw: message('m9', '\r\n'),
      });
      expect(smtp.received.splice(0).map((r) => [r.mailFrom, r.to])).toEqual([
        ['bounces@acme.test', 'Ann@example.com'],
      ]);
    } finally {
      await mailer.close();
      reference.close();
    }
  });

  it('say when a relay failed with the message before another took it (its bytes may still be on the way out)', async () => {
    // A relay that greets with 421 (a relay failure): the next relay takes the message. Any failure of a relay counts,
    // as a timeout in the middle of the message would.
    const silent = net.createServer((socket) =>
      socket.end('421 4.3.2 Service not available, closing transmission channel\r\n'),
    );
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const dead = `smtp://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const live = `smtp://127.0.0.1:${smtp.port}`;
    const relays = createRelaySet(
      [
        { url: dead, weight: 1 },
        { url: live, weight: 1 },
      ],
      { maxConnections: 1, rateLimit: 0, random: () => 0 },
    );
    try {
      const envelope = { from: 'bounces@acme.test', to: ['ann@example.com'] };
      const first = await relays.send(envelope, message('f1', '\r\n'), '<f1@acme.test>');
      expect(first).toMatchObject({ response: expect.stringContaining('250'), bytesHeld: true });
      smtp.received.splice(0);
      // The refusing relay is down for a while now: the next message goes straight to the live one.
      const second = await relays.send(envelope, message('f2', '\r\n'), '<f2@acme.test>');
      expect(second.bytesHeld).toBeUndefined();
      expect(smtp.received.splice(0).map((r) => r.to)).toEqual(['ann@example.com']);
    } finally {
      relays.close();
      silent.close();
    }
  });
});
