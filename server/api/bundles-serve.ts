import { Hono } from 'hono';
import type { Context } from 'hono';
import { authorize } from '../auth/guard.ts';
import { requireStillAuthenticated } from '../auth/held-requests.ts';
import type { AppEnv } from '../context.ts';
import type { ServedBundle } from '../distribution/bundle-cache.ts';
import {
  MAX_WAIT_SECONDS,
  bundleEncoding,
  encodedBytes,
  bundleHeaders,
  clientHolds,
  heldVersion,
  parseIfNoneMatch,
  parseWait,
} from '../distribution/serving.ts';
import { ApiError } from '../errors.ts';
import { requireTenantExists } from '../store/tenants.ts';

/**
 * `/v1/tenants/:tenant/bundles/latest`, `…/:version` and `…/:version/signature`: the exact signed
 * bytes from memory with a precomputed ETag. `latest?wait=N` long-polls for a bundle whose ETag is
 * none of those in If-None-Match, or whose version is above the `Toolgate-Version` the client says
 * it holds. A token scoped to other tenants gets a 404, as if nothing existed.
 */
export const bundleServeRoutes = new Hono<AppEnv>();

bundleServeRoutes.get('/latest', async (c) => {
  const tenant = tenantOf(c);
  authorize(c, 'bundle', 'pull', tenant);
  const wait = parseWait(c.req.query('wait'));
  if (wait === undefined) {
    throw new ApiError(400, 'validation', `wait must be a whole number of seconds (at most ${MAX_WAIT_SECONDS} are used)`, {
      errors: [{ pointer: '/query/wait', message: 'is not a whole number of seconds' }],
    });
  }
  const cache = c.get('deps').bundles;
  const inm = parseIfNoneMatch(c.req.header('if-none-match'));
  let latest = await cache.latest(tenant);
  if (!latest) await requireTenantExists(c.get('deps').database.db, tenant);
  const held = heldVersion(c.req.header('toolgate-version'));
  const unchanged = (b: ServedBundle | undefined) => !b || clientHolds(b, inm, held);
  if (wait > 0 && unchanged(latest) && !(inm.any && latest)) {
    latest = await cache.waitForNewer(tenant, (b) => !unchanged(b), wait * 1000, c.req.raw.signal);
    // The token may have been revoked while the poll was held: the next bundle is not its to have.
    await requireStillAuthenticated(c);
  }
  if (!latest) throw new ApiError(404, 'not_found', `tenant ${tenant} has no published bundle yet`);
  const encoding = bundleEncoding(c.req.header('accept-encoding'));
  const h = bundleHeaders(latest, wait > 0 ? 'poll' : 'latest', encoding);
  if (unchanged(latest)) return c.body(null, 304, h.notModified);
  return c.body(encodedBytes(latest, encoding), 200, h.ok);
});

bundleServeRoutes.get('/:version{[0-9]+}', async (c) => {
  const b = await pinned(c);
  const encoding = bundleEncoding(c.req.header('accept-encoding'));
  const h = bundleHeaders(b, 'pinned', encoding);
  const inm = parseIfNoneMatch(c.req.header('if-none-match'));
  if (inm.any || inm.etags.has(b.etag)) return c.body(null, 304, h.notModified);
  return c.body(encodedBytes(b, encoding), 200, h.ok);
});

bundleServeRoutes.get('/:version{[0-9]+}/signature', async (c) => {
  const b = await pinned(c);
  const h = bundleHeaders(b, 'pinned', 'identity').notModified;
  return c.body(`${b.signature}\n`, 200, { ...h, vary: 'Authorization', 'content-type': 'text/plain; charset=utf-8' });
});

async function pinned(c: Context<AppEnv>): Promise<ServedBundle> {
  const tenant = tenantOf(c);
  authorize(c, 'bundle', 'pull', tenant);
  const version = Number(c.req.param('version'));
  const b = Number.isSafeInteger(version) ? await c.get('deps').bundles.version(tenant, version) : undefined;
  if (!b) throw new ApiError(404, 'not_found', `bundle version ${c.req.param('version')} of tenant ${tenant} does not exist`);
  return b;
}

function tenantOf(c: Context<AppEnv>): string {
  const tenant = c.req.param('tenant');
  if (!tenant) throw new ApiError(404, 'not_found', 'no tenant in the path');
  return tenant;
}
