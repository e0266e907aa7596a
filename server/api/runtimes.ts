import { Hono } from 'hono';
import type { RuntimeStatus } from '../../policy-schemas/types.gen.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { listRuntimes } from '../distribution/runtimes-store.ts';
import { droppedByRuntime } from '../decisions/decision-store.ts';
import { requireTenantExists } from '../store/tenants.ts';
import { readValid } from '../http/body.ts';

/**
 * `/v1/tenants/:tenant/runtimes`: runtimes report the bundle version they run and their health;
 * the list shows how far the fleet has converged. Reports are telemetry, not admin changes, so
 * they write no audit event.
 */
export const runtimeRoutes = new Hono<AppEnv>();

runtimeRoutes.post('/status', async (c) => {
  const tenant = c.req.param('tenant') ?? '';
  authorize(c, 'runtime', 'report', tenant);
  const body = await readValid<RuntimeStatus>(c, 'runtime-status');
  const { database, runtimeOwners, statusReports } = c.get('deps');
  await requireTenantExists(database.db, tenant);
  await runtimeOwners.claim(tenant, body.runtimeId, c.get('actor')!, '/runtimeId');
  statusReports.record(tenant, body, new Date().toISOString());
  return c.body(null, 204);
});

runtimeRoutes.get('/', async (c) => {
  const tenant = c.req.param('tenant') ?? '';
  authorize(c, 'runtime', 'read', tenant);
  const { database, statusReports } = c.get('deps');
  await requireTenantExists(database.db, tenant);
  await statusReports.flush();
  const latest = await c.get('deps').bundles.latest(tenant);
  const runtimes = await listRuntimes(database.db, tenant, latest?.version ?? null);
  const dropped = await droppedByRuntime(database.db, tenant);
  for (const r of runtimes) {
    const n = dropped.get(r.runtimeId);
    if (n !== undefined) r.decisionsDropped = n;
  }
  return c.json({ latest: latest ? { version: latest.version, revision: latest.revision } : null, runtimes });
});
