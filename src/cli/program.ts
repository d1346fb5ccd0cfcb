import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { PACKAGE_ROOT } from '../lib/paths.js';
import { registerBroadcasts } from './commands/broadcasts.js';
import { registerContacts } from './commands/contacts.js';
import { registerDoctor } from './commands/doctor.js';
import { registerDomains } from './commands/domains.js';
import { registerKeys } from './commands/keys.js';
import { registerQueue } from './commands/queue.js';
import { registerSendTest } from './commands/send-test.js';
import { registerServer } from './commands/server.js';
import { registerUsers } from './commands/users.js';
import { registerWorkspaces } from './commands/workspaces.js';
import { usedDatabase } from './context.js';
import { EXIT, exitCodeOf, note } from './output.js';

/**
 * Operator commands (docs/cli.md; the contract's §10). Each reads the same environment as the server; each topic's
 * commands are in commands/<topic>.ts, the output rules (text or --json, colours, exit codes) in output.ts.
 */
const VERSION = (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  unexpected failure (the database cannot be reached, …)
  2  usage: unknown command or option, missing or invalid argument
  3  configuration: the environment cannot work (DATABASE_URL, SMTP_URL, …)
  4  not found: no such workspace, key, user, domain, broadcast, segment or file
  5  refused: a duplicate, a conflict (the last admin key, a status that does not allow it), invalid input
  6  a check or attempt did not pass (doctor, domain verify, send-test, a failed import, broadcast --watch not SENT)

Environment: DATABASE_URL (default: data/formcast.db in the Formcast folder), SMTP_URL, PUBLIC_URL, … (README,
"Configuration"). Commands that use the database name it on standard error, after a text result. NO_COLOR disables
colours. Documentation: docs/cli.md`;

const program = new Command('formcast')
  .description('Formcast: self-hostable email marketing (forms, contacts, broadcasts)')
  .version(VERSION, '-V, --version', 'print the version')
  .helpCommand(false)
  .showSuggestionAfterError()
  .addHelpText('after', EXIT_CODES_HELP)
  // Usage errors are one line on stderr: commander's message (and any "Did you mean" hint) plus a pointer
  // to --help. (showHelpAfterError would write the pointer as a second line, bypassing outputError.)
  .configureOutput({
    outputError: (str, write) => {
      const text = str
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' ')
        .replace(/^error: /, '');
      write(`formcast: ${text} (run with --help for usage)\n`);
    },
  })
  // Commander's exits become exceptions (below), so that usage errors get their own exit code.
  .exitOverride();

let json = false;
program.hook('preAction', (_program, action) => {
  json = Boolean(action.opts().json);
});

registerServer(program);
registerWorkspaces(program);
registerKeys(program);
registerUsers(program);
registerDomains(program);
registerContacts(program);
registerBroadcasts(program);
registerQueue(program);
registerSendTest(program);
registerDoctor(program);

// A reader that stops early (`formcast contacts export | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

try {
  await program.parseAsync(process.argv);
  // Which database the command used, for the person reading (a script reading --json output is not told).
  const database = usedDatabase();
  if (database && !json) note(`database: ${database}`);
} catch (err) {
  if (err instanceof CommanderError) {
    // Already said (help, the version, or the one-line usage error).
    process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  } else {
    // DomainError, CliError and ConfigError messages are written for the operator; anything else is
    // unexpected (e.g. the database cannot be reached) and shown by its first line.
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`formcast: ${message.split('\n').find((l) => l.trim()) ?? 'failed'}\n`);
    process.exitCode = exitCodeOf(err);
  }
}
