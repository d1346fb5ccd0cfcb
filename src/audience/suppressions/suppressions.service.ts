import { SYSTEM_ACTOR, recordAudit, type AuditActor } from '../../outbox/index.js';
import type { Db, Executor } from '../../db/connection.js';
import { notFound, validationFailed } from '../../errors/errors.js';
import { normalizeEmail } from '../../lib/email.js';
import { normalizeDateTime, nowIso } from '../../lib/time.js';
import * as repo from './suppressions.repository.js';
import type {
  BulkSuppressionInput,
  BulkSuppressionOutcome,
  CreateSuppressionInput,
  SuppressionEntry,
} from './suppressions.schemas.js';
import { noMessageSources, withSources, type MessageSources } from './suppressions.sources.js';

const strip = ({ id: _id, ...s }: repo.Suppression & { id: string }): repo.Suppression => s;

/** An RFC 3339 query time in its stored form, or a 422 naming the parameter. */
function queryTime(text: string | undefined, name: string): string | undefined {
  if (text === undefined) return undefined;
  const t = normalizeDateTime(text);
  if (t === undefined) throw validationFailed([{ path: `/query/${name}`, message: 'must be an RFC 3339 date-time' }]);
  return t;
}

/**
 * The contact lifecycle's `suppress` / `unsuppress` of an address (contacts.lifecycle.ts applyToAddress), in the
 * caller's transaction. A port: the lifecycle sits above the list it writes, so the composition root (app.ts) hands it in.
 */
export type AddressLifecycle = (
  trx: Executor,
  workspaceId: string,
  email: string,
  op: 'suppress' | 'unsuppress',
  cause: { detail?: string | null },
  now: string,
) => Promise<unknown>;

/**
 * The suppression list's API (docs/bounces.md): read it, add an address by hand (MANUAL), lift an entry.
 * Adding and lifting go through the contact lifecycle (`suppress`, `unsuppress`), which owns the entries.
 * Addresses are normalised as contacts' are (normalizeEmail, of which contacts.email.ts is the fast path).
 */
export class SuppressionsService {
  constructor(
    private readonly db: Db,
    private readonly lifecycle: AddressLifecycle,
    private readonly sources: MessageSources = noMessageSources,
  ) {}

  private email(input: string, path: string): string {
    const email = normalizeEmail(input);
    if (!email)
      throw validationFailed([
        { path, message: 'must be a valid email address', keyword: 'format', params: { format: 'email' } },
      ]);
    return email;
  }

  async list(
    workspaceId: string,
    opts: Omit<repo.SuppressionFilter, 'since' | 'before'> & {
      since?: string;
      before?: string;
      limit: number;
      beforeId?: string;
    },
  ): Promise<(SuppressionEntry & { id: string })[]> {
    const rows = await repo.listSuppressions(this.db.kysely, workspaceId, {
      ...opts,
      since: queryTime(opts.since, 'since'),
      before: queryTime(opts.before, 'before'),
    });
    return withSources(this.sources, workspaceId, rows);
  }

  async get(workspaceId: string, rawEmail: string): Promise<SuppressionEntry> {
    const email = normalizeEmail(rawEmail);
    const entry = email ? await repo.getSuppression(this.db.kysely, workspaceId, email) : undefined;
    if (!entry) throw notFound('suppression');
    return (await withSources(this.sources, workspaceId, [strip(entry)]))[0]!;
  }

  /** Adds the address (MANUAL); an address already suppressed keeps its entry. `created` says which. */
  async add(
    workspaceId: string,
    input: CreateSuppressionInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<{ entry: SuppressionEntry; created: boolean }> {
    const email = this.email(input.email, '/email');
    const created = await this.db.kysely.transaction().execute(async (trx) => {
      const before = await repo.getSuppression(trx, workspaceId, email);
      await this.lifecycle(trx, workspaceId, email, 'suppress', { detail: input.detail ?? null }, nowIso());
      // An address suppressed already keeps its entry: nothing changed, nothing to record.
      if (!before) {
        const entry = await repo.getSuppression(trx, workspaceId, email);
        await recordAudit(trx, workspaceId, actor, {
          action: 'suppression.added',
          target: { type: 'suppression', id: entry?.id ?? null, label: email },
          changes: input.detail ? { detail: { before: null, after: input.detail } } : null,
        });
      }
      return !before;
    });
    return { entry: await this.get(workspaceId, email), created };
  }

  /**
   * Adds many addresses (MANUAL) in one transaction: each valid one is added or found already there (its entry kept);
   * what is not an address is reported and skipped. An address given twice (in any case) counts once.
   */
  async addMany(
    workspaceId: string,
    input: BulkSuppressionInput,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<BulkSuppressionOutcome> {
    const out: BulkSuppressionOutcome = { added: [], alreadySuppressed: [], invalid: [] };
    const emails: string[] = [];
    const seen = new Set<string>();
    input.emails.forEach((raw, index) => {
      const email = raw.length <= 320 ? normalizeEmail(raw) : null;
      if (!email) out.invalid.push({ index, email: raw, message: 'is not a valid email address' });
      else if (!seen.has(email)) {
        seen.add(email);
        emails.push(email);
      }
    });
    if (!emails.length) return out;
    await this.db.kysely.transaction().execute(async (trx) => {
      const before = await repo.suppressionsOf(trx, workspaceId, emails);
      const now = nowIso();
      for (const email of emails) {
        if (before.has(email)) {
          out.alreadySuppressed.push(email);
          continue;
        }
        await this.lifecycle(trx, workspaceId, email, 'suppress', { detail: input.detail ?? null }, now);
        // One audit entry per address added, as a single add writes (the audit log filters by target).
        await recordAudit(trx, workspaceId, actor, {
          action: 'suppression.added',
          target: { type: 'suppression', id: null, label: email },
          changes: input.detail ? { detail: { before: null, after: input.detail } } : null,
        });
        out.added.push(email);
      }
    });
    return out;
  }

  /** Lifts the entry: the address may be mailed again once its contact is SUBSCRIBED (its status is not changed). */
  async remove(workspaceId: string, rawEmail: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    const email = normalizeEmail(rawEmail);
    if (!email) throw notFound('suppression');
    const lifted = await this.db.kysely.transaction().execute(async (trx) => {
      const entry = await repo.getSuppression(trx, workspaceId, email);
      if (!entry) return false;
      await this.lifecycle(trx, workspaceId, email, 'unsuppress', {}, nowIso());
      await recordAudit(trx, workspaceId, actor, {
        action: 'suppression.removed',
        target: { type: 'suppression', id: entry.id, label: email },
        changes: { reason: { before: entry.reason, after: null } },
      });
      return true;
    });
    if (!lifted) throw notFound('suppression');
  }
}
