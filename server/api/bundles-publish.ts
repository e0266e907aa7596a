import { Hono } from 'hono';
import type { Context } from 'hono';
import type { Bundle, BundlePublish } from '../../policy-schemas/types.gen.ts';
import { actorOf, authorize } from '../auth/guard.ts';
import { actorMay } from '../auth/permissions.ts';
import type { AppEnv } from '../context.ts';
import { changeMetaOf } from '../audit/change.ts';
import type { DbOrTx } from '../db/database.ts';
import { publishBundle } from '../compiler/publish.ts';
import { bundleRow, latestBundleHead, latestBundleRow, listBundleVersions } from '../store/bundles.ts';
import { openPublishRequest, publishTarget, reviewRequired } from '../review/publish-requests.ts';
import { checkPublishTests } from '../compiler/tests-gate.ts';
import { ApiError } from '../errors.ts';
import { readOptionalJson, takeReason, validOrThrow } from '../http/body.ts';
import { diffBundles } from '../policy-engine/diff.ts';
import type { DiffSide } from '../policy-engine/diff.ts';
import { requireTenantExists } from '../store/tenants.ts';

/**
 * `POST /v1/tenants/:tenant/bundles` (publish; roll back with `rollbackTo`; `refresh` re-issues
 * unchanged content with a new expiry), `GET …/bundles`
 * (versions with who, when, why and a summary) and `GET …/bundles/:a/diff/:b` (`a`, `b`: a
 * version, `latest` or `draft`).
 */
export const bundlePublishRoutes = new Hono<AppEnv>();

bundlePublishRoutes.post('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'publish', tenant);
  // The body may be omitted when the reason comes in the Toolgate-Reason header.
  const body = await readOptionalJson(c);
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  const { rollbackTo, refresh, force, emergency } = validOrThrow<BundlePublish>('bundle-publish', body);
  if (reason === null) {
    throw new ApiError(400, 'validation', 'A publish needs a reason (body "reason" or the Toolgate-Reason header)', {
      errors: [{ pointer: '/reason', message: 'is required' }],
    });
  }
  const deps = c.get('deps');
  await requireTenantExists(deps.database.db, tenant);
  const mayForce = actorMay(deps.authorizer, actorOf(c), 'bundle', 'force', tenant);
  if (emergency && !mayForce) {
    throw new ApiError(403, 'forbidden', 'Only an admin may publish in an emergency, past the review by a second person', {
      errors: [{ pointer: '/emergency', message: 'needs the admin role' }],
    });
  }
  const gate = await checkPublishTests(deps.compiler, deps.database.db, tenant, { rollbackTo }, { requested: !!force, allowed: mayForce });
  // Under review, new content becomes a publish request for another person (see review/).
  const underReview = await reviewRequired(deps.database.db, tenant);
  let unreviewed = gate;
  if (underReview && !emergency) {
    const target = await publishTarget(deps.compiler, deps.database.db, tenant, rollbackTo, gate.draft?.compiled);
    if ((await latestBundleHead(deps.database.db, tenant))?.revision !== target.revision) {
      return c.json(await openPublishRequest(deps, changeMetaOf(c, reason), tenant, target, gate.forced, actorOf(c).label), 202);
    }
    // Nothing to review because the draft equals the latest version: only that content may go out
    // now. A draft edited since this check (or since its tests ran) is refused, never published unreviewed.
    if (rollbackTo === undefined) {
      if (gate.testedRevision !== undefined && gate.testedRevision !== target.revision) throw draftChangedMeanwhile(tenant);
      unreviewed = { ...gate, testedRevision: target.revision };
    }
  }
  const audit = underReview && emergency ? { emergency: true } : undefined;
  const outcome = await publishBundle(deps, changeMetaOf(c, reason), tenant, { rollbackTo, refresh, ...unreviewed, audit }, deps.keys);
  return c.json({ version: outcome.version, revision: outcome.revision }, outcome.created ? 201 : 200);
});

function draftChangedMeanwhile(tenant: string): ApiError {
  return new ApiError(409, 'conflict', `The draft of ${tenant} changed while the publish was checked; publish again`);
}

bundlePublishRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'read', tenant);
  const db = c.get('deps').database.db;
  await requireTenantExists(db, tenant);
  return c.json({ items: await listBundleVersions(db, tenant) });
});

bundlePublishRoutes.get('/:a/diff/:b', async (c) => {
  const tenant = c.req.param('tenant') as string;
  authorize(c, 'bundle', 'read', tenant);
  const db = c.get('deps').database.db;
  await requireTenantExists(db, tenant);
  const from = await side(c, db, tenant, c.req.param('a'), 'a');
  const to = await side(c, db, tenant, c.req.param('b'), 'b');
  return c.json(await diffBundles(from, to, { casbin: true }));
});

async function side(c: Context<AppEnv>, db: DbOrTx, tenant: string, ref: string, which: 'a' | 'b'): Promise<DiffSide> {
  if (ref === 'draft') {
    authorize(c, 'simulate', 'run', tenant);
    return { version: 'draft', bundle: (await c.get('deps').compiler.compileDraft(db, tenant)).bundle };
  }
  if (ref !== 'latest' && !/^[1-9][0-9]{0,9}$/.test(ref)) {
    throw new ApiError(400, 'validation', `${ref} is not a version, "latest" or "draft"`, {
      errors: [{ pointer: `/path/${which}`, message: 'must be a version number, "latest" or "draft"' }],
    });
  }
  const row = ref === 'latest' ? await latestBundleRow(db, tenant) : await bundleRow(db, tenant, Number(ref));
  if (!row) throw new ApiError(404, 'not_found', `bundle version ${ref} of tenant ${tenant} does not exist`);
  return { version: row.version, bundle: JSON.parse(row.content) as Bundle };
}
