import { Hono } from 'hono';
import type { McpServer, Overview, TenantOverview, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { sha256Hex } from '../../runtime/sha256.ts';
import { actorOf } from '../auth/guard.ts';
import type { AppDeps, AppEnv } from '../context.ts';
import { tableFingerprint } from '../store/document-store.ts';
import type { DbOrTx } from '../db/database.ts';
import type { CompiledDraft } from '../compiler/draft.ts';
import { bundleRow, latestBundleHead } from '../store/bundles.ts';
import { listRuntimes } from '../distribution/runtimes-store.ts';
import { ApiError } from '../errors.ts';
import { nextTurn } from '../http/event-loop.ts';
import { cachedToolList, mcpServerStore } from '../store/inventory.ts';
import { getPolicy, listGrants, listTenants, tenantDocument } from '../store/tenants.ts';

const QUARANTINE_LISTED = 20;
const RUNTIMES_LISTED = 50;

/**
 * `GET /v1/overview`: the console's home and tenants list in one read. Each part follows the
 * caller's role: tenants in its scope, the review queue and MCP syncs only when it may read them.
 */
export const overviewRoutes = new Hono<AppEnv>();

overviewRoutes.get('/', async (c) => {
  const actor = actorOf(c);
  const deps = c.get('deps');
  const { database, authorizer } = deps;
  const db = database.db;
  const can = (resource: Parameters<typeof authorizer.can>[1]) => authorizer.can(actor.role, resource, 'read');
  if (!can('tenant')) throw new ApiError(403, 'forbidden', `role ${actor.role} may not read tenants`);
  await c.get('deps').statusReports.flush();

  const inventory = await inventoryMark(db);
  const tenants: TenantOverview[] = [];
  const staleRuntimes: Overview['attention']['runtimes'] = [];
  for (const t of await listTenants(db, actor.tenants)) {
    // One tenant at a time, with a turn of the event loop between: with thousands of tools each
    // tenant's draft takes milliseconds to read, and bundle pulls and /healthz must not wait for all.
    await nextTurn();
    const policy = tenantDocument<TenantPolicy>((await getPolicy(db, t.id))!);
    // The head only: the bundle's content (megabytes for thousands of tools) is read when its parts are not known yet.
    const latest = await latestBundleHead(db, t.id);
    const runtimes = can('runtime') ? await listRuntimes(db, t.id, latest?.version ?? null) : [];
    const onLatest = runtimes.filter((r) => latest && r.version === latest.version).length;
    const behind = runtimes.filter((r) => (r.behind ?? 0) > 0).length;
    const unhealthy = runtimes.filter((r) => r.health !== 'fresh').length;
    for (const r of runtimes) {
      if ((r.behind ?? 0) > 0 || r.health !== 'fresh') {
        staleRuntimes.push({
          tenant: t.id,
          runtimeId: r.runtimeId,
          version: r.version ?? null,
          behind: r.behind ?? null,
          health: r.health,
          lastError: r.lastError,
          reportedAt: r.reportedAt,
        });
      }
    }
    tenants.push({
      id: t.id,
      name: t.name,
      roles: Object.keys(policy.roles ?? {}),
      subjects: Object.keys(policy.bindings ?? {}),
      published: latest ? { version: latest.version, publishedAt: latest.published_at } : null,
      draft: await cachedDraftState(deps, db, t, policy, inventory, latest),
      fleet: { total: runtimes.length, onLatest, behind, unhealthy },
    });
  }

  await nextTurn();
  const tools = can('inventory') ? await cachedToolList(db) : [];
  const quarantined = tools.filter((t) => t.status === 'quarantined');
  const servers = can('mcp') ? await mcpServerStore.list(db) : [];
  const overview: Overview = {
    tenants,
    attention: {
      unpublished: tenants.filter((t) => t.draft.differs).map((t) => t.id),
      quarantined: { total: quarantined.length, tools: quarantined.slice(0, QUARANTINE_LISTED).map(queued) },
      failedSyncs: servers.filter((s) => s.lastSync && !s.lastSync.ok).map(failedSync),
      runtimes: staleRuntimes.slice(0, RUNTIMES_LISTED),
    },
  };
  return c.json(overview);
});

function queued(t: Tool): Overview['attention']['quarantined']['tools'][number] {
  return { id: t.id, ...(t.source?.server ? { server: t.source.server } : {}), changed: !!t.review?.previous };
}

function failedSync(s: McpServer): Overview['attention']['failedSyncs'][number] {
  return { server: s.id, label: s.label, at: s.lastSync!.at, error: s.lastSync!.error ?? 'failed' };
}

/** What every tenant's draft shares: the inventory, its groups and its states. */
async function inventoryMark(db: DbOrTx): Promise<string> {
  return `${await tableFingerprint(db, 'tools')}|${await tableFingerprint(db, 'groups')}|${await tableFingerprint(db, 'states')}`;
}

/** The draft state, computed again only when something a draft is made of, or the latest bundle, changed. */
async function cachedDraftState(
  deps: Pick<AppDeps, 'compiler' | 'overview'>,
  db: DbOrTx,
  tenant: { id: string; name: string },
  policy: TenantPolicy,
  inventory: string,
  latest: LatestHead,
): Promise<TenantOverview['draft']> {
  const grants = await listGrants(db, tenant.id);
  const key = sha256Hex(JSON.stringify([inventory, tenant.name, policy, grants, latest?.revision ?? null]));
  const hit = deps.overview.draftState(tenant.id, key);
  if (hit) return hit;
  const state = await draftState(deps, db, tenant.id, latest);
  deps.overview.rememberDraftState(tenant.id, key, state);
  return state;
}

type LatestHead = Awaited<ReturnType<typeof latestBundleHead>>;

/** Whether the draft compiles to other content than the latest bundle, and in which parts. */
async function draftState(
  { compiler, overview }: Pick<AppDeps, 'compiler' | 'overview'>,
  db: DbOrTx,
  tenant: string,
  latest: LatestHead,
): Promise<TenantOverview['draft']> {
  let draft: CompiledDraft;
  try {
    // A large draft compiles in the compiler's worker, so the overview's first computation after a
    // start or a draft change no longer holds other requests for the compile's duration.
    draft = await compiler.compileDraft(db, tenant);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'compile_error') return { differs: true, changes: [], compileError: err.message };
    throw err;
  }
  if (!latest) return { differs: true, changes: ['policy', 'grants', 'inventory'] };
  if (draft.revision === latest.revision) return { differs: false, changes: [] };
  // The published bundle is parsed and canonicalised by the compiler (in its worker when large); the
  // compiled draft's parts come from the texts the compiler wrote.
  const before = await overview.parts(latest.revision, async () => {
    const row = await bundleRow(db, tenant, latest.version);
    if (!row) throw new ApiError(409, 'conflict', `version ${latest.version} of ${tenant} was removed while the overview was read; ask again`);
    return compiler.bundleParts({ revision: row.revision, text: row.content });
  });
  await nextTurn();
  const now = await overview.parts(draft.revision, () => compiler.bundleParts(draft));
  const changes = (['policy', 'grants', 'inventory'] as const).filter((k) => before[k] !== now[k]);
  return { differs: true, changes: changes.length ? [...changes] : ['policy'] };
}
