import fs from 'node:fs';
import { isIP } from 'node:net';
import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../../config.js';
import { connect, isPostgresUrl } from '../../db/connection.js';
import { pendingMigrations } from '../../db/migrate.js';
import { withSecret } from '../secret.js';
import { createServices } from '../../app.js';
import type { DomainsService } from '../../mail-setup/domains/domains.service.js';
import { listWorkspaces } from '../../access/workspaces/workspaces.repository.js';
import { describeDatabase } from '../database.js';
import { allPages, jsonOption } from '../context.js';
import { color, EXIT, print, status } from '../output.js';
import { probeSmtp } from '../smtp-probe.js';

type Outcome = 'ok' | 'warn' | 'fail';

interface Check {
  check: string;
  status: Outcome;
  detail: string;
}

const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\]|::1)$/;

/**
 * Whether mail leaves this machine: with no SMTP_URL every message is an .eml file in the outbox (the README's laptop
 * setup). What would only hurt real recipients (links to an address they cannot reach, DKIM records not published)
 * is then a warning, not a failure: nobody receives anything yet.
 */
function mailLeaves(config: Config): boolean {
  return config.smtpRelays.length > 0;
}

async function checkPublicUrl(config: Config): Promise<Check[]> {
  const checks: Check[] = [];
  const url = new URL(config.publicUrl);
  if (!config.publicUrlExplicit) {
    checks.push({
      check: 'PUBLIC_URL',
      status: mailLeaves(config) ? 'fail' : 'warn',
      detail: mailLeaves(config)
        ? `not set: links in emails and pages would use ${config.publicUrl}, which recipients cannot reach; set it to the service's public https address`
        : `not set: links use ${config.publicUrl}, fine while messages only go to the outbox (no SMTP_URL); set it to the service's public https address before sending for real`,
    });
  } else if (url.protocol !== 'https:') {
    checks.push({
      check: 'PUBLIC_URL',
      status: 'warn',
      detail: `${config.publicUrl} is http://${LOOPBACK.test(url.hostname) ? ' on this machine: fine for trying Formcast out, not for real mail' : ': one-click unsubscribe (RFC 8058) and mailbox providers expect https; put the service behind a TLS proxy'}`,
    });
  } else {
    checks.push({ check: 'PUBLIC_URL', status: 'ok', detail: `${config.publicUrl} (https)` });
  }
  if (config.publicUrlExplicit) {
    try {
      const res = await fetch(`${config.publicUrl}/readyz`, { signal: AbortSignal.timeout(5000), redirect: 'manual' });
      checks.push({
        check: 'PUBLIC_URL reachable',
        status: res.status === 200 ? 'ok' : 'warn',
        detail: `GET ${config.publicUrl}/readyz answered ${res.status}`,
      });
    } catch (err) {
      checks.push({
        check: 'PUBLIC_URL reachable',
        status: 'warn',
        detail: `GET ${config.publicUrl}/readyz failed (${(err as Error).message}): is the server running, and the proxy in front of it?`,
      });
    }
  }
  return checks;
}

async function checkSmtp(config: Config): Promise<Check[]> {
  if (!config.smtpRelays.length) {
    return [
      {
        check: 'SMTP',
        status: 'warn',
        detail: `SMTP_URL is not set: messages are written as .eml files to ${config.outboxDir} and NOT sent to anyone`,
      },
    ];
  }
  const checks: Check[] = [];
  for (const relay of config.smtpRelays) {
    const p = await probeSmtp(relay.url, {
      heloName: config.smtpHeloName,
      allowPlaintextAuth: config.smtpAllowPlaintextAuth,
      timeoutMs: 10_000,
    });
    checks.push({ check: `SMTP ${p.relay}`, status: p.ok ? 'ok' : 'fail', detail: p.detail });
    if (!p.ok) continue;
    const host = new URL(relay.url).hostname.replace(/^\[|\]$/g, '');
    // This machine or a private network (RFC 1918, IPv6 ULA, a bare host name such as a container's): a warning only.
    const local =
      LOOPBACK.test(host) ||
      (isIP(host) === 4 && /^(10|127)\.|^192\.168\.|^172\.(1[6-9]|2\d|3[01])\./.test(host)) ||
      (isIP(host) === 6 && /^f[cd]/i.test(host)) ||
      (isIP(host) === 0 && !host.includes('.'));
    checks.push({
      check: `SMTP ${p.relay} TLS`,
      status: p.tls !== 'none' ? 'ok' : local ? 'warn' : 'fail',
      detail:
        p.tls === 'none'
          ? `the connection is not encrypted (no smtps://, no STARTTLS offered)${local ? ': acceptable for a relay on this machine or network only' : ''}`
          : `${p.tls}${p.protocol ? ` (${p.protocol})` : ''}`,
    });
  }
  return checks;
}

