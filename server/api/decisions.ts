import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import type { DecisionBatch, DecisionQuery, ImpactRequest, StoredDecision } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { csvCell } from '../audit/export.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import {
  cursorOf,
  DEFAULT_MAX_PER_TENANT,
  type DecisionFilter,
  decisionPages,
  listDecisions,
  parseCursor,
  storeBatch,
  decisionRows,
  summarizeDecisions,
} from '../decisions/decision-store.ts';
import { analyzeImpact, DEFAULT_IMPACT_DAYS } from '../decisions/impact.ts';
import { ApiError } from '../errors.ts';
import { requireTenantExists } from '../store/tenants.ts';
import { MAX_BODY_BYTES, dropReadOnly, parseJsonBody, readJson, readOptionalJson, validOrThrow } from '../http/body.ts';
import { nextTurn } from '../http/event-loop.ts';

const gunzipAsync = promisify(gunzip);

/** A gzip batch may expand to this much JSON; beyond it the body is refused unread (a gzip bomb). */
export const MAX_DECOMPRESSED_BYTES = 8 * MAX_BODY_BYTES;
/**
 * Runtime clocks drift, but not by minutes: a record dated further ahead than this is refused, or
 * it would outlive (and, under the cap, evict) every genuine record and lead every summary.
 */
export const MAX_FUTURE_MS = 5 * 60_000;

/**
 * `/v1/tenants/:tenant/decisions`: runtimes report what they decided (never arguments or
 * outputs); readers of the tenant page through them newest first, auditors export them.
 */
export const decisionRoutes = new Hono<AppEnv>();

decisionRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'decision', 'report', tenant);
  // Parsing, validating and checking the times of a 1 MiB batch (4,000 records) each hold the
  // event loop for tens of milliseconds on a busy machine: other requests get a turn in between.
  const body = await readBatchBody(c);
  await nextTurn();
  const batch = validOrThrow<DecisionBatch>('decision-batch', body);
  await nextTurn();
  const receivedAt = new Date();
  const badTimes = batch.records.flatMap((r, i) => {
    const ms = instantMs(r.at);
    if (ms === null) return [{ pointer: `/records/${i}/at`, message: UNREPRESENTABLE }];
    return ms - receivedAt.getTime() > MAX_FUTURE_MS ? [{ pointer: `/records/${i}/at`, message: "is more than 5 minutes ahead of the server's clock" }] : [];
  });
  if (badTimes.length > 0) throw new ApiError(400, 'validation', `${badTimes[0].pointer} ${badTimes[0].message}`, { errors: badTimes });
  await requireTenantExists(c.get('deps').database.db, tenant);
  await c.get('deps').runtimeOwners.claim(tenant, batch.runtimeId, c.get('actor')!, '/runtimeId');

  const { database, config, metrics } = c.get('deps');
  const maxPerTenant = config.decisions?.maxPerTenant ?? DEFAULT_MAX_PER_TENANT;
  // Made before the write transaction opens, which every database read then waits for.
  const rows = await decisionRows(tenant, batch, receivedAt.toISOString());
  const { stored, evicted } = await database.change(async (tx) => {
    await requireTenantExists(tx, tenant);
    return storeBatch(tx, tenant, batch, receivedAt.toISOString(), maxPerTenant, database, rows);
  });
  metrics.decisionsIngested?.inc(stored);
  return c.json({ accepted: stored, evicted }, 202);
});

decisionRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'decision', 'read', tenant);
  const q = readQuery(c);
  const limit = Number(q.limit ?? 100);
  await requireTenantExists(c.get('deps').database.db, tenant);
  const items = await listDecisions(c.get('deps').database.db, tenant, filterOf(q), parseCursor(q.cursor), limit);
  const nextCursor = items.length === limit ? cursorOf(items[items.length - 1]) : null;
  return c.json({ items, nextCursor });
});

decisionRoutes.get('/summary', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'decision', 'read', tenant);
  const q = readQuery(c);
  await requireTenantExists(c.get('deps').database.db, tenant);
  return c.json(await summarizeDecisions(c.get('deps').database.db, tenant, filterOf(q), new Date()));
});

decisionRoutes.get('/export', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'decision', 'export', tenant);
  const q = readQuery(c);
  await requireTenantExists(c.get('deps').database.db, tenant);
  const format = q.format ?? 'jsonl';
  const db = c.get('deps').database.db;
  c.header('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  c.header('Content-Disposition', `attachment; filename="toolgate-decisions-${tenant}.${format}"`);
  c.header('Cache-Control', 'no-store');
  const filter = filterOf(q);
  return stream(c, async (out) => {
    if (format === 'csv') await out.write(CSV_HEADER);
    for await (const page of decisionPages(db, tenant, filter))
      await out.write(page.map(format === 'csv' ? toCsvRow : (d) => `${canonicalJson(d)}\n`).join(''));
  });
});

/** `POST /v1/tenants/:tenant/impact`: what the draft (or an unsaved policy) would change in logged traffic. */
export const impactRoutes = new Hono<AppEnv>();

impactRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'decision', 'read', tenant);
  const body = (await readOptionalJson(c)) as Record<string, unknown>;
  if (body && typeof body === 'object' && body.policy && typeof body.policy === 'object' && !Array.isArray(body.policy)) {
    dropReadOnly(body.policy as Record<string, unknown>, ['tenant']);
  }
  const req = validOrThrow<ImpactRequest>('impact-request', body);
  refuseUnrepresentable({ from: req.from, to: req.to });
  const to = req.to ? new Date(req.to) : new Date();
  const from = req.from ? new Date(req.from) : new Date(to.getTime() - DEFAULT_IMPACT_DAYS * 86400_000);
  if (!(from < to)) throw new ApiError(400, 'validation', '/from must be before /to', { errors: [{ pointer: '/from', message: 'must be before /to' }] });
  const slots = c.get('deps').impactSlots;
  const release = slots.take();
  if (!release) {
    throw new ApiError(429, 'rate_limited', `${slots.max} impact analyses are already running on this server; try again in a few seconds`, {
      extra: { retryAfter: IMPACT_RETRY_SECONDS },
      headers: { 'Retry-After': String(IMPACT_RETRY_SECONDS) },
    });
  }
  try {
    const { database, compiler } = c.get('deps');
    const db = database.db;
    // A large draft compiles in the compiler's worker: requests go on being answered meanwhile.
    const loaded = await (await compiler.compileDraft(db, tenant, req.policy)).loaded();
    return c.json(await analyzeImpact(db, tenant, loaded, { from: from.toISOString(), to: to.toISOString(), examples: req.examples ?? 3 }));
  } finally {
    release();
  }
});

const IMPACT_RETRY_SECONDS = 5;

/** The batch body: JSON, or gzip-compressed JSON bounded in what it may expand to. */
async function readBatchBody(c: Context<AppEnv>): Promise<unknown> {
  const encoding = (c.req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return readJson(c);
  if (encoding !== 'gzip') throw new ApiError(415, 'unsupported_media_type', 'Send the batch as JSON, optionally with Content-Encoding: gzip');
  if (!/^application\/json\s*(?:;|$)/i.test(c.req.header('content-type') ?? '')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json');
  }
  const wire = Buffer.from(await c.req.arrayBuffer());
  if (wire.length > MAX_BODY_BYTES) throw new ApiError(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes`);
  let text: string;
  try {
    text = (await gunzipAsync(wire, { maxOutputLength: MAX_DECOMPRESSED_BYTES })).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new ApiError(413, 'payload_too_large', `The body decompresses to more than ${MAX_DECOMPRESSED_BYTES} bytes`);
    }
    throw new ApiError(400, 'invalid_json', 'The body is not valid gzip', { errors: [{ pointer: '', message: 'is not valid gzip' }] });
  }
  return parseJsonBody(text);
}

const UNREPRESENTABLE = 'is not an instant between the years 0000 and 9999 (a leap second cannot be stored)';

/** Milliseconds of a schema-valid date-time, or null when it has no four-digit-year ISO form (a leap second, a year past 9999). */
function instantMs(text: string): number | null {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms >= YEAR_0 && ms < YEAR_10000 ? ms : null;
}
const YEAR_0 = Date.parse('0000-01-01T00:00:00Z');
const YEAR_10000 = Date.parse('9999-12-31T23:59:59.999Z') + 1;

function refuseUnrepresentable(times: Record<string, string | undefined>): void {
  const errors = Object.entries(times).flatMap(([k, v]) => (v !== undefined && instantMs(v) === null ? [{ pointer: `/${k}`, message: UNREPRESENTABLE }] : []));
  if (errors.length > 0) throw new ApiError(400, 'validation', `${errors[0].pointer} ${errors[0].message}`, { errors });
}

function readQuery(c: Context<AppEnv>): DecisionQuery {
  const q = validOrThrow<DecisionQuery>('decision-query', { ...c.req.query() });
  refuseUnrepresentable({ from: q.from, to: q.to });
  if (q.from && q.to && !(Date.parse(q.from) < Date.parse(q.to))) {
    throw new ApiError(400, 'validation', 'from must be before to', { errors: [{ pointer: '/from', message: 'must be before /to' }] });
  }
  return q;
}

function filterOf(q: DecisionQuery): DecisionFilter {
  const { cursor: _c, limit: _l, format: _f, ...filter } = q;
  return filter;
}

const CSV_COLUMNS = [
  'id',
  'at',
  'receivedAt',
  'runtimeId',
  'toolCallId',
  'subject',
  'groups',
  'state',
  'profile',
  'facts',
  'tool',
  'decision',
  'errorCode',
  'reason',
  'bundleVersion',
  'revision',
] as const;
/**
 * The constraint that decided and the approval that let the call through, a column per member so
 * a spreadsheet can filter on them; after the older columns, so those keep their positions.
 */
const CSV_NESTED_COLUMNS: [string, (d: StoredDecision) => string | number | undefined][] = [
  ['constraintRole', (d) => d.constraint?.role],
  ['constraintIndex', (d) => d.constraint?.index],
  ['constraintOtherwise', (d) => d.constraint?.otherwise],
  ['constraintReason', (d) => d.constraint?.reason],
  ['approvalId', (d) => d.approval?.id],
  ['approvalBy', (d) => d.approval?.by],
];
const CSV_HEADER = `${[...CSV_COLUMNS, ...CSV_NESTED_COLUMNS.map(([name]) => name)].join(',')}\r\n`;

/** One RFC 4180 row; `groups` and `facts` hold canonical JSON, an absent field is an empty cell. */
function toCsvRow(d: StoredDecision): string {
  const cells = CSV_COLUMNS.map((k) => {
    const v = d[k];
    if (v === undefined || v === null) return '';
    return csvCell(typeof v === 'object' ? canonicalJson(v) : String(v));
  });
  for (const [, read] of CSV_NESTED_COLUMNS) {
    const v = read(d);
    cells.push(v === undefined ? '' : csvCell(String(v)));
  }
  return `${cells.join(',')}\r\n`;
}
