import { useSearchParams } from 'react-router';

/**
 * A list's filters kept in the page's address (bookmarked, shared, linked to): the current params, and a setter that
 * changes some of them (an empty value removes it) in place of the history entry.
 */
export function useUrlFilters() {
  const [params, setParams] = useSearchParams();
  const setFilter = (changes: Record<string, string>) =>
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        for (const [k, v] of Object.entries(changes)) {
          if (v) next.set(k, v);
          else next.delete(k);
        }
        return next;
      },
      { replace: true },
    );
  const clearFilters = () => setParams(new URLSearchParams(), { replace: true });
  return { params, setFilter, clearFilters };
}