/** Addresses on this machine or a private network (RFC 1918, loopback, IPv6 ULA and link-local): not what receivers see. */
const PRIVATE_IP = /^(10|127)\.|^192\.168\.|^172\.(1[6-9]|2\d|3[01])\.|^169\.254\.|^::1$|^f[cd]|^fe80:/i;

/**
 * Reverse DNS (PTR) of the addresses mail leaves from (docs/deliverability.md, "PTR"): Gmail and Outlook refuse or
 * junk mail from an address without a PTR that resolves back to it. The addresses are SENDING_IPS, else the generic
 * relay's own public addresses; a managed relay's (SES, Postmark, …) are the provider's to name.
 */
async function checkReverseDns(
  config: Config,
  domains: { checkSendingIps: DomainsService['checkSendingIps']; addressesOf: DomainsService['addressesOf'] },
): Promise<Check[]> {
  if (!config.smtpRelays.length) return [];
  if (config.relayProfile !== 'smtp' && !config.sendingIps.length)
    return [
      {
        check: 'PTR',
        status: 'ok',
        detail: `mail leaves from ${config.relayProfile}'s addresses (RELAY_PROFILE), whose reverse DNS is the provider's`,
      },
    ];
  let ips = config.sendingIps;
  if (!ips.length) {
    const found = new Set<string>();
    for (const relay of config.smtpRelays) {
      const host = new URL(relay.url).hostname.replace(/^\[|\]$/g, '');
      for (const ip of isIP(host) ? [host] : await domains.addressesOf(host)) found.add(ip);
    }
    ips = [...found].filter((ip) => !PRIVATE_IP.test(ip));
    if (!ips.length)
      return [
        {
          check: 'PTR',
          status: 'warn',
          detail:
            'the relay is on this machine or a private network, so the address mail leaves from is not known: set SENDING_IPS to it, and doctor checks its reverse DNS (a PTR that names a host resolving back to it)',
        },
      ];
  }
  const results = await domains.checkSendingIps(ips);
  return results.map((r) => ({
    check: `PTR ${r.ip}`,
    status: r.confirmed ? ('ok' as const) : ('warn' as const),
    detail: r.confirmed
      ? `${r.names.join(', ')}, which resolves back to ${r.ip}`
      : r.failure
        ? `${r.failure}`
        : r.names.length
          ? `its PTR names ${r.names.join(', ')}, which does not resolve back to ${r.ip}: receivers expect forward-confirmed reverse DNS; ask whoever runs the address to fix either record`
          : `${r.ip} has no PTR record: Gmail and Outlook refuse or junk mail from an address without reverse DNS; ask your hosting provider to set its PTR to the name the relay greets with (SMTP_HELO_NAME)`,
  }));
}

/** A SQLite write-ahead log this large is not being copied back into the file (db/checkpointer.ts). */
const WAL_WARN_BYTES = 256 * 1024 * 1024;

/**
 * SQLite's write-ahead log, when it holds anything (a process has the database open and wrote): its size, and a
 * warning when it has grown past what either way of checkpointing (SQLITE_CHECKPOINTS, docs/cli.md) lets it reach,
 * which means something keeps it from starting over: a reader that never ends, a process stopped in a transaction.
 */
