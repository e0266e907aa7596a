import { Hono } from 'hono';
import type { AuditVerification } from '../../policy-schemas/types.gen.ts';
import { stream } from 'hono/streaming';
import { type AuditFilter, auditEventPages, listAuditEvents } from '../audit/events.ts';
import { ChainContradiction, heldCheckpoints, verifyChainAndCheckpoints } from '../audit/held-checkpoints.ts';
import { listCheckpoints, takeCheckpoint } from '../audit/checkpoints.ts';
import { CSV_HEADER, partialExportLine, toCsvRow, toJsonl } from '../audit/export.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { validOrThrow } from '../http/body.ts';

/**
 * `/v1/audit`: history with filters and cursor pagination, streamed export (which first signs a
 * checkpoint of the head, named in `Toolgate-Checkpoint`), chain verification, signed checkpoints.
 */
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
  const { database, config, logger, keys } = c.get('deps');
  const db = database.db;
  // Every export is anchored: an auditor who keeps this checkpoint can later prove a newer export
  // extends it. Over a chain that contradicts an earlier checkpoint none is signed; the export still
  // streams (it is the evidence) and says where the chain breaks.
  try {
    const checkpoint = await takeCheckpoint(database, keys, { mirrorDir: config.mirrorDir, logger });
    if (checkpoint) c.header('Toolgate-Checkpoint', String(checkpoint.seq));
  } catch (err) {
    if (!(err instanceof ChainContradiction)) throw err;
    c.header('Toolgate-Chain-Broken', `seq ${err.broken.seq}: ${err.broken.reason}`);
  }
  c.header('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  c.header('Content-Disposition', `attachment; filename="toolgate-audit.${format}"`);
  c.header('Cache-Control', 'no-store');
  const { cursor: _c, limit: _l, format: _f, order: _o, ...filter } = q;
  // A filtered export is not the chain: its first line says so, and `audit verify` reports it as partial.
  const partial = Object.keys(filter).length > 0 ? partialExportLine(filter, format) : null;
  return stream(c, async (out) => {
    if (partial) await out.write(partial);
    if (format === 'csv') await out.write(CSV_HEADER);
    for await (const page of auditEventPages(db, filter)) await out.write(page.map(format === 'csv' ? toCsvRow : toJsonl).join(''));
  });
});

auditRoutes.get('/verify', async (c) => {
  authorize(c, 'audit', 'read');
  const { database, config, keys } = c.get('deps');
  const held = await heldCheckpoints(database.db, keys, config.mirrorDir);
  return c.json<AuditVerification>(await verifyChainAndCheckpoints(database.db, held));
});

auditRoutes.get('/checkpoints', async (c) => {
  authorize(c, 'audit', 'read');
  const q = validOrThrow<{ cursor?: string; limit?: string }>('audit-checkpoint-query', { ...c.req.query() });
  const limit = Number(q.limit ?? 100);
  const items = await listCheckpoints(c.get('deps').database.db, Number(q.cursor ?? 0), limit);
  const nextCursor = items.length === limit ? String(items[items.length - 1].seq) : null;
  return c.json({ items, nextCursor });
});

auditRoutes.get('/checkpoints/latest', async (c) => {
  authorize(c, 'audit', 'read');
  const [latest] = await listCheckpoints(c.get('deps').database.db, 0, 1);
  if (!latest)
    throw new ApiError(404, 'not_found', 'no audit checkpoint yet: one is signed on the next export, after 1,000 events or within 10 minutes of a change');
  c.header('Content-Disposition', `attachment; filename="toolgate-audit-checkpoint-${latest.seq}.json"`);
  return c.json(latest);
});
