import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Approval, ApprovalDecision, ApprovalQuery, ApprovalReceiptPayload, ApprovalRequestCreate } from '../../policy-schemas/types.gen.ts';
import { APPROVAL_FORMAT, argumentsDigest } from '../../runtime/approval-receipt.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { resolveApprovalSettings } from '../approvals/approval-settings.ts';
import {
  auditView,
  countPendingBy,
  cursorOf,
  expireDue,
  getApproval,
  insertApproval,
  listApprovals,
  recordDecision,
  toApproval,
} from '../approvals/approval-store.ts';
import { publishedReceiptLifetime } from '../approvals/receipt-lifetime.ts';
import { notifyWebhook } from '../approvals/webhook.ts';
import { withChange } from '../audit/change.ts';
import { actorOf, authorize, permits } from '../auth/guard.ts';
import { requireStillAuthenticated } from '../auth/held-requests.ts';
import { type Actor, type AppEnv, actorName } from '../context.ts';
import type { ApprovalRequestsRow } from '../db/tables/approval-requests.ts';
import { MAX_WAIT_SECONDS, parseWait } from '../distribution/serving.ts';
import { ApiError } from '../errors.ts';
import { readValid, validOrThrow } from '../http/body.ts';
import { signApprovalReceipt } from '../signing/sign.ts';
import { requireTenantExists } from '../store/tenants.ts';

/** The arguments of one request, as RFC 8785 JSON, may be this large: they are shown to a person. */
export const MAX_APPROVAL_ARGUMENTS_BYTES = 64 * 1024;
const FLOOD_RETRY_SECONDS = 30;

/**
 * `/v1/tenants/:tenant/approvals`: a runtime asks a person to approve one exact call; people who
 * may decide for the tenant (admins, its editors; never the token that asked) approve or deny it
 * with a reason, and an approval yields a signed receipt the runtime verifies offline.
 */
export const approvalRoutes = new Hono<AppEnv>();

approvalRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  const actor = authorize(c, 'approval', 'request', tenant);
  const body = await readValid<ApprovalRequestCreate>(c, 'approval-request');
  const canonicalArgs = canonicalJson(body.arguments);
  if (Buffer.byteLength(canonicalArgs, 'utf8') > MAX_APPROVAL_ARGUMENTS_BYTES) {
    throw new ApiError(413, 'payload_too_large', `The arguments are larger than ${MAX_APPROVAL_ARGUMENTS_BYTES} bytes as RFC 8785 JSON`, {
      errors: [{ pointer: '/arguments', message: `is larger than ${MAX_APPROVAL_ARGUMENTS_BYTES} bytes` }],
    });
  }
  const deps = c.get('deps');
  const settings = resolveApprovalSettings(deps.config.approvals);
  const now = new Date();
  await expireDue(deps.database, now.toISOString());
  const requestedBy = actorName(actor);
  const id = randomUUID();
  const row = await withChange(c, null, async (ch) => {
    await requireTenantExists(ch.tx, tenant);
    // Counted inside the write: concurrent requests from one token cannot slip past the bound together.
    const pending = await countPendingBy(ch.tx, requestedBy, now.toISOString());
    const max = settings.maxPendingPerRequester;
    if (pending >= max) {
      throw new ApiError(
        429,
        'rate_limited',
        `This token already has ${pending} approval requests waiting for a person (at most ${max}); wait for them to be decided or to expire`,
        { extra: { retryAfter: FLOOD_RETRY_SECONDS, pending, limit: max }, headers: { 'Retry-After': String(FLOOD_RETRY_SECONDS) } },
      );
    }
    const fresh: ApprovalRequestsRow = {
      id,
      tenant,
      subject: body.subject,
      tool: body.tool,
      arguments_digest: argumentsDigest(body.arguments),
      arguments: canonicalArgs,
      reason: body.reason,
      bundle_version: body.bundleVersion ?? null,
      tool_call_id: body.toolCallId ?? null,
      requested_by: requestedBy,
      requested_at: now.toISOString(),
      expires_at: new Date(now.getTime() + settings.ttlSeconds * 1000).toISOString(),
      state: 'pending',
      decided_by: null,
      decided_at: null,
      decision_reason: null,
      receipt_payload: null,
      receipt_signature: null,
    };
    await insertApproval(ch.tx, fresh);
    await ch.record({ action: 'create', entityType: 'approval', entityId: id, tenant, after: auditView(toApproval(fresh, false)), reason: body.reason });
    return fresh;
  });
  const approval = toApproval(row, true);
  void notifyWebhook(settings, approval, deps.logger);
  c.header('Location', `/v1/tenants/${tenant}/approvals/${id}`);
  return c.json(approval, 201);
});

approvalRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  const actor = authorize(c, 'approval', 'read', tenant);
  const q = validOrThrow<ApprovalQuery>('approval-query', { ...c.req.query() });
  const limit = Number(q.limit ?? 50);
  const { database, authorizer } = c.get('deps');
  await requireTenantExists(database.db, tenant);
  await expireDue(database, new Date().toISOString());
  const rows = await listApprovals(database.db, tenant, q, limit);
  // Arguments are shown to those who may decide; viewers and auditors see the queue without them.
  const withArguments = permits(authorizer, actor, 'approval', 'decide', tenant);
  const items = rows.map((r) => toApproval(r, withArguments));
  c.header('Cache-Control', 'no-store');
  return c.json({ items, nextCursor: rows.length === limit ? cursorOf(rows[rows.length - 1]) : null });
});

approvalRoutes.get('/:id', async (c) => {
  const tenant = c.req.param('tenant') as string;
  const id = c.req.param('id');
  const wait = parseWait(c.req.query('wait'));
  if (wait === undefined) {
    throw new ApiError(400, 'validation', `wait must be a whole number of seconds (at most ${MAX_WAIT_SECONDS} are used)`, {
      errors: [{ pointer: '/query/wait', message: 'is not a whole number of seconds' }],
    });
  }
  const actor = actorOf(c);
  const { database } = c.get('deps');
  const read = async () => {
    await expireDue(database, new Date().toISOString());
    return readable(c, actor, tenant, id);
  };
  let found = await read();
  if (wait > 0 && found.row.state === 'pending') {
    const left = Math.min(wait * 1000, Date.parse(found.row.expires_at) - Date.now() + 50);
    await c.get('deps').approvalEvents.waitFor(id, left, c.req.raw.signal);
    // Revoked while waiting: the decision (and its receipt) is not this credential's to have.
    await requireStillAuthenticated(c);
    found = await read();
  }
  c.header('Cache-Control', 'no-store');
  return c.json(toApproval(found.row, found.withArguments));
});

/**
 * The request, if this actor may read it: readers of the tenant's approvals, and the token that
 * opened it (a runtime polls its own requests). Anyone else learns nothing: 404.
 */
async function readable(c: Context<AppEnv>, actor: Actor, tenant: string, id: string): Promise<{ row: ApprovalRequestsRow; withArguments: boolean }> {
  const { database, authorizer } = c.get('deps');
  const mayRead = permits(authorizer, actor, 'approval', 'read', tenant);
  if (!mayRead && !permits(authorizer, actor, 'approval', 'request', tenant)) authorize(c, 'approval', 'read', tenant);
  const row = /^[0-9a-f-]{36}$/.test(id) ? await getApproval(database.db, tenant, id) : undefined;
  const requester = row !== undefined && row.requested_by === actorName(actor);
  if (!row || (!mayRead && !requester)) {
    await requireTenantExists(database.db, tenant);
    throw new ApiError(404, 'not_found', `approval request ${id} does not exist`);
  }
  return { row, withArguments: requester || permits(authorizer, actor, 'approval', 'decide', tenant) };
}

approvalRoutes.post('/:id/approve', (c) => decideRequest(c, 'approved'));
approvalRoutes.post('/:id/deny', (c) => decideRequest(c, 'denied'));