export function walCheck(file: string): Check | null {
  let size: number;
  try {
    size = fs.statSync(`${file}-wal`).size;
  } catch {
    return null;
  }
  if (size === 0) return null;
  const mb = (size / 1024 / 1024).toFixed(1);
  return size > WAL_WARN_BYTES
    ? {
        check: 'SQLite log',
        status: 'warn',
        detail: `${file}-wal holds ${mb} MB: it is not being copied back into the database; is a process stuck in a transaction, or a read (an export) running for hours?`,
      }
    : { check: 'SQLite log', status: 'ok', detail: `${mb} MB of write-ahead log` };
}

/** Migrations, then the DNS of every domain of every workspace (when the schema is current). */
async function checkDatabase(config: Config): Promise<Check[]> {
  const checks: Check[] = [];
  const where = describeDatabase(config.databaseUrl);
  if (!isPostgresUrl(config.databaseUrl) && config.databaseUrl !== ':memory:' && !fs.existsSync(config.databaseUrl)) {
    return [
      {
        check: 'database',
        status: 'fail',
        detail: `no database at ${where}: start the server or run formcast migrate (or set DATABASE_URL to the server's)`,
      },
    ];
  }
  const db = connect(config.databaseUrl);
  try {
    let state;
    try {
      state = await pendingMigrations(db);
    } catch (err) {
      return [{ check: 'database', status: 'fail', detail: `${where}: ${(err as Error).message.split('\n')[0]}` }];
    }
    checks.push({ check: 'database', status: 'ok', detail: `${where} answers` });
    const wal =
      isPostgresUrl(config.databaseUrl) || config.databaseUrl === ':memory:' ? null : walCheck(config.databaseUrl);
    if (wal) checks.push(wal);
    if (state.pending.length) {
      checks.push({
        check: 'migrations',
        status: 'fail',
        detail: `${state.pending.length} pending: ${state.pending.join(', ')} (run formcast migrate, or restart the server)`,
      });
      return checks;
    }
    checks.push({ check: 'migrations', status: 'ok', detail: `all ${state.applied.length} applied` });

    let withKey;
    try {
      withKey = await withSecret(db, config);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      checks.push({ check: 'secret key', status: 'fail', detail: err.message });
      return checks;
    }
    checks.push({
      check: 'secret key',
      status: 'ok',
      detail: config.secretKey
        ? 'SECRET_KEY matches the database'
        : config.secretKeyFile
          ? `${config.secretKeyFile} matches the database`
          : 'in memory',
    });
    const services = createServices(db, withKey);
    // Public submissions taken in during a spike and not made yet (docs/forms.md, "A spike of submissions"): said only
    // when there are some; a warning when the oldest has waited a minute (nothing is making them).
    const intake = await services.submissions.intakeBacklog();
    if (intake.waiting) {
      const stale = intake.oldest !== null && Date.now() - Date.parse(intake.oldest) > 60_000;
      checks.push({
        check: 'submission intake',
        status: stale ? 'warn' : 'ok',
        detail: `${intake.waiting} public submission${intake.waiting === 1 ? ' waits' : 's wait'} to be made, the oldest received ${intake.oldest}${stale ? ': is a server or worker running the jobs?' : ''}`,
      });
    }
    const workspaces = await allPages((before) => listWorkspaces(db.kysely, 100, before));
    let domains = 0;
    for (const ws of workspaces) {
      const list = await allPages((before) => services.domains.list(ws.id, { limit: 100, beforeId: before }));
      for (const d of list) {
        domains++;
        const v = await services.domains.checkDns(ws.id, d.name);
        const failing = (v?.records ?? []).filter((r) => r.status !== 'VERIFIED');
        const label = `DNS ${d.name} (${ws.id})`;
        // What receivers require of bulk senders besides DKIM: SPF where they check it (the Return-Path's domain) and
        // DMARC. Without them the domain sends, but not well: a warning, with the advice that says how to fix it.
        const lacking = [
          ...(v?.envelope && v.envelope.domain !== null && !v.envelope.spf.found
            ? [`no SPF at ${v.envelope.domain} (the Return-Path receivers check)`]
            : []),
          ...(v && !v.dmarc.found ? ['no DMARC record'] : []),
          ...(v?.alignment && !v.alignment.spfAligns ? ['DMARC aspf=s: SPF never aligns'] : []),
        ];
        if (!failing.length && lacking.length)
          checks.push({
            check: label,
            status: 'warn',
            detail: `ownership and DKIM records published, but ${lacking.join(', ')}: Gmail and Yahoo require SPF and DMARC of bulk senders; ${v!.advice.join(' ')}`,
          });
        else if (!failing.length)
          checks.push({
            check: label,
            status: 'ok',
            detail: `ownership, DKIM, SPF at the Return-Path and DMARC published${v?.advice.length ? `; advice: ${v.advice.join(' ')}` : ''}`,
          });
        else {
          const what = failing.map((r) => `${r.name} ${r.type} ${r.status}`).join(', ');
          checks.push(
            d.status === 'VERIFIED'
              ? {
                  check: label,
                  // Without SMTP_URL its messages reach nobody: worth fixing before sending for real, not a failure.
                  status: mailLeaves(config) ? 'fail' : 'warn',
                  detail: `VERIFIED, but now ${what}: its messages will fail DKIM${mailLeaves(config) ? '' : ' once they are sent for real (now they only go to the outbox)'} (formcast domain verify ${d.name} --workspace ${ws.id})`,
                }
              : {
                  check: label,
                  status: 'warn',
                  detail: `${d.status}, not used for sending yet: ${what} (publish the records: formcast domain verify ${d.name} --workspace ${ws.id})`,
                },
          );
        }
      }
    }
    if (!domains)
      checks.push({
        check: 'DNS',
        status: 'warn',
        detail: 'no sending domain in any workspace (formcast domain add <name> --workspace <id>)',
      });
    checks.push(...(await checkReverseDns(config, services.domains)));
  } finally {
    await db.close();
  }
  return checks;
}

