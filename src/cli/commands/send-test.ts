import { isIP } from 'node:net';
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { getSigningKey } from '../../mail-setup/domains/domains.repository.js';
import { newId } from '../../lib/ids.js';
import { parseMailbox } from '../../lib/email.js';
import type { OutgoingMessage } from '../../mail/compose.js';
import { classifySendError } from '../../mail/outcome.js';
import { createMailer } from '../../mail/transport.js';
import { jsonOption, requireWorkspace, withDb } from '../context.js';
import { CliError, color, EXIT, print, status } from '../output.js';
import { probeSmtp, type SmtpProbe } from '../smtp-probe.js';

interface Outcome {
  transport: string;
  mode: 'smtp' | 'outbox';
  connection: SmtpProbe | null;
  from: string;
  to: string;
  messageId: string;
  dkim: string | null;
  accepted: boolean;
  response: string | null;
  error: string | null;
}

/** send-test: one message through the configured transport, and what the server answered. */
export function registerSendTest(program: Command): void {
  program
    .command('send-test')
    .description(
      'send one test message through the configured transport (SMTP_URL, or the .eml outbox) and print the outcome; exit 6 unless accepted',
    )
    .requiredOption('--to <address>', 'the recipient')
    .option('--from <mailbox>', 'the sender, "Name <addr@domain>" or addr@domain (default: formcast@<PUBLIC_URL host>)')
    .option('--workspace <id>', "DKIM-sign with the workspace's key when --from is on one of its verified domains")
    .option('--subject <text>', 'the subject', 'Formcast test message')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  SMTP_URL=smtp://user:pass@smtp.example.com:587 formcast send-test --to me@example.com --from news@example.com',
    )
    .action(async (opts: { to: string; from?: string; workspace?: string; subject: string; json?: boolean }) => {
      const config = loadConfig();
      const to = parseMailbox(opts.to);
      if (!to) throw new CliError(`--to: ${opts.to} is not an email address`, EXIT.USAGE);
      const host = new URL(config.publicUrl).hostname;
      const fromText = opts.from ?? (host.includes('.') && !isIP(host) ? `Formcast <formcast@${host}>` : undefined);
      if (!fromText)
        throw new CliError(`give --from: PUBLIC_URL's host (${host}) is not a domain to send from`, EXIT.USAGE);
      const from = parseMailbox(fromText);
      if (!from)
        throw new CliError(`--from: ${fromText} is not a mailbox (addr@domain or "Name <addr@domain>")`, EXIT.USAGE);

      const dkim = opts.workspace
        ? await withDb(async (ctx) => {
            await requireWorkspace(ctx, opts.workspace!);
            const key = await getSigningKey(ctx.db.kysely, opts.workspace!, from.domain, ctx.config.secret);
            if (!key)
              throw new CliError(
                `${from.domain} is not a verified domain of workspace ${opts.workspace}: nothing to sign with`,
                EXIT.REFUSED,
              );
            return { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey };
          })
        : null;

      const mailer = createMailer({
        smtpUrl: config.smtpUrl,
        relays: config.smtpRelays,
        outboxDir: config.outboxDir,
        maxConnections: 1,
        rateLimit: 0,
        heloName: config.smtpHeloName,
        allowPlaintextAuth: config.smtpAllowPlaintextAuth,
        relayProfile: config.relayProfile,
      });
      const connection = config.smtpUrl
        ? await probeSmtp(config.smtpRelays[0]?.url ?? config.smtpUrl, {
            heloName: config.smtpHeloName,
            allowPlaintextAuth: config.smtpAllowPlaintextAuth,
          })
        : null;
      const id = newId('tst');
      const message: OutgoingMessage = {
        from: { name: from.name, address: from.address },
        to: to.address,
        replyTo: null,
        returnPath: from.address,
        subject: opts.subject,
        html: `<p>This is a test message from Formcast, sent with <code>formcast send-test</code>.</p>`,
        text: 'This is a test message from Formcast, sent with `formcast send-test`.\n',
        messageId: `<${id}@${from.domain}>`,
        headers: {},
        dkim,
      };
      const outcome: Outcome = {
        transport: mailer.description,
        mode: mailer.kind,
        connection,
        from: from.address,
        to: to.address,
        messageId: message.messageId,
        dkim: dkim ? `${dkim.keySelector}._domainkey.${dkim.domainName}` : null,
        accepted: false,
        response: null,
        error: null,
      };
      try {
        if (connection && !connection.ok) throw Object.assign(new Error(connection.detail), { code: 'ECONNECTION' });
        const info = await mailer.send(message);
        Object.assign(outcome, { accepted: true, response: info.response });
      } catch (err) {
        outcome.error = classifySendError(err).reason.split('\n')[0]!;
      } finally {
        await mailer.close();
      }

      const lines = [
        `${color.bold('transport'.padEnd(11))} ${outcome.transport}`,
        ...(connection
          ? [
              `${color.bold('connection'.padEnd(11))} ${status(connection.ok ? 'ok' : 'fail')} ${connection.detail}; TLS: ${connection.tls === 'none' ? 'none' : `${connection.tls}${connection.protocol ? ` (${connection.protocol})` : ''}`}`,
            ]
          : []),
        `${color.bold('message'.padEnd(11))} ${outcome.messageId} from ${outcome.from} to ${outcome.to}${outcome.dkim ? `, DKIM ${outcome.dkim}` : ', not DKIM-signed'}`,
        outcome.accepted
          ? `${color.bold('outcome'.padEnd(11))} ${color.green(outcome.mode === 'outbox' ? 'written (NOT sent: no SMTP_URL)' : 'accepted')}: ${outcome.response}`
          : `${color.bold('outcome'.padEnd(11))} ${color.red('not accepted')}: ${outcome.error}`,
      ];
      print(outcome, opts.json, lines.join('\n'));
      if (!outcome.accepted) process.exitCode = EXIT.CHECK_FAILED;
    });
}
