import type { Db, Executor } from '../../db/connection.js';
import { notFound, validationFailed } from '../../errors/errors.js';
import { normalizeEmail } from '../../lib/email.js';
import { nowIso } from '../../lib/time.js';
import * as repo from './suppressions.repository.js';
import type { CreateSuppressionInput, SuppressionEntry } from './suppressions.schemas.js';

const present = ({ id: _id, ...s }: repo.Suppression & { id: string }): SuppressionEntry => s;

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
    opts: { reason?: repo.Suppression['reason']; limit: number; beforeId?: string },
  ): Promise<(SuppressionEntry & { id: string })[]> {
    return (await repo.listSuppressions(this.db.kysely, workspaceId, opts)).map((s) => ({ ...present(s), id: s.id }));
  }

  async get(workspaceId: string, rawEmail: string): Promise<SuppressionEntry> {
    const email = normalizeEmail(rawEmail);
    const entry = email ? await repo.getSuppression(this.db.kysely, workspaceId, email) : undefined;
    if (!entry) throw notFound('suppression');
    return present(entry);
  }

  /** Adds the address (MANUAL); an address already suppressed keeps its entry. `created` says which. */
  async add(
    workspaceId: string,
    input: CreateSuppressionInput,
  ): Promise<{ entry: SuppressionEntry; created: boolean }> {
    const email = this.email(input.email, '/email');
    const created = await this.db.kysely.transaction().execute(async (trx) => {
      const before = await repo.getSuppression(trx, workspaceId, email);
      await this.lifecycle(trx, workspaceId, email, 'suppress', { detail: input.detail ?? null }, nowIso());
      return !before;
    });
    return { entry: await this.get(workspaceId, email), created };
  }

  /** Lifts the entry: the address may be mailed again once its contact is SUBSCRIBED (its status is not changed). */
  async remove(workspaceId: string, rawEmail: string): Promise<void> {
    const email = normalizeEmail(rawEmail);
    if (!email) throw notFound('suppression');
    const lifted = await this.db.kysely.transaction().execute(async (trx) => {
      if (!(await repo.getSuppression(trx, workspaceId, email))) return false;
      await this.lifecycle(trx, workspaceId, email, 'unsuppress', {}, nowIso());
      return true;
    });
    if (!lifted) throw notFound('suppression');
  }
}
