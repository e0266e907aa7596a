import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { type AuditFilter, auditEventPages, listAuditEvents, verifyStoredChain } from '../audit/events.ts';
import { CSV_HEADER, toCsvRow, toJsonl } from '../audit/export.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { validOrThrow } from '../http/body.ts';

/** `/v1/audit`: history with filters and cursor pagination, streamed export, chain verification. */
export const auditRoutes = new Hono<AppEnv>();

type AuditQuery = AuditFilter & { cursor?: string; limit?: string; format?: 'jsonl' | 'csv'; order?: 'asc' | 'desc' };

auditRoutes.get('/', async (c) => {
  authorize(c, 'audit', 'read');
  const q = validOrThrow<AuditQuery>('audit-query', { ...c.req.query() });
  const limit = Number(q.limit ?? 100);
  const { cursor, limit: _l, format: _f, order = 'asc', ...filter } = q;
  const items = await listAuditEvents(c.get('deps').database.db, filter, Number(cursor ?? 0), limit, order);
  const nextCursor = items.length === limit ? String(items[items.length - 1].seq) : null;
  return c.json({ items, nextCursor });
});

auditRoutes.get('/export', async (c) => {
  authorize(c, 'audit', 'export');
  const q = validOrThrow<AuditQuery>('audit-query', { ...c.req.query() });
  const format = q.format ?? 'jsonl';
  const db = c.get('deps').database.db;
  c.header('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  c.header('Content-Disposition', `attachment; filename="toolgate-audit.${format}"`);
  c.header('Cache-Control', 'no-store');
  const { cursor: _c, limit: _l, format: _f, order: _o, ...filter } = q;
  return stream(c, async (out) => {
    if (format === 'csv') await out.write(CSV_HEADER);
    for await (const page of auditEventPages(db, filter)) await out.write(page.map(format === 'csv' ? toCsvRow : toJsonl).join(''));
  });
});

auditRoutes.get('/verify', async (c) => {
  authorize(c, 'audit', 'read');
  return c.json((await verifyStoredChain(c.get('deps').database.db)).result());
});
