import { type Context, Hono } from 'hono';
import { approvalsNeedPerson } from './approvals.ts';
import type { PolicyTestFailure, PublishRequestCreate, PublishRequestDecision } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { actorMay } from '../auth/permissions.ts';
import { latestBundleHead } from '../store/bundles.ts';
import { changeMetaOf, withChange } from '../audit/change.ts';
import { actorOf, authorize } from '../auth/guard.ts';
import { publishBundle, staleRequest } from '../compiler/publish.ts';
import { checkPublishTests } from '../compiler/tests-gate.ts';
import { type AppEnv, actorName } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { readOptionalJson, takeReason, validOrThrow } from '../http/body.ts';
import {
  currentDraftRevision,
  decidePublishRequest,
  getPublishRequest,
  identitiesOf,
  isStale,
  listPublishRequests,
  openPublishRequest,
  publishTarget,
  toPublishRequest,
} from '../review/publish-requests.ts';
import { requireTenantExists } from '../store/tenants.ts';

/**
 * `GET /v1/tenants/:tenant/publish-requests` (`?status=`), `GET …/:id`, `POST …/:id/approve` and
 * `POST …/:id/reject`: publishes under review. Requests are opened by `POST …/bundles` when the
 * tenant's policy sets `review.publish: required`. Deciding needs the right to publish in the
 * tenant (admins, editors of the tenant) and another identity than the requester's.
 */
export const publishRequestRoutes = new Hono<AppEnv>();

const STATUSES = new Set(['pending', 'published', 'rejected']);

publishRequestRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'read', tenant);
  const db = c.get('deps').database.db;
  await requireTenantExists(db, tenant);
  const status = c.req.query('status');
  if (status !== undefined && !STATUSES.has(status)) {
    throw new ApiError(400, 'validation', `status ${status} is not pending, published or rejected`, {
      errors: [{ pointer: '/query/status', message: 'must be pending, published or rejected' }],
    });
  }
  const rows = await listPublishRequests(db, tenant, status);
  let draft: Promise<string | null> | undefined;
  const draftRevision = () => {
    draft ??= currentDraftRevision(c.get('deps').compiler, db, tenant);
    return draft;
  };
  const items = [];
  // The review material can be large (a decision per subject and tool): the list leaves it out.
  for (const r of rows) {
    const { diff: _d, impact: _i, tests: _t, ...listed } = toPublishRequest(r, await isStale(r, draftRevision));
    items.push(listed);
  }
  return c.json({ items });
});

publishRequestRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'publish', tenant);
  const body = await readOptionalJson(c);
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  const { rollbackTo, force } = validOrThrow<PublishRequestCreate>('publish-request-create', body ?? {});
  if (reason === null) {
    throw new ApiError(400, 'validation', 'A publish request needs a reason (body "reason" or the Toolgate-Reason header)', {
      errors: [{ pointer: '/reason', message: 'is required' }],
    });
  }
  const deps = c.get('deps');
  const db = deps.database.db;
  await requireTenantExists(db, tenant);
  const gate = await checkPublishTests(
    deps.compiler,
    db,
    tenant,
    { rollbackTo },
    { requested: !!force, allowed: actorMay(deps.authorizer, actorOf(c), 'bundle', 'force', tenant) },
  );
  const target = await publishTarget(deps.compiler, db, tenant, rollbackTo, gate.draft?.compiled);
  const latest = await latestBundleHead(db, tenant);
  if (latest?.revision === target.revision) {
    throw new ApiError(
      409,
      'conflict',
      `There is nothing to review: ${rollbackTo ? `v${rollbackTo}'s content` : 'the draft'} is what v${latest.version} already publishes`,
    );
  }
  return c.json(await openPublishRequest(deps, changeMetaOf(c, reason), tenant, target, gate.forced, actorOf(c).label), 202);
});

publishRequestRoutes.get('/:id', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'read', tenant);
  const db = c.get('deps').database.db;
  const r = await found(c.get('deps').database.db, tenant, c.req.param('id'));
  return c.json(toPublishRequest(r, await isStale(r, () => currentDraftRevision(c.get('deps').compiler, db, tenant))));
});

