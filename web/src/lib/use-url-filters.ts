import { replaceRoute, useLocation } from './router.ts';

/**
 * Filters kept in the route's query (`/tools?group=x`): the ones set, and a setter that replaces the
 * route; an empty value drops its key (the API rejects empty filters).
 */
export function useUrlFilters<F extends object>(path: string, keys: readonly (keyof F & string)[]) {
  const loc = useLocation();
  const filters = Object.fromEntries(keys.map((k) => [k, loc.params.get(k) ?? undefined]).filter(([, v]) => v)) as F;
  const setFilter = (key: keyof F & string, value: string) => {
    const p = new URLSearchParams(loc.params);
    if (value) p.set(key, value);
    else p.delete(key);
    const s = p.toString();
    replaceRoute(`${path}${s ? `?${s}` : ''}`);
  };
  return { filters, setFilter };
}
