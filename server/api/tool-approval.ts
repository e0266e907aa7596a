import { Hono } from 'hono';
import { definitionHash as hashDefinition } from '../../runtime/definition-hash.ts';
import type { Tool, ToolApprove } from '../../policy-schemas/types.gen.ts';
import { withChange } from '../audit/change.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { readJson, takeReason, validOrThrow } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import { stripStored } from '../store/document-store.ts';
import { toolStore } from '../store/inventory.ts';
import { checkToolReferences } from '../validation/references.ts';

/**
 * `POST /v1/tools/:id/approve` `{ definitionHash, effect?, redaction?, groups?, reason? }`: the only
 * way an imported tool becomes active. The hash is the precondition (409 `definition_mismatch` when
 * the tool changed since it was reviewed) and `If-Match` names the version the reviewer saw. The
 * optional fields are the admin's decisions for the tool, applied in the same audited change.
 * Mounted under `/v1/tools`.
 */
export const toolApprovalRoutes = new Hono<AppEnv>();

toolApprovalRoutes.post('/:id/approve', async (c) => {
  authorize(c, 'inventory', 'write');
  const id = c.req.param('id');
  const expected = requiredIfMatch(c);
  const body = await readJson(c);
  const reason = takeReason(c, body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined);
  // Which fields the admin sent, read before validation fills in any schema default.
  const sent = new Set(body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : []);
  const approval = validOrThrow<ToolApprove>('tool-approve', body);
  const { definitionHash } = approval;

  const approved = await withChange(c, reason, async (ch) => {
    const tool = await toolStore.get(ch.tx, id);
    if (!tool) throw new ApiError(404, 'not_found', `tool ${id} does not exist`);
    checkVersion(expected, tool);
    if (tool.source?.kind !== 'mcp') {
      throw new ApiError(409, 'conflict', `tool ${id} was not imported from an MCP server; only imported tools are approved`);
    }
    const status = tool.status ?? 'active';
    if (status !== 'quarantined') {
      throw new ApiError(409, 'conflict', `tool ${id} is ${status}, not quarantined; there is nothing to approve`, {
        errors: [{ pointer: '/status', message: `is ${status}` }],
      });
    }
    if (definitionHash !== tool.definitionHash) {
      throw new ApiError(
        409,
        'definition_mismatch',
        `tool ${id} now has definition ${tool.definitionHash}, not the reviewed ${definitionHash}; review it again`,
        {
          errors: [{ pointer: '/definitionHash', message: `must be the tool's current definition hash ${tool.definitionHash}` }],
          extra: { expected: tool.definitionHash, got: definitionHash },
        },
      );
    }
    const stored = definitionHashOf(tool);
    if (stored !== tool.definitionHash) {
      const why = tool.review?.problems?.map((p) => ({ pointer: p.pointer, message: p.message })) ?? [];
      throw new ApiError(
        400,
        'validation',
        `tool ${id} cannot be approved: the definition its server offers cannot be stored in the inventory${why[0] ? ` (${why[0].pointer} ${why[0].message})` : ''}`,
        {
          errors: why.length ? why : [{ pointer: '/definitionHash', message: 'does not match the stored definition' }],
        },
      );
    }
    const before = stripStored(tool);
    const { review: _review, ...rest } = before;
    const after: Tool = { ...rest, status: 'active', source: { ...tool.source, approvedDefinitionHash: tool.definitionHash } };
    if (sent.has('effect') && approval.effect) after.effect = approval.effect;
    if (sent.has('redaction') && approval.redaction) after.redaction = approval.redaction;
    if (sent.has('groups') && approval.groups) after.groups = approval.groups;
    // The compiler's own rules, judged on the tool as it would become: an approved tool never blocks a publish.
    const problems = await checkToolReferences(ch.tx, after);
    if (problems.length > 0) {
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
      throw new ApiError(400, 'validation', `tool ${id} cannot be approved as its server offers it: ${problems[0].pointer} ${problems[0].message}${more}`, {
        errors: problems,
      });
    }
    const saved = await toolStore.update(ch.tx, id, after, tool.version, tool.createdAt, new Date().toISOString());
    if (!saved) throw changedMeanwhile(`tool ${id}`, await toolStore.get(ch.tx, id));
    await ch.record({ action: 'approve', entityType: 'tool', entityId: id, before, after });
    return saved;
  });
  c.header('ETag', etagOf(approved.version));
  return c.json(approved);
});

/** The hash of what the inventory holds for an imported tool (its server's name for it). */
function definitionHashOf(tool: Tool): string {
  return hashDefinition({
    name: tool.source?.originalName ?? tool.id,
    description: tool.description,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    outputSchema: tool.outputSchema as Record<string, unknown> | undefined,
  });
}
