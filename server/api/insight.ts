import { type Context, Hono } from 'hono';
import { validate } from '../../policy-schemas/index.ts';
import type { SubjectOverview, ToolUsage } from '../../policy-schemas/types.gen.ts';
import { actorOf, authorize, permits } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { subjectIn, toolUsageIn } from '../insight/insight.ts';
import { toolStore } from '../store/inventory.ts';
import { listTenants } from '../store/tenants.ts';

/**
 * Read-only views across tenants for the console's tool and agent pages: `GET /v1/tools/:id/usage`
 * (mounted under `/v1/tools`) and `GET /v1/subjects/:subject` (under `/v1/subjects`). Each covers
 * only the tenants whose policy the caller may read, and decisions only where it may read them.
 */
export const toolUsageRoutes = new Hono<AppEnv>();
export const subjectRoutes = new Hono<AppEnv>();

/** The tenants whose policy the caller may read, each with whether it may read their decisions. */
async function readableTenants(c: Context<AppEnv>) {
  const actor = actorOf(c);
  const authorizer = c.get('deps').authorizer;
  const all = await listTenants(c.get('deps').database.db, actor.tenants);
  return all
    .filter((t) => permits(authorizer, actor, 'policy', 'read', t.id))
    .map((t) => ({ tenant: { id: t.id, name: t.name }, decisions: permits(authorizer, actor, 'decision', 'read', t.id) }));
}

toolUsageRoutes.get('/:id/usage', async (c) => {
  authorize(c, 'inventory', 'read');
  const id = c.req.param('id');
  const db = c.get('deps').database.db;
  if (!(await toolStore.get(db, id))) throw new ApiError(404, 'not_found', `tool ${id} does not exist`);
  const tenants: ToolUsage['tenants'] = [];
  for (const t of await readableTenants(c)) tenants.push(await toolUsageIn(c.get('deps').compiler, db, t.tenant, id, t.decisions));
  return c.json({ tool: id, tenants } satisfies ToolUsage);
});

subjectRoutes.get('/:subject', async (c) => {
  const subject = c.req.param('subject');
  if (!validate('common#/$defs/subject', subject).ok) {
    throw new ApiError(400, 'validation', `${JSON.stringify(subject)} is not a subject`, {
      errors: [{ pointer: '/path/subject', message: 'must be a subject such as agent:support-bot (no spaces, commas, quotes, parentheses, # or backslashes)' }],
    });
  }
  const db = c.get('deps').database.db;
  const tenants: SubjectOverview['tenants'] = [];
  for (const t of await readableTenants(c)) {
    const view = await subjectIn(c.get('deps').compiler, db, t.tenant, subject, t.decisions);
    if (view) tenants.push(view);
  }
  return c.json({ subject, tenants } satisfies SubjectOverview);
});
