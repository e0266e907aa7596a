import { replaceRoute, useLocation } from './router.ts';

/**
 * Filters kept in the route's query (`/tools?group=x`): the ones set, and setters that replace the
 * route; an empty value drops its key (the API rejects empty filters).
 */
export function useUrlFilters<F extends object>(path: string, keys: readonly (keyof F & string)[]) {
  const loc = useLocation();
  const filters = Object.fromEntries(keys.map((k) => [k, loc.params.get(k) ?? undefined]).filter(([, v]) => v)) as F;
  /** Sets several filters in one route change (separate calls would each start from the same route). */
  const setFilters = (patch: Partial<Record<keyof F & string, string>>) => {
    const p = new URLSearchParams(loc.params);
    for (const [key, value] of Object.entries(patch) as [string, string | undefined][]) {
      if (value) p.set(key, value);
      else p.delete(key);
    }
    const s = p.toString();
    replaceRoute(`${path}${s ? `?${s}` : ''}`);
  };
  const setFilter = (key: keyof F & string, value: string) => setFilters({ [key]: value } as Partial<Record<keyof F & string, string>>);
  return { filters, setFilter, setFilters };
}
