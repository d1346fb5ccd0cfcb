import { describeProblem, type DescribedProblem, type FieldLabels } from './problems';

/**
 * A failed request for a form (lib/problems.ts): sentences by field for the `labels` it shows, and the banner's
 * `message` and `rest` only for what none of them takes. Without `labels`, everything goes to the banner.
 */
export function problemOf(err: unknown, labels?: FieldLabels): DescribedProblem {
  return describeProblem(err, labels);
}

/** '' becomes null: optional text fields are cleared, not set to an empty string. */
export function nullable(s: string): string | null {
  const t = s.trim();
  return t === '' ? null : t;
}
