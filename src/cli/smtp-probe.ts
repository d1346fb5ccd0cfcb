import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { redact } from '../mail/relay-urls.js';

export interface SmtpProbe {
  relay: string;
  ok: boolean;
  /** How the session is encrypted: implicit TLS (smtps://), STARTTLS, or not at all. */
  tls: 'smtps' | 'STARTTLS' | 'none';
  /** The TLS version agreed (TLSv1.3), when encrypted. */
  protocol: string | null;
  /** Credentials in the URL were accepted (null: none given). */
  authenticated: boolean | null;
  detail: string;
}

/**
 * Connects to a relay of SMTP_URL as the transport would: greeting, EHLO, STARTTLS when offered (nodemailer upgrades
 * on its own), and AUTH when the URL has credentials; then QUIT. Sends nothing (`formcast doctor`, `formcast send-test`).
 */
export function probeSmtp(
  relayUrl: string,
  opts: { heloName?: string | null; timeoutMs?: number; allowPlaintextAuth?: boolean } = {},
): Promise<SmtpProbe> {
  const url = new URL(relayUrl);
  const secure = url.protocol === 'smtps:';
  const auth = url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : null;
  const timeout = opts.timeoutMs ?? 10_000;
  const connection = new SMTPConnection({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(auth && !secure && !opts.allowPlaintextAuth ? { requireTLS: true } : {}),
    ...(opts.heloName ? { name: opts.heloName } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const relay = redact(relayUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (probe: Omit<SmtpProbe, 'relay' | 'tls' | 'protocol'>) => {
      if (settled) return;
      settled = true;
      const socket = connection._socket as TLSSocket | undefined;
      const protocol =
        connection.secure && socket && typeof socket.getProtocol === 'function' ? socket.getProtocol() : null;
      resolve({ relay, tls: connection.secure ? (secure ? 'smtps' : 'STARTTLS') : 'none', protocol, ...probe });
      try {
        if (probe.ok) connection.quit();
        else connection.close();
      } catch {
        // closing a connection that never opened
      }
    };
    connection.on('error', (err: Error) => finish({ ok: false, authenticated: null, detail: err.message }));
    connection.connect((err) => {
      if (err) return finish({ ok: false, authenticated: null, detail: err.message });
      if (!auth) return finish({ ok: true, authenticated: null, detail: 'the server greets and answers EHLO' });
      connection.login(auth, (loginErr) => {
        if (loginErr) finish({ ok: false, authenticated: false, detail: `authentication failed: ${loginErr.message}` });
        else
          finish({
            ok: true,
            authenticated: true,
            detail: 'the server greets, answers EHLO and accepts the credentials',
          });
      });
    });
  });
}
