import type { Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { ApiError, type ProblemDetail } from '../errors.ts';
import type { Stored } from '../store/document-store.ts';
import { toolStore } from '../store/inventory.ts';
import { testReferrersOf } from '../validation/policy-tests.ts';
import { checkToolReferences, referrersOf } from '../validation/references.ts';
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
    guardQuarantine(tool, existing);
    if (existing?.source?.kind === 'mcp') return keepImportedDefinition(tool, existing);
    const core: Tool = { ...tool, source: { kind: 'core' } };
    core.definitionHash = definitionHash({ name: tool.id, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema });
    return core;
  },
  check: async (tx, tool, existing) => {
    const problems: ProblemDetail[] = [];
    if (tool.status === 'removed')
      problems.push({ pointer: '/status', message: 'a tool is removed by deleting it (or by an MCP sync), not by setting its status' });
    problems.push(...(await checkToolReferences(tx, tool)));
    void existing;
    return problems;
  },
  checkDelete: async (tx, id) => [...(await referrersOf(tx, 'tool', id)), ...(await testReferrersOf(tx, id))],
});

/**
 * `quarantined` is left only through `POST /v1/tools/:id/approve`, whatever a PUT or PATCH says
 * (an omitted or nulled status reads as `active`, so it counts as leaving too). Only imported
 * tools can be approved, so a core tool is never put into quarantine.
 */
function guardQuarantine(tool: Tool, existing: Stored<Tool> | undefined): void {
  const status = tool.status ?? 'active';
  if (existing?.status === 'quarantined' && status !== 'quarantined') {
    throw new ApiError(
      409,
      'conflict',
      `tool ${tool.id} is quarantined; only POST /v1/tools/${tool.id}/approve takes it out of quarantine, after review of its definition`,
      {
        errors: [{ pointer: '/status', message: `must stay "quarantined" (was asked to be "${status}"); approve the tool instead` }],
      },
    );
  }
  if (status === 'quarantined' && existing?.status !== 'quarantined' && existing?.source?.kind !== 'mcp') {
    throw new ApiError(
      400,
      'validation',
      `tool ${tool.id} is not imported from an MCP server, so it could never be approved out of quarantine; disable it instead`,
      {
        errors: [{ pointer: '/status', message: 'only imported tools can be quarantined; use "disabled"' }],
      },
    );
  }
}

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
  if (tool.status === 'active' && existing.status === 'removed') {
    throw new ApiError(409, 'conflict', `Imported tool ${tool.id} was removed from its MCP server; a sync that finds it again quarantines it for review`, {
      errors: [{ pointer: '/status', message: 'an imported tool becomes active only through approval' }],
    });
  }
  if (tool.status === 'active' && existing.status === 'disabled' && existing.source?.approvedDefinitionHash !== existing.definitionHash) {
    throw new ApiError(409, 'conflict', `Imported tool ${tool.id} carries a definition no admin approved; approve it with POST /v1/tools/${tool.id}/approve`, {
      errors: [{ pointer: '/status', message: 'an imported tool becomes active only through approval' }],
    });
  }
  const out: Tool = { ...tool, source: existing.source, definitionHash: existing.definitionHash };
  if (existing.review) out.review = existing.review;
  return out;
}
