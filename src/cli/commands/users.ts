import { type Command, InvalidArgumentError } from 'commander';
import type { AuthContext } from '../../http/types.js';
import { isRole, ROLES, type Role } from '../../access/users/roles.js';
import { CLI_ACTOR } from '../../outbox/index.js';
import { allPages, jsonOption, requireWorkspace, withDb, workspaceOption } from '../context.js';
import { CliError, EXIT, print, table, time } from '../output.js';

/** All of standard input, for secrets that must not appear in the process list or the shell history. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new CliError(
      '--password-stdin reads the password from standard input: pipe it in (e.g. printf %s "$PASSWORD" | formcast user create …)',
      EXIT.USAGE,
    );
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseRole(value: string): Role {
  if (!isRole(value)) throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}`);
  return value;
}

/** The operator acts as an owner of the workspace (the rules that protect the last owner still hold). */
const operator = (workspaceId: string): AuthContext => ({ workspaceId, scopes: ['admin'], keyId: null });

/** user list | create | update | remove: the people who sign in to the console (/app). */
export function registerUsers(program: Command): void {
  const user = program.command('user').description('manage the people who sign in to the console (/app)');

  user
    .command('list')
    .description('list the console users of a workspace')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast user list --workspace ws_01JD…')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const users = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return allPages((before) => ctx.services.users.list(opts.workspace, 100, before));
      });
      print(
        users,
        opts.json,
        users.length
          ? table(
              ['ID', 'EMAIL', 'NAME', 'ROLE', 'LAST SIGN-IN'],
              users.map((u) => [u.id, u.email, u.name ?? '-', u.role, time(u.lastLoginAt)]),
            )
          : 'no users',
      );
    });

  user
    .command('create')
    .description('create a console user with a password (the first owner of a workspace, typically)')
    .addOption(workspaceOption())
    .requiredOption('--email <email>', 'the address they sign in with')
    .requiredOption('--role <role>', ROLES.join(', '), parseRole)
    .option('--name <name>', 'their name')
    .option('--password-stdin', 'read the password from standard input (one line; a trailing newline is dropped)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      '\nExample:\n  printf %s "$PASSWORD" | formcast user create --workspace ws_01JD… --email ana@example.com --role owner --password-stdin',
    )
    .action(
      async (opts: {
        workspace: string;
        email: string;
        role: Role;
        name?: string;
        passwordStdin?: boolean;
        json?: boolean;
      }) => {
        if (!opts.passwordStdin)
          throw new CliError(
            'give the password on standard input with --password-stdin (never as an argument)',
            EXIT.USAGE,
          );
        const password = (await readStdin()).replace(/\r?\n$/, '');
        const created = await withDb(async (ctx) => {
          await requireWorkspace(ctx, opts.workspace);
          return ctx.services.users.create(
            opts.workspace,
            {
              email: opts.email,
              role: opts.role,
              password,
              name: opts.name ?? null,
            },
            CLI_ACTOR,
          );
        });
        print(
          { id: created.id, email: created.email, role: created.role, workspaceId: created.workspaceId },
          opts.json,
          `user ${created.id} ${created.email} (${created.role}) in workspace ${created.workspaceId}`,
        );
      },
    );

  user
    .command('update')
    .description("change a user's role or name (the last owner stays an owner)")
    .argument('<id>', 'user id (usr_…)')
    .addOption(workspaceOption())
    .option('--role <role>', ROLES.join(', '), parseRole)
    .option('--name <name>', 'their name ("" clears it)')
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast user update usr_01JD… --workspace ws_01JD… --role editor')
    .action(async (id: string, opts: { workspace: string; role?: Role; name?: string; json?: boolean }) => {
      if (opts.role === undefined && opts.name === undefined)
        throw new CliError('give --role or --name (or both)', EXIT.USAGE);
      const updated = await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        return ctx.services.users.update(
          operator(opts.workspace),
          id,
          {
            role: opts.role,
            name: opts.name === undefined ? undefined : opts.name || null,
          },
          CLI_ACTOR,
        );
      });
      print(
        updated,
        opts.json,
        `user ${updated.id} ${updated.email}: ${updated.role}${updated.name ? `, ${updated.name}` : ''}`,
      );
    });

  user
    .command('remove')
    .description('remove a user; their sessions end at once (not the last owner)')
    .argument('<id>', 'user id (usr_…)')
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExample:\n  formcast user remove usr_01JD… --workspace ws_01JD…')
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      await withDb(async (ctx) => {
        await requireWorkspace(ctx, opts.workspace);
        await ctx.services.users.remove(operator(opts.workspace), id, CLI_ACTOR);
      });
      print({ id, removed: true }, opts.json, `user ${id} removed`);
    });
}
