import { MAX_SLICE_ROWS, MIN_SLICE_ROWS, SLICE_BUDGET } from '../contacts/contacts.slices.js';
import { filterCost, type Filter } from './segments.filter.js';

/**
 * Filters over a workspace's contacts are evaluated a slice of contacts at a time on SQLite: contacts/contacts.slices.ts
 * says why and how (it is there so that the contact count can use it too). Here, the size of a filter's first slice.
 */
export {
  EVALUATION_LIMIT_MS,
  type IdRange,
  MAX_SLICE_ROWS,
  MIN_SLICE_ROWS,
  SLICE_BUDGET,
  SLICE_TARGET_MS,
  contactSlices,
  inRange,
  nextSlice,
  tooCostly,
} from '../contacts/contacts.slices.js';

/** Contacts per slice for this filter (and an extra per-contact cost, e.g. the audience's topic check). */
export function sliceRows(filter: Filter | null, extraCost = 0): number {
  const cost = (filter ? filterCost(filter) : 1) + extraCost;
  return Math.max(MIN_SLICE_ROWS, Math.min(MAX_SLICE_ROWS, Math.floor(SLICE_BUDGET / cost)));
}
