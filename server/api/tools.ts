import type { Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import type { Tx } from '../db/database.ts';
import { ApiError, type ProblemDetail } from '../errors.ts';
import type { Stored } from '../store/document-store.ts';
import { toolStore } from '../store/inventory.ts';
import { checkInputSchema } from '../validation/input-schema.ts';
import { checkToolReferences } from '../validation/references.ts';
import { documentRoutes } from './document-routes.ts';

const SERVER_SET = ['source', 'definitionHash', 'review'];

/** `/v1/tools`: the inventory. Imported (MCP) tools keep their definition and review state. */
export const toolRoutes = documentRoutes<Tool>({
  kind: 'tool',
  entityType: 'tool',
  resource: 'inventory',
  store: toolStore,
  readOnly: SERVER_SET,
  normalize: (tool, existing) => {
    if (existing?.source?.kind === 'mcp') return keepImportedDefinition(tool, existing);
    const core: Tool = { ...tool, source: { kind: 'core' } };
    core.definitionHash = definitionHash({ name: tool.id, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema });
    return core;
  },
  check: async (tx, tool, existing) => {
    const problems: ProblemDetail[] = [];
    if (tool.source?.kind !== 'mcp') problems.push(...checkInputSchema(tool.inputSchema));
    if (tool.status === 'removed') problems.push({ pointer: '/status', message: 'a tool is removed by deleting it (or by an MCP sync), not by setting its status' });
    problems.push(...(await checkToolReferences(tx, tool)));
    void existing;
    return problems;
  },
  checkDelete: (tx, id) => referencesTo(tx, id),
});

/**
 * An imported tool's definition (description, schemas) is its server's; an edit may change
 * everything else. Activation goes through approval, which checks the reviewed definition.
 */
function keepImportedDefinition(tool: Tool, existing: Stored<Tool>): Tool {
  const changed = (['description', 'inputSchema', 'outputSchema'] as const).filter(
    (k) => JSON.stringify(tool[k] ?? null) !== JSON.stringify(existing[k] ?? null),
  );
  if (changed.length) {
    throw new ApiError(400, 'validation', `The definition of an imported tool comes from its MCP server; ${changed.join(', ')} cannot be edited`, {
      errors: changed.map((k) => ({ pointer: `/${k}`, message: 'is set by the MCP server' })),
    });
  }
  const wasQuarantined = (existing.status ?? 'active') !== 'active';
  if (tool.status === 'active' && wasQuarantined && existing.status !== 'disabled') {
    throw new ApiError(400, 'validation', `Imported tool ${tool.id} is ${existing.status}; approve it with POST /v1/tools/${tool.id}/approve`, {
      errors: [{ pointer: '/status', message: 'an imported tool becomes active only through approval' }],
    });
  }
  if (tool.status === 'active' && existing.status === 'disabled' && !existing.source?.approvedDefinitionHash) {
    throw new ApiError(400, 'validation', `Imported tool ${tool.id} was never approved; approve it first`, {
      errors: [{ pointer: '/status', message: 'an imported tool becomes active only through approval' }],
    });
  }
  const out: Tool = { ...tool, source: existing.source, definitionHash: existing.definitionHash };
  if (existing.review) out.review = existing.review;
  return out;
}

/** Policies, profiles and grants that name a tool exactly: deleting it would break them. */
async function referencesTo(tx: Tx, id: string): Promise<ProblemDetail[]> {
  const out: ProblemDetail[] = [];
  for (const p of await tx.selectFrom('tenant_policies').select(['tenant', 'body']).execute()) {
    const policy = JSON.parse(p.body) as import('../../policy-schemas/types.gen.ts').TenantPolicy;
    for (const [role, r] of Object.entries(policy.roles ?? {})) {
      if (r.allow?.includes(id) || r.deny?.includes(id)) out.push({ pointer: `/tenants/${p.tenant}/policy/roles/${role}`, message: `role ${role} of tenant ${p.tenant} names ${id}` });
    }
    for (const [name, prof] of Object.entries(policy.profiles ?? {})) {
      if (prof.enable?.includes(id) || prof.disable?.includes(id)) out.push({ pointer: `/tenants/${p.tenant}/policy/profiles/${name}`, message: `profile ${name} of tenant ${p.tenant} names ${id}` });
    }
  }
  for (const g of await tx.selectFrom('grants').select(['tenant', 'connection_id', 'body']).execute()) {
    if ((JSON.parse(g.body) as { tools: string[] }).tools.includes(id)) out.push({ pointer: `/tenants/${g.tenant}/grants/${g.connection_id}`, message: `grant ${g.connection_id} of tenant ${g.tenant} names ${id}` });
  }
  return out;
}
