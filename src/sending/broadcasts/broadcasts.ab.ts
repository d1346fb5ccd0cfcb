import crypto from 'node:crypto';
import { cumulativeStdNormalProbability } from 'simple-statistics';
import type { AbTest, Broadcast } from './broadcasts.schemas.js';

/**
 * The rules of an A/B broadcast (contract §17, docs/ab-tests.md), pure: who is in the test share and with which
 * variant, what a variant's message is, which variant wins, and how sure that is. The writes are the writer's
 * (broadcasts.writer.ts: the choice), the reads broadcasts.ab.repository.ts's.
 */

/** `abTest` as the column stores it (JSON text, or jsonb read as an object), or null. */
export function parseAbTest(stored: unknown): AbTest | null {
  if (stored === null || stored === undefined) return null;
  const v = typeof stored === 'string' ? (JSON.parse(stored) as AbTest) : (stored as AbTest);
  return v && Array.isArray(v.variants) ? v : null;
}

/**
 * A contact's place in a broadcast's test: a number in [0, 1) drawn from a hash of the broadcast's id and the
 * contact's id, so the draw is random across contacts, the same every time for one contact (a batch written twice
 * after a crash, pass two of the materialisation), and independent between broadcasts.
 */
export function draw(broadcastId: string, contactId: string): number {
  return crypto.createHash('sha256').update(`${broadcastId}\u0000${contactId}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * The variant a contact gets in the test share, or null when the contact is not in it (it gets the winner later).
 * Below `testPercent`% the draw is in the share, and the share is cut into equal parts, one per variant in order.
 */
export function variantOf(
  test: { variants: readonly string[]; testPercent: number },
  broadcastId: string,
  contactId: string,
): string | null {
  const u = draw(broadcastId, contactId);
  const share = test.testPercent / 100;
  if (u >= share) return null;
  return test.variants[Math.min(test.variants.length - 1, Math.floor((u / share) * test.variants.length))]!;
}

/**
 * What one batch of an A/B broadcast's audience writes (the materialiser, src/composition/sql-delivery-store.ts): before
 * the winner, only the test share, each recipient with its variant (TEST); after, every recipient with the winner (REST),
 * the unique index keeping the test share's deliveries as they were. Without a test, the batch as read.
 */
export function abBatch<R extends { contactId: string }>(
  broadcastId: string,
  ab: { variants: readonly string[]; testPercent: number; winner: string | null } | null | undefined,
  rows: readonly R[],
): (R & { variant?: string | null; group?: 'TEST' | 'REST' | null })[] {
  if (!ab) return [...rows];
  if (ab.winner !== null) return rows.map((r) => ({ ...r, variant: ab.winner, group: 'REST' as const }));
  const out = [];
  for (const r of rows) {
    const variant = variantOf(ab, broadcastId, r.contactId);
    if (variant) out.push({ ...r, variant, group: 'TEST' as const });
  }
  return out;
}

/**
 * The broadcast as one variant's recipients get it: the variant's subject, and its preview text, sender and body where
 * it has them; everything else the broadcast's. The version (`updatedAt`) names the variant too, so that a send
 * thread's cache of parsed templates (render.worker.ts) keeps each variant apart.
 */
export function withVariant<B extends Pick<Broadcast, 'from' | 'emailContent' | 'updatedAt'>>(
  b: B,
  test: AbTest | null,
  variantId: string | null,
): B {
  const v = variantId ? test?.variants.find((x) => x.id === variantId) : undefined;
  if (!v) return b;
  const body = v.emailContent ?? b.emailContent;
  return {
    ...b,
    from: v.from ?? b.from,
    updatedAt: `${b.updatedAt}#${v.id}`,
    emailContent: {
      ...body,
      subject: v.subject,
      previewText: v.previewText ?? body.previewText ?? b.emailContent.previewText,
    },
  };
}

export interface VariantResult {
  id: string;
  sent: number;
  uniqueOpens: number;
  uniqueClicks: number;
}

const rateOf = (r: VariantResult, by: AbTest['winnerBy']) =>
  r.sent ? (by === 'OPENS' ? r.uniqueOpens : r.uniqueClicks) / r.sent : 0;

/**
 * The variants ranked by the rule: the highest rate of unique human opens (or clicks) per message sent first; equal
 * rates keep the test's order, so a tie goes to the first variant.
 */
export function rank(results: readonly VariantResult[], by: AbTest['winnerBy']): VariantResult[] {
  return results
    .map((r, i) => ({ r, i, rate: rateOf(r, by) }))
    .sort((a, b) => b.rate - a.rate || a.i - b.i)
    .map((x) => x.r);
}

export interface Significance {
  z: number;
  pValue: number;
  confidence: number;
}

/**
 * A two-proportion z-test (pooled): is the leader's rate different from the runner-up's? z = (p1 − p2) / √(p(1 − p)
 * (1/n1 + 1/n2)) with p the pooled rate; the p-value two-sided, from the standard normal (simple-statistics).
 * Null when either has nothing sent; z 0 and p-value 1 when neither rate can differ (all or none engaged).
 */
export function significance(a: { n: number; x: number }, b: { n: number; x: number }): Significance | null {
  if (!a.n || !b.n) return null;
  const p = (a.x + b.x) / (a.n + b.n);
  const se = Math.sqrt(p * (1 - p) * (1 / a.n + 1 / b.n));
  if (!se) return { z: 0, pValue: 1, confidence: 0 };
  const z = (a.x / a.n - b.x / b.n) / se;
  const pValue = Math.min(1, Math.max(0, 2 * (1 - cumulativeStdNormalProbability(Math.abs(z)))));
  const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
  return { z: round(z, 4), pValue: round(pValue, 4), confidence: round(1 - pValue, 4) };
}

/** Leader, runner-up, margin (percentage points) and significance of results by the rule. */
export function standing(results: readonly VariantResult[], by: AbTest['winnerBy']) {
  const [leader, runnerUp] = rank(results, by);
  const metric = (r: VariantResult) => ({ n: r.sent, x: by === 'OPENS' ? r.uniqueOpens : r.uniqueClicks });
  return {
    leader: leader?.id ?? null,
    runnerUp: runnerUp?.id ?? null,
    margin: leader && runnerUp ? Math.round((rateOf(leader, by) - rateOf(runnerUp, by)) * 100 * 100) / 100 : 0,
    significance: leader && runnerUp ? significance(metric(leader), metric(runnerUp)) : null,
  };
}
