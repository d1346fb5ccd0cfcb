import crypto from 'node:crypto';
import { cumulativeStdNormalProbability } from 'simple-statistics';
import type { AbSelection, MaterializationJob } from '../deliveries/store.js';
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
 * Who is in an A/B broadcast's test share, and with which variant (contract §17: "testPercent % of the audience, chosen
 * at random, split evenly across the variants"), stored on the broadcast (`ab_selection`) when its first pass starts:
 * - `audience`: N, the recipients the audience had when it was counted; `test`: k = testSize(N, …), the test share;
 * - `cuts`: one key per variant, in the test's order. A contact's key is abKey (a keyed hash of broadcast and contact,
 *   ties broken by the contact id); the contacts ranked by key, variant j takes the ranks below `cuts[j]` that the
 *   variants before it did not take: the first k ranks, dealt in runs whose sizes differ by at most one. Empty: nobody.
 */
export type { AbSelection };

/**
 * The size of the test share of an audience of `n`: round(n × testPercent / 100), halves up; raised to one per variant
 * when that is fewer and the audience has at least two per variant (so the test stays within half of it, the most
 * testPercent allows). So 20 contacts at 50 % are 10, at 10 % with 4 variants 4; 3 contacts at 10 % with 2 variants 0.
 */
export function testSize(n: number, testPercent: number, variants: number): number {
  const k = Math.floor((n * testPercent + 50) / 100);
  return k < variants && n >= 2 * variants ? variants : Math.min(k, n);
}

/** How many of a test share of `k` each of `variants` variants gets: k / variants, the first k mod variants one more. */
export function variantSizes(k: number, variants: number): number[] {
  return Array.from({ length: variants }, (_, j) => Math.floor(k / variants) + (j < k % variants ? 1 : 0));
}

/** The first 64 bits of SHA-256(broadcast id, contact id): a contact's random rank in one broadcast's test. */
function hashOf(broadcastId: string, contactId: string): Buffer {
  return crypto.createHash('sha256').update(`${broadcastId}\u0000${contactId}`).digest().subarray(0, 8);
}

/** hashOf as a number (what selectTestShare sorts). */
export const abHash = (broadcastId: string, contactId: string): bigint =>
  hashOf(broadcastId, contactId).readBigUInt64BE(0);

const hex = (h: bigint) => h.toString(16).padStart(16, '0');
/** Above every key (keys start with 16 hexadecimal digits). */
const TOP = 'g';

/**
 * A contact's key in a broadcast's test: the 64-bit hash as 16 hexadecimal digits, then the contact's id (which breaks
 * a tie between equal hashes). Compared as strings, keys are in the order of (hash, id): random across contacts, the
 * same every time for one contact (a batch written twice after a crash), independent between broadcasts.
 */
export function abKey(broadcastId: string, contactId: string): string {
  return hashOf(broadcastId, contactId).toString('hex') + contactId;
}

/**
 * Chooses the test share of a broadcast's audience, exactly: reads the audience's contact ids (`read` calls `visit`
 * with each page; a second time only when two contacts' 64-bit hashes tie at a cut), ranks them by key and cuts the
 * first k = testSize(N, …) ranks into the variants' runs. Memory: 8 bytes per recipient (8 MB for a million).
 */
export async function selectTestShare(
  broadcastId: string,
  test: { variants: readonly string[]; testPercent: number },
  read: (visit: (contactIds: readonly string[]) => void) => Promise<void>,
  /** abHash; a test gives another to make hashes tie. */
  hash: (broadcastId: string, contactId: string) => bigint = abHash,
): Promise<AbSelection> {
  let hashes = new BigUint64Array(1024);
  let n = 0;
  await read((ids) => {
    for (const id of ids) {
      if (n === hashes.length) {
        const grown = new BigUint64Array(n * 2);
        grown.set(hashes);
        hashes = grown;
      }
      hashes[n++] = hash(broadcastId, id);
    }
  });
  const sorted = hashes.subarray(0, n).sort();
  const k = testSize(n, test.testPercent, test.variants.length);
  if (k === 0) return { audience: n, test: 0, cuts: [] };
  // Each variant's run ends at a rank; its cut is the key at that rank (every key below it is in the runs so far).
  let end = 0;
  const ends = variantSizes(k, test.variants.length).map((size) => (end += size));
  // A cut whose hash the rank before it shares needs the ids of that hash (a 64-bit collision: almost never).
  const tied = new Map<bigint, string[]>();
  for (const r of ends) if (r > 0 && r < n && sorted[r - 1] === sorted[r]) tied.set(sorted[r]!, []);
  if (tied.size)
    await read((ids) => {
      for (const id of ids) tied.get(hash(broadcastId, id))?.push(id);
    });
  const firstAt = (h: bigint) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const cuts = ends.map((r) => {
    if (r >= n) return TOP;
    const h = sorted[r]!;
    const ids = tied.get(h);
    if (!ids) return hex(h);
    ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return hex(h) + (ids[r - firstAt(h)] ?? '');
  });
  return { audience: n, test: k, cuts };
}

/** `ab_selection` as the column stores it (JSON text, or jsonb read as an object), or null. */
export function parseAbSelection(stored: unknown): AbSelection | null {
  if (stored === null || stored === undefined) return null;
  const v = typeof stored === 'string' ? (JSON.parse(stored) as AbSelection) : (stored as AbSelection);
  return v && Array.isArray(v.cuts) ? v : null;
}

/** The variant a contact gets in the test share (the first whose cut its key is below), or null: it gets the winner. */
export function variantOf(
  selection: AbSelection,
  variants: readonly string[],
  broadcastId: string,
  contactId: string,
): string | null {
  if (!selection.cuts.length) return null;
  const key = abKey(broadcastId, contactId);
  const j = selection.cuts.findIndex((cut) => key < cut);
  return j < 0 ? null : (variants[j] ?? null);
}

/**
 * What one batch of an A/B broadcast's audience writes (the materialiser, src/composition/sql-delivery-store.ts): before
 * the winner, only the test share (`selection`, chosen when the pass started), each recipient with its variant (TEST);
 * after, every recipient with the winner (REST), the unique index keeping the test share's deliveries as they were.
 * Without a test, the batch as read.
 */
export function abBatch<R extends { contactId: string }>(
  broadcastId: string,
  ab: MaterializationJob['ab'],
  rows: readonly R[],
): (R & { variant?: string | null; group?: 'TEST' | 'REST' | null })[] {
  if (!ab) return [...rows];
  if (ab.winner !== null) return rows.map((r) => ({ ...r, variant: ab.winner, group: 'REST' as const }));
  const selection = ab.selection;
  if (!selection) throw new Error(`the test share of ${broadcastId} is not chosen yet (selectTestShare)`);
  const out = [];
  for (const r of rows) {
    const variant = variantOf(selection, ab.variants, broadcastId, r.contactId);
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