publishRequestRoutes.post('/:id/approve', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'publish', tenant);
  const reason = await decisionReason(c);
  const deps = c.get('deps');
  const r = await pendingOf(c, tenant, c.req.param('id'));
  const meta = changeMetaOf(c, reason ?? `approved publish request ${r.id}: ${r.reason}`);
  const review = { publishRequest: r.id, requestedBy: r.requested_by, approvedBy: meta.actor };
  // The tests run again on the reviewed content: one added since the request still guards it. An
  // admin's choice to publish past failures, made when asking, carries over.
  const rollbackTo = r.rollback_to ?? undefined;
  const { forced, testedRevision } = await checkPublishTests(
    deps.compiler,
    deps.database.db,
    tenant,
    { rollbackTo },
    { requested: r.forced !== null, allowed: true },
  );
  // The admin forced past the failures seen when asking, not past a test added since: a reviewer
  // who may not force publishes only past those.
  if (forced && r.forced !== null && !actorMay(deps.authorizer, actorOf(c), 'bundle', 'force', tenant)) {
    refuseNewFailures(forced.failures, JSON.parse(r.forced) as PolicyTestFailure[], r.id);
  }
  // The tests must have run on the reviewed content itself: a draft edited away and back around
  // them would ship content they never judged.
  if (rollbackTo === undefined && testedRevision !== undefined && testedRevision !== r.revision) throw staleRequest(tenant, r.id);
  const outcome = await publishBundle(
    deps,
    meta,
    tenant,
    {
      ...(r.rollback_to !== null ? { rollbackTo: r.rollback_to } : { reviewed: { requestId: r.id, content: r.content as string, revision: r.revision } }),
      ...(forced ? { forced } : {}),
      audit: { review },
      alongside: async (ch, published) => {
        await decidePublishRequest(ch, r, { status: 'published', version: published.version, reason, label: actorOf(c).label });
      },
    },
    deps.keys,
  );
  if (!outcome.created) {
    // The content is already the latest version (published meanwhile): the request is done with it.
    await withChange(c, reason, (ch) => decidePublishRequest(ch, r, { status: 'published', version: outcome.version, reason, label: actorOf(c).label }));
  }
  const after = (await getPublishRequest(deps.database.db, tenant, r.id))!;
  return c.json({ ...toPublishRequest(after, false), version: outcome.version, revision: outcome.revision });
});

publishRequestRoutes.post('/:id/reject', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'publish', tenant);
  const reason = await decisionReason(c);
  if (reason === null) {
    throw new ApiError(400, 'validation', 'A rejection needs a reason (body "reason" or the Toolgate-Reason header)', {
      errors: [{ pointer: '/reason', message: 'is required' }],
    });
  }
  const r = await pendingOf(c, tenant, c.req.param('id'));
  const after = await withChange(c, reason, (ch) => decidePublishRequest(ch, r, { status: 'rejected', reason, label: actorOf(c).label }));
  return c.json(toPublishRequest(after, false));
});

/**
 * Refuses (422 tests_failed, as a publish would) when the tests now fail in ways the admin who
 * asked did not force: a test added or changed since the request guards the reviewed content.
 */
function refuseNewFailures(now: PolicyTestFailure[], asked: PolicyTestFailure[], id: string): void {
  const known = new Set(asked.map((f) => canonicalJson(f)));
  const fresh = now.filter((f) => !known.has(canonicalJson(f)));
  if (fresh.length === 0) return;
  const more = fresh.length > 1 ? ` (and ${fresh.length - 1} more)` : '';
  throw new ApiError(
    422,
    'tests_failed',
    `Publish request ${id} was asked for past failing policy tests, and the tests now also fail in a way the admin did not force: ${fresh[0].message}${more}. An admin may approve it anyway.`,
    { errors: fresh.map((f) => ({ pointer: f.pointer, message: f.message, code: 'test_failed' })) },
  );
}

async function decisionReason(c: Context<AppEnv>): Promise<string | null> {
  const body = await readOptionalJson(c);
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  validOrThrow<PublishRequestDecision>('publish-request-decision', body ?? {});
  return reason;
}

async function found(db: DbOrTx, tenant: string, id: string) {
  await requireTenantExists(db, tenant);
  const r = await getPublishRequest(db, tenant, id);
  if (!r) throw new ApiError(404, 'not_found', `publish request ${id} of tenant ${tenant} does not exist`);
  return r;
}

/** The pending request a reviewer may decide: never one the reviewer asked for, under any of their names. */
async function pendingOf(c: Context<AppEnv>, tenant: string, id: string) {
  const db = c.get('deps').database.db;
  const r = await found(db, tenant, id);
  if (r.status !== 'pending') {
    throw new ApiError(409, 'conflict', `publish request ${id} is already ${r.status}${r.decided_by ? ` by ${r.decided_by}` : ''}`);
  }
  const actor = actorOf(c);
  // The same rule as for approvals: with single sign-on the server can tell a person from a token,
  // and a token (which an agent, or the person who asked, may hold) would make the review a formality.
  if (approvalsNeedPerson(c.get('deps').config, actor)) {
    throw new ApiError(
      403,
      'forbidden',
      'Publish requests are reviewed by a person signed in through single sign-on: an API token, or a console session opened with one, cannot approve or reject',
    );
  }
  const mine = identitiesOf(actorName(actor), actor.person?.email);
  const theirs = identitiesOf(r.requested_by, r.requested_by_email);
  if ([...mine].some((name) => theirs.has(name))) {
    throw new ApiError(403, 'forbidden', `${r.requested_by} asked for this publish; another person must review it`);
  }
  return r;
}