/**
 * doctor: is this installation ready to send? Exit 0 when no check failed (warnings pass, and say so), 6 when one did
 * (docs/cli.md, "Exit codes"). What only matters once mail leaves the machine is a warning without SMTP_URL.
 */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the installation: PUBLIC_URL, SMTP reachability and TLS, the database and its migrations, the DNS of every domain; exit 6 if a check failed, 0 otherwise (warnings do not fail)',
    )
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nEach check is ok, warn (worth fixing; does not fail) or fail. Nothing is changed, nothing is sent.\nExit 0: no check failed (there may be warnings); 6: a check failed (an invalid environment included).\nWithout SMTP_URL (messages only go to the outbox) an unset PUBLIC_URL and unpublished DNS are warnings.\n\nExample:\n  formcast doctor',
    )
    .action(async (opts: { json?: boolean }) => {
      let checks: Check[];
      try {
        const config = loadConfig();
        checks = [
          { check: 'configuration', status: 'ok', detail: 'the environment is valid' },
          ...(await checkPublicUrl(config)),
          ...(await checkSmtp(config)),
          ...(await checkDatabase(config)),
        ];
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        checks = [{ check: 'configuration', status: 'fail', detail: err.message }];
      }
      const ok = checks.every((c) => c.status !== 'fail');
      const width = Math.max(...checks.map((c) => c.check.length));
      const mark = { ok: color.green('✓'), warn: color.yellow('!'), fail: color.red('✗') };
      print(
        { ok, checks },
        opts.json,
        [
          ...checks.map(
            (c) =>
              `${mark[c.status]} ${status(c.status)}${' '.repeat(5 - c.status.length)}${c.check.padEnd(width)}  ${c.detail}`,
          ),
          '',
          ok
            ? color.green(`all checks passed${checks.some((c) => c.status === 'warn') ? ' (with warnings)' : ''}`)
            : color.red(`${checks.filter((c) => c.status === 'fail').length} check(s) failed`),
        ].join('\n'),
      );
      if (!ok) process.exitCode = EXIT.CHECK_FAILED;
    });
}