async function decideRequest(c: Context<AppEnv>, state: 'approved' | 'denied') {
  const tenant = c.req.param('tenant') as string;
  const id = c.req.param('id') as string;
  const actor = authorize(c, 'approval', 'decide', tenant);
  const body = await readValid<ApprovalDecision>(c, 'approval-decision');
  const deps = c.get('deps');
  const decidedAt = new Date();
  await expireDue(deps.database, decidedAt.toISOString());
  const row = /^[0-9a-f-]{36}$/.test(id) ? await getApproval(deps.database.db, tenant, id) : undefined;
  if (!row) {
    await requireTenantExists(deps.database.db, tenant);
    throw new ApiError(404, 'not_found', `approval request ${id} does not exist`);
  }
  const decidedBy = actorName(actor);
  // The agent never approves itself: not the identity that asked (a token, a console session opened
  // with that token, or a person), whatever role it holds.
  if (row.requested_by === decidedBy) throw new ApiError(403, 'forbidden', 'Whoever asked for this approval may not decide it; another person must');
  refuseUnlessPerson(c, actor);
  refuseUnlessPending(row);

  let receipt: { payload: string; signature: string } | undefined;
  if (state === 'approved') {
    const validForSeconds = await publishedReceiptLifetime(deps.database.db, tenant, row.subject);
    const payload: ApprovalReceiptPayload = {
      format: APPROVAL_FORMAT,
      tenant,
      id: row.id,
      subject: row.subject,
      tool: row.tool,
      argumentsDigest: row.arguments_digest,
      approvedBy: decidedBy,
      approvedAt: decidedAt.toISOString(),
      expiresAt: new Date(decidedAt.getTime() + validForSeconds * 1000).toISOString(),
    };
    const bytes = canonicalJson(payload);
    const key = await deps.keys.signer();
    receipt = { payload: bytes, signature: await signApprovalReceipt(Buffer.from(bytes, 'utf8'), key) };
  }

  const updated = await withChange(c, body.reason, async (ch) => {
    const ok = await recordDecision(ch.tx, tenant, id, { state, decidedBy, decidedAt: decidedAt.toISOString(), reason: body.reason, receipt });
    if (!ok) {
      const now = await getApproval(ch.tx, tenant, id);
      refuseUnlessPending(now ?? row);
      throw new ApiError(409, 'conflict', `approval request ${id} was decided meanwhile`);
    }
    const after = (await getApproval(ch.tx, tenant, id))!;
    await ch.record({
      action: state === 'approved' ? 'approve' : 'refuse',
      entityType: 'approval',
      entityId: id,
      tenant,
      before: auditView(toApproval(row, false)),
      after: auditView(toApproval(after, false)),
    });
    return after;
  });
  deps.cluster.announce({ type: 'approval-decided', tenant, id });
  return c.json(toApproval(updated, false) satisfies Approval);
}

/**
 * With single sign-on configured, the server can tell a person from a credential: only a person
 * signed in through it decides. An API token (which an agent may hold), or a console session
 * opened with one, is refused. Without single sign-on every credential is a token and the
 * server cannot tell who holds it: admins' and editors' tokens decide (the CLI's way, DESIGN "CLI").
 */
function refuseUnlessPerson(c: Context<AppEnv>, actor: Actor): void {
  if (!approvalsNeedPerson(c.get('deps').config, actor)) return;
  throw new ApiError(
    403,
    'forbidden',
    'Approvals are given by a person signed in through single sign-on: an API token, which an agent may hold, or a console session opened with one, cannot approve or deny',
  );
}

/** Whether this actor's approval decisions are refused for not being a person (the console says why, from GET /v1/session). */
export function approvalsNeedPerson(config: { sso?: unknown }, actor: Actor): boolean {
  return Boolean(config.sso) && !actor.person;
}

function refuseUnlessPending(row: ApprovalRequestsRow): void {
  if (row.state === 'pending' && Date.parse(row.expires_at) <= Date.now())
    throw new ApiError(409, 'conflict', `approval request ${row.id} expired at ${row.expires_at}`);
  if (row.state !== 'pending') throw new ApiError(409, 'conflict', `approval request ${row.id} is already ${row.state}`);
}
