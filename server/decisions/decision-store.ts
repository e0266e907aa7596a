import { createHash } from 'node:crypto';
import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type {
  DecisionBatch,
  DecisionQuery,
  DecisionRecord,
  DecisionSummary,
  DenialReason,
  DeniedKey,
  EvaluationRequest,
  StoredDecision,
} from '../../policy-schemas/types.gen.ts';
import type { DbOrTx, Tx } from '../db/database.ts';
import type { DecisionsRow, NewDecisionsRow } from '../db/tables/decisions.ts';
import { TurnBudget, nextTurn } from '../http/event-loop.ts';

/** Default for `TOOLGATE_DECISIONS_RETENTION_DAYS`. */
export const DEFAULT_RETENTION_DAYS = 30;
/** Default for `TOOLGATE_DECISIONS_MAX_PER_TENANT`: a noisy runtime cannot fill the disk. */
export const DEFAULT_MAX_PER_TENANT = 1_000_000;

export type DecisionFilter = Pick<DecisionQuery, 'from' | 'to' | 'subject' | 'tool' | 'decision' | 'errorCode' | 'runtimeId'>;

// SQLite allows 32,766 bound values per statement; 20 columns a row.
const INSERT_CHUNK = 1_000;
/** Rows a batch evicts between two turns of the event loop. */
const WRITE_CHUNK = 500;
/** How long a batch's inserts run between two turns inside its transaction. */
const WRITE_SLICE_MS = 25;

/** The evaluation request a record was decided under: what impact analysis replays. */
export function requestOf(r: DecisionRecord): EvaluationRequest {
  const req: EvaluationRequest = { subject: r.subject, groups: r.groups, state: r.state };
  if (r.profile !== undefined) req.profile = r.profile;
  if (r.facts !== undefined && Object.keys(r.facts).length > 0) req.facts = r.facts;
  return req;
}

/**
 * RFC 8785 canonical JSON of requestOf(r), written out directly: the keys are known, and this runs
 * once per stored record. Equal requests give equal text, hence equal hashes.
 */
