import { Hono } from 'hono';
import type { Tool, ToolList, ToolQuery } from '../../policy-schemas/types.gen.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { validOrThrow } from '../http/body.ts';
import type { Stored } from '../store/document-store.ts';
import { cachedToolList } from '../store/inventory.ts';

type SortKey = NonNullable<ToolQuery['sort']>;

/**
 * `GET /v1/tools`: search, filters, sorting and (when `limit` is given) keyset paging with a cursor
 * that stays valid while tools are added or removed. Mounted under `/v1/tools` before the CRUD routes.
 */
export const toolListRoutes = new Hono<AppEnv>();

toolListRoutes.get('/', async (c) => {
  authorize(c, 'inventory', 'read');
  const q = validOrThrow<ToolQuery>('tool-query', { ...c.req.query() });
  const all = await cachedToolList(c.get('deps').database.db);
  return c.json(listTools(all, q));
});

/** The answer of `GET /v1/tools` for a query, over the whole inventory. */
export function listTools(all: Stored<Tool>[], q: ToolQuery): ToolList {
  const needle = q.q?.toLowerCase();
  const matches = all.filter(
    (t) =>
      (!needle ||
        t.id.toLowerCase().includes(needle) ||
        t.description.toLowerCase().includes(needle) ||
        (t.source?.originalName?.toLowerCase().includes(needle) ?? false)) &&
      (!q.group || (t.groups ?? ['default']).includes(q.group)) &&
      (!q.effect || t.effect === q.effect) &&
      (!q.status || (t.status ?? 'active') === q.status) &&
      (!q.source || (t.source?.kind ?? 'core') === q.source || t.source?.server === q.source) &&
      (!q.redaction || (q.redaction === 'none') === !t.redaction),
  );
  const key = q.sort ?? 'id';
  const dir = q.order === 'desc' ? -1 : 1;
  const keyed = matches.map((t) => ({ t, k: sortValue(t, key) }));
  keyed.sort((a, b) => dir * (compare(a.k, b.k) || compare(a.t.id, b.t.id)));
  const counts = {
    quarantined: matches.filter((t) => t.status === 'quarantined').length,
    noRedaction: matches.filter((t) => !t.redaction).length,
  };
  if (q.limit === undefined) return { items: keyed.map((x) => x.t), total: matches.length, counts, nextCursor: null };

  const limit = Number(q.limit);
  let start = 0;
  if (q.cursor) {
    const after = decodeCursor(q.cursor);
    // The first tool strictly after the cursor's position in this order (ties broken by id).
    start = keyed.findIndex((x) => dir * (compare(x.k, after.k) || compare(x.t.id, after.id)) > 0);
    if (start === -1) start = keyed.length;
  }
  const page = keyed.slice(start, start + limit);
  const last = page[page.length - 1];
  const nextCursor = last && start + limit < keyed.length ? encodeCursor({ k: last.k, id: last.t.id }) : null;
  return { items: page.map((x) => x.t), total: matches.length, counts, nextCursor };
}

function sortValue(t: Stored<Tool>, key: SortKey): string {
  switch (key) {
    case 'effect':
      return t.effect;
    case 'status':
      return t.status ?? 'active';
    case 'source':
      return `${t.source?.kind ?? 'core'}:${t.source?.server ?? ''}`;
    case 'updatedAt':
      return t.updatedAt;
    default:
      return t.id;
  }
}

// Code-unit order, the same in every locale and in the cursor.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function encodeCursor(pos: { k: string; id: string }): string {
  return Buffer.from(JSON.stringify([pos.k, pos.id]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { k: string; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { k: v[0], id: v[1] };
  } catch {
    /* answered below */
  }
  throw new ApiError(400, 'validation', 'cursor is not a cursor this server gave out; start again without it', {
    errors: [{ pointer: '/cursor', message: 'is not a nextCursor from GET /v1/tools' }],
  });
}