export function requestJson(r: DecisionRecord): string {
  let out = '{';
  if (r.facts !== undefined) {
    const keys = Object.keys(r.facts).sort();
    if (keys.length > 0) out += `"facts":{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(r.facts![k])}`).join(',')}},`;
  }
  out += `"groups":${JSON.stringify(r.groups)},`;
  if (r.profile !== undefined) out += `"profile":${JSON.stringify(r.profile)},`;
  return `${out}"state":${JSON.stringify(r.state)},"subject":${JSON.stringify(r.subject)}}`;
}

/**
 * The rows a validated batch is stored as, made before its write transaction opens: canonicalising
 * and hashing thousands of records is work no database read should wait for. A batch holds few
 * distinct requests, so each is hashed once; other requests get a turn between slices.
 */
export async function decisionRows(tenant: string, batch: DecisionBatch, receivedAt: string): Promise<NewDecisionsRow[]> {
  const hashes = new Map<string, string>();
  const turns = new TurnBudget();
  const rows: NewDecisionsRow[] = [];
  for (const r of batch.records) {
    const request = requestJson(r);
    let hash = hashes.get(request);
    if (hash === undefined) hashes.set(request, (hash = createHash('sha256').update(request).digest('base64url')));
    rows.push({
      tenant,
      runtime_id: batch.runtimeId,
      at: new Date(r.at).toISOString(),
      received_at: receivedAt,
      tool_call_id: r.toolCallId,
      subject: r.subject,
      tool: r.tool,
      decision: r.decision,
      error_code: r.errorCode ?? null,
      reason: r.reason ?? null,
      bundle_version: r.bundleVersion,
      revision: r.revision ?? null,
      request,
      request_hash: hash,
      approval_id: r.approval?.id ?? null,
      approval_by: r.approval?.by ?? null,
      constraint_role: r.constraint?.role ?? null,
      constraint_index: r.constraint?.index ?? null,
      constraint_otherwise: r.constraint?.otherwise ?? null,
      constraint_reason: r.constraint?.reason ?? null,
    });
    await turns.yieldIfDue();
  }
  return rows;
}

/**
 * Stores one validated batch (every `at` a representable instant) in the caller's transaction:
 * every record or none. Counts what the runtime sent and dropped, then evicts the tenant's oldest
 * records beyond `maxPerTenant`. Returns how many records were stored and evicted.
 */
export async function storeBatch(
  tx: Tx,
  tenant: string,
  batch: DecisionBatch,
  receivedAt: string,
  maxPerTenant: number,
  /** The database `tx` belongs to: on SQLite, rows then go through a prepared statement on its connection. */
  database?: { sqlite: SqliteDatabase.Database | null },
  /** The batch's rows made beforehand by decisionRows (outside the transaction); made here otherwise. */
  prepared?: readonly NewDecisionsRow[],
): Promise<{ stored: number; evicted: number }> {
  const sqlite = database?.sqlite;
  const rows = prepared ?? (await decisionRows(tenant, batch, receivedAt));
  const records = batch.records;
  if (sqlite) {
    // Inside the caller's transaction on the same connection: one prepared statement, run per row,
    // is about three times faster than compiling a thousand-row INSERT.
    const insert = preparedInsert(sqlite);
    // A 1 MiB batch is thousands of rows: other requests get a turn between slices. The
    // transaction stays open meanwhile (the batch is still stored whole or not at all), and every
    // database read waits for it, so slices are longer here than for work outside a transaction.
    const turns = new TurnBudget(WRITE_SLICE_MS);
    for (const row of rows) {
      insert.run(INSERT_COLUMNS.map((c) => row[c] ?? null));
      await turns.yieldIfDue();
    }
  } else {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await tx
        .insertInto('decisions')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
  }

  const source = { received: records.length, dropped: batch.dropped ?? 0, last_batch_at: receivedAt };
  await tx
    .insertInto('decision_sources')
    .values({ tenant, runtime_id: batch.runtimeId, ...source })
    .onConflict((oc) =>
      oc.columns(['tenant', 'runtime_id']).doUpdateSet({
        received: sql`decision_sources.received + ${records.length}`,
        // Cumulative since the runtime started: a retried batch repeats it rather than adding to it.
        dropped: batch.dropped === undefined ? sql`decision_sources.dropped` : batch.dropped,
        last_batch_at: receivedAt,
      }),
    )
    .execute();
  await tx
    .insertInto('decision_stats')
    .values({ tenant, stored: records.length, evicted: 0, expired: 0 })
    .onConflict((oc) => oc.column('tenant').doUpdateSet({ stored: sql`decision_stats.stored + ${records.length}` }))
    .execute();

  const evicted = await evictBeyondCap(tx, tenant, maxPerTenant);
  return { stored: records.length, evicted };
}

const INSERT_COLUMNS = [
  'tenant',
  'runtime_id',
  'at',
  'received_at',
  'tool_call_id',
  'subject',
  'tool',
  'decision',
  'error_code',
  'reason',
  'bundle_version',
  'revision',
  'request',
  'request_hash',
  'approval_id',
  'approval_by',
  'constraint_role',
  'constraint_index',
  'constraint_otherwise',
  'constraint_reason',
] as const;
const insertStatements = new WeakMap<SqliteDatabase.Database, SqliteDatabase.Statement>();

function preparedInsert(sqlite: SqliteDatabase.Database): SqliteDatabase.Statement {
  let stmt = insertStatements.get(sqlite);
  if (!stmt) {
    stmt = sqlite.prepare(`INSERT INTO decisions (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`);
    insertStatements.set(sqlite, stmt);
  }
  return stmt;
}

/**
 * Deletes the tenant's oldest records beyond `cap` (by decision time, then arrival, as the list
 * orders them) and counts them as evicted: a chunk at a time, with a turn for other requests
 * between chunks (a full log evicts as many records as each batch brings).
 */
async function evictBeyondCap(tx: Tx, tenant: string, cap: number): Promise<number> {
  const stats = await tx.selectFrom('decision_stats').select('stored').where('tenant', '=', tenant).executeTakeFirst();
  let over = (stats?.stored ?? 0) - cap;
  let n = 0;
  while (over > 0) {
    const ids = await tx
      .selectFrom('decisions')
      .select('id')
      .where('tenant', '=', tenant)
      .orderBy('at')
      .orderBy('id')
      .limit(Math.min(over, WRITE_CHUNK))
      .execute();
    if (ids.length === 0) break;
    const deleted = await deleteByIds(
      tx,
      ids.map((r) => r.id),
    );
    n += deleted;
    over -= ids.length;
    await nextTurn();
  }
  if (n === 0) return 0;
  await tx
    .updateTable('decision_stats')
    .set({ stored: sql`stored - ${n}`, evicted: sql`evicted + ${n}` })
    .where('tenant', '=', tenant)
    .execute();
  return n;
}

/**
 * Deletes records by primary key. The ids were just read for one tenant in the same write
 * transaction, so no tenant condition is needed, and none may be added: given `tenant = ? AND id IN
 * (…)`, SQLite ranges the (tenant, at, id) index over every record of the tenant and tests each id,
 * which for a million records held the event loop 80–160 ms per 500-record chunk (740 ms of a 1 MiB
 * batch's eviction); by primary key alone a chunk takes 3–10 ms.
 */
async function deleteByIds(tx: Tx, ids: number[]): Promise<number> {
  const res = await tx.deleteFrom('decisions').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes every record decided before `before` (all tenants), a chunk at a time; returns how many went. */
export async function expireDecisions(run: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>, db: DbOrTx, before: string, chunk = 5_000): Promise<number> {
  let total = 0;
  const tenants = (await db.selectFrom('decision_stats').select('tenant').execute()).map((r) => r.tenant);
  for (const tenant of tenants) {
    for (;;) {
      const n = await run(async (tx) => {
        const ids = await tx.selectFrom('decisions').select('id').where('tenant', '=', tenant).where('at', '<', before).orderBy('at').limit(chunk).execute();
        if (ids.length === 0) return 0;
        const deleted = await deleteByIds(
          tx,
          ids.map((r) => r.id),
        );
        await tx
          .updateTable('decision_stats')
          .set({ stored: sql`stored - ${deleted}`, expired: sql`expired + ${deleted}` })
          .where('tenant', '=', tenant)
          .execute();
        return deleted;
      });
      total += n;
      if (n < chunk) break;
    }
  }
  return total;
}

function filtered(db: DbOrTx, tenant: string, f: DecisionFilter) {
  let q = db.selectFrom('decisions').where('tenant', '=', tenant);
  if (f.from) q = q.where('at', '>=', new Date(f.from).toISOString());
  if (f.to) q = q.where('at', '<', new Date(f.to).toISOString());
  if (f.subject) q = q.where('subject', '=', f.subject);
  if (f.tool) q = q.where('tool', '=', f.tool);
  if (f.decision) q = q.where('decision', '=', f.decision);
  if (f.errorCode) q = q.where('error_code', '=', f.errorCode);
  if (f.runtimeId) q = q.where('runtime_id', '=', f.runtimeId);
  return q;
}

type DecisionQueryBuilder = ReturnType<typeof filtered>;

/** Records one grouping query reads (summary, impact) before the event loop gets a turn. */
export const ROWS_PER_SLICE = 5_000;

/** Consecutive records of a window by (at, id): those after `after` (null: from the start) up to and with `upTo` (null: to the end). */
export type DecisionSlice = { after: DecisionCursor | null; upTo: DecisionCursor | null };

/**
 * Cuts the tenant's records in [from, to) into slices of at most `rows` records, oldest first. A
 * grouping query over a whole window of a million records holds the event loop for seconds
 * (better-sqlite3 is synchronous); over one slice it takes milliseconds, each boundary is an
 * index-only skip, and the event loop gets a turn between slices.
 */
export async function* decisionSlices(db: DbOrTx, tenant: string, window: { from: string; to: string }, rows = ROWS_PER_SLICE): AsyncGenerator<DecisionSlice> {
  let after: DecisionCursor | null = null;
  for (;;) {
    const boundary = await sliceQuery(db, tenant, window, { after, upTo: null })
      .select(['at', 'id'])
      .orderBy('at')
      .orderBy('id')
      .offset(rows - 1)
      .limit(1)
      .executeTakeFirst();
    const upTo: DecisionCursor | null = boundary ? { at: boundary.at, id: Number(boundary.id) } : null;
    yield { after, upTo };
    if (!upTo) return;
    after = upTo;
    await nextTurn();
  }
}

/**
 * The window's records of one slice, under `f`'s other filters. Each side of the range on `at` is
 * bound exactly once (the slice's cursor, or the window's end where the slice has none): given two
 * lower bounds as parameters, SQLite ranges the index on the first, and every slice would read
 * from the window's start.
 */
function sliceQuery(db: DbOrTx, tenant: string, f: DecisionFilter & { from: string; to: string }, s: DecisionSlice): DecisionQueryBuilder {
  let q = filtered(db, tenant, { ...f, from: undefined, to: undefined });
  const { after, upTo } = s;
  q = after
    ? q.where('at', '>=', after.at).where((eb) => eb.or([eb('at', '>', after.at), eb.and([eb('at', '=', after.at), eb('id', '>', after.id)])]))
    : q.where('at', '>=', new Date(f.from).toISOString());
  q = upTo
    ? q.where('at', '<=', upTo.at).where((eb) => eb.or([eb('at', '<', upTo.at), eb.and([eb('at', '=', upTo.at), eb('id', '<=', upTo.id)])]))
    : q.where('at', '<', new Date(f.to).toISOString());
  return q;
}

/** A window's records grouped slice by slice (see decisionSlices): `group` runs on each slice's query. */
export async function* groupedBySlice<R>(
  db: DbOrTx,
  tenant: string,
  f: DecisionFilter & { from: string; to: string },
  group: (q: DecisionQueryBuilder) => Promise<R[]>,
  rows = ROWS_PER_SLICE,
): AsyncGenerator<R[]> {
  // Slices are cut over all the window's records (an index-only skip), whatever else `f` filters.
  for await (const slice of decisionSlices(db, tenant, { from: f.from, to: f.to }, rows)) yield await group(sliceQuery(db, tenant, f, slice));
}

/** Where a page ends: the last record's decision time and id (ties on time go by id). */
export type DecisionCursor = { at: string; id: number };

export function cursorOf(d: Pick<StoredDecision, 'at' | 'id'>): string {
  return `${d.at}_${d.id}`;
}

export function parseCursor(text: string | undefined): DecisionCursor | null {
  if (!text) return null;
  const i = text.lastIndexOf('_');
  return { at: text.slice(0, i), id: Number(text.slice(i + 1)) };
}

/** One page, newest decision first (by `at`, then arrival), after `cursor` (null = from the newest). */
export async function listDecisions(db: DbOrTx, tenant: string, f: DecisionFilter, cursor: DecisionCursor | null, limit: number): Promise<StoredDecision[]> {
  // Below a cursor the cursor is the upper bound (pages came from under `to`): one bound on each
  // side of `at`, so the index range starts at the cursor (see sliceQuery).
  let q = filtered(db, tenant, cursor ? { ...f, to: undefined } : f).selectAll();
  // The plain bound on `at` lets the (tenant, at, id) index start at the cursor: without it a page
  // deep into a million records sorted everything after the cursor first (milliseconds became 100+).
  if (cursor) q = q.where('at', '<=', cursor.at).where((eb) => eb.or([eb('at', '<', cursor.at), eb.and([eb('at', '=', cursor.at), eb('id', '<', cursor.id)])]));
  const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toStoredDecision);
}

/**
 * Every matching record, newest first, a page at a time: constant memory for any export, and the
 * event loop gets a turn after each page, so other requests are answered while a million stream out.
 */
export async function* decisionPages(db: DbOrTx, tenant: string, f: DecisionFilter, pageSize = 500): AsyncGenerator<StoredDecision[]> {
  let cursor: DecisionCursor | null = null;
  for (;;) {
    const page = await listDecisions(db, tenant, f, cursor, pageSize);
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    const last = page[page.length - 1];
    cursor = { at: last.at, id: last.id };
    await nextTurn();
  }
}

export function toStoredDecision(r: DecisionsRow): StoredDecision {
  const request = JSON.parse(r.request) as EvaluationRequest;
  const d: StoredDecision = {
    id: Number(r.id),
    runtimeId: r.runtime_id,
    receivedAt: r.received_at,
    at: r.at,
    toolCallId: r.tool_call_id,
    subject: r.subject,
    groups: request.groups ?? ['default'],
    state: request.state ?? 'undefined',
    tool: r.tool,
    decision: r.decision as StoredDecision['decision'],
    bundleVersion: r.bundle_version === null ? null : Number(r.bundle_version),
  };
  if (request.profile !== undefined) d.profile = request.profile;
  if (request.facts !== undefined) d.facts = request.facts;
  if (r.error_code !== null) d.errorCode = r.error_code;
  if (r.reason !== null) d.reason = r.reason;
  if (r.revision !== null) d.revision = r.revision;
  if (r.approval_id !== null && r.approval_by !== null) d.approval = { id: r.approval_id, by: r.approval_by as 'person' | 'client' };
  if (r.constraint_role !== null && r.constraint_index !== null && r.constraint_otherwise !== null && r.constraint_reason !== null) {
    d.constraint = {
      role: r.constraint_role,
      index: Number(r.constraint_index),
      otherwise: r.constraint_otherwise as 'deny' | 'require_approval',
      reason: r.constraint_reason,
    };
  }
  return d;
}

const BUCKETS = 48;
const TOP = 10;

/**
 * What the console's Decisions view draws: counts per decision over time, and the most denied
 * tools and subjects with why they were denied, over the filtered window.
 */
export async function summarizeDecisions(db: DbOrTx, tenant: string, f: DecisionFilter, now: Date, sliceRows = ROWS_PER_SLICE): Promise<DecisionSummary> {
  const to = f.to ? new Date(f.to) : now;
  const from = f.from ? new Date(f.from) : new Date(to.getTime() - 24 * 3600_000);
  const window = { ...f, from: from.toISOString(), to: to.toISOString() };
  const span = Math.max(1, to.getTime() - from.getTime());
  const bucketMs = Math.max(1000, Math.ceil(span / BUCKETS / 1000) * 1000);
  const buckets = Array.from({ length: Math.ceil(span / bucketMs) }, (_, i) => ({
    start: new Date(from.getTime() + i * bucketMs).toISOString(),
    allow: 0,
    deny: 0,
    require_approval: 0,
  }));
  // Bucketed in the application from (at, decision) counts: portable across SQLite and PostgreSQL
  // date functions. Grouping by the second keeps the rows read small; grouping slice by slice keeps
  // each query short (the event loop gets a turn between slices).
  const denied = { tool: new Map<string, Map<string, number>>(), subject: new Map<string, Map<string, number>>() };
  const countDenied = (into: Map<string, Map<string, number>>, key: string, why: string, n: number) => {
    let reasons = into.get(key);
    if (!reasons) into.set(key, (reasons = new Map()));
    reasons.set(why, (reasons.get(why) ?? 0) + n);
  };
  const perSlice = groupedBySlice(
    db,
    tenant,
    window,
    async (q) => {
      const perSecond = await q
        .select((eb) => [sql<string>`substr(at, 1, 19)`.as('second'), 'decision', eb.fn.countAll<number>().as('n')])
        .groupBy([sql`substr(at, 1, 19)`, 'decision'])
        .execute();
      const deniedRows = await q
        .where('decision', '=', 'deny')
        .select((eb) => ['tool', 'subject', sql<string>`coalesce(reason, error_code, 'denied')`.as('why'), eb.fn.countAll<number>().as('n')])
        .groupBy(['tool', 'subject', sql`coalesce(reason, error_code, 'denied')`])
        .execute();
      return [{ perSecond, deniedRows }];
    },
    sliceRows,
  );
  for await (const [{ perSecond, deniedRows }] of perSlice) {
    for (const row of perSecond) {
      const ms = Date.parse(`${row.second}Z`);
      const i = Math.floor((ms - from.getTime()) / bucketMs);
      const b = buckets[i];
      if (b && (row.decision === 'allow' || row.decision === 'deny' || row.decision === 'require_approval')) b[row.decision] += Number(row.n);
    }
    for (const r of deniedRows) {
      countDenied(denied.tool, r.tool, r.why, Number(r.n));
      countDenied(denied.subject, r.subject, r.why, Number(r.n));
    }
  }

  const top = (by: Map<string, Map<string, number>>) => {
    const all = [...by].map(([key, reasons]): DeniedKey & { reasons: DenialReason[] } => {
      const list = [...reasons].map(([reason, calls]) => ({ reason, calls }));
      return { key, calls: list.reduce((n, r) => n + r.calls, 0), reasons: list };
    });
    const list = all.sort((a, b) => b.calls - a.calls || a.key.localeCompare(b.key)).slice(0, TOP);
    for (const e of list) e.reasons.sort((a, b) => b.calls - a.calls || a.reason.localeCompare(b.reason));
    return list;
  };

  const stats = await db.selectFrom('decision_stats').selectAll().where('tenant', '=', tenant).executeTakeFirst();
  const sources = await db.selectFrom('decision_sources').selectAll().where('tenant', '=', tenant).orderBy('last_batch_at', 'desc').limit(100).execute();
  return {
    from: window.from,
    to: window.to,
    bucketSeconds: bucketMs / 1000,
    buckets,
    topDeniedTools: top(denied.tool),
    topDeniedSubjects: top(denied.subject),
    counters: { stored: Number(stats?.stored ?? 0), evicted: Number(stats?.evicted ?? 0), expired: Number(stats?.expired ?? 0) },
    runtimes: sources.map((s) => ({ runtimeId: s.runtime_id, received: Number(s.received), dropped: Number(s.dropped), lastBatchAt: s.last_batch_at })),
  };
}

/** Records dropped by each runtime's ring, as last reported: shown beside the runtime's status. */
export async function droppedByRuntime(db: DbOrTx, tenant: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('decision_sources').select(['runtime_id', 'dropped']).where('tenant', '=', tenant).execute();
  return new Map(rows.map((r) => [r.runtime_id, Number(r.dropped)]));
}
