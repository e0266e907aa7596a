import { Hono } from 'hono';
import type { McpServer, Tool } from '../../policy-schemas/types.gen.ts';
import { changeMetaOf, withChange } from '../audit/change.ts';
import { authorize } from '../auth/guard.ts';
import type { AppEnv } from '../context.ts';
import { ApiError, type ProblemDetail } from '../errors.ts';
import { takeReason } from '../http/body.ts';
import { changedMeanwhile, checkVersion, etagOf, requiredIfMatch } from '../http/versioning.ts';
import { mcpPolicyOf, syncMcpServer } from '../mcp/sync.ts';
import { transportProblems } from '../mcp/transport-policy.ts';
import { stripStored } from '../store/document-store.ts';
import { mcpServerStore, toolStore } from '../store/inventory.ts';
import { findSecrets } from '../validation/secrets.ts';
import { documentRoutes } from './document-routes.ts';

const crud = documentRoutes<McpServer>({
  kind: 'mcp-server',
  entityType: 'mcp-server',
  resource: 'mcp',
  store: mcpServerStore,
  readOnly: ['lastSync'],
  // lastSync belongs to the server: an edit keeps it.
  normalize: (doc, existing) => (existing?.lastSync ? { ...doc, lastSync: existing.lastSync } : doc),
  // Variables travel by name; a credential pasted into args or a URL is refused; so is a
  // transport the operator did not allow (checked again whenever it connects).
  check: async (_tx, doc, _existing, c) => {
    const secrets = findSecrets({ ...doc, lastSync: undefined });
    return [
      ...secrets,
      ...urlSecrets(doc).filter((p) => !secrets.some((s) => s.pointer === p.pointer)),
      ...transportProblems(doc.transport, mcpPolicyOf(c.get('deps').config)),
    ];
  },
});

const SECRET_PARAM = /token|secret|passw|api[_-]?key|apikey|auth|signature|sig$|key$/i;

/** Credentials carried in an HTTP transport's URL: user info, or secret-named query parameters. */
function urlSecrets(doc: McpServer): ProblemDetail[] {
  if (doc.transport.kind !== 'http') return [];
  let url: URL;
  try {
    url = new URL(doc.transport.url);
  } catch {
    return [];
  }
  const problems: ProblemDetail[] = [];
  const message = 'carries a credential; Toolgate never stores credentials';
  if (url.username || url.password) problems.push({ pointer: '/transport/url', message: `${message} (user info)`, code: 'secret_field' });
  for (const name of url.searchParams.keys()) {
    if (SECRET_PARAM.test(name)) problems.push({ pointer: '/transport/url', message: `${message} (query parameter "${name}")`, code: 'secret_field' });
  }
  return problems;
}

/**
 * `/v1/mcp-servers`: CRUD, and `POST /:id/sync`, which imports the server's tools quarantined.
 * A server that cannot be listed answers 502 `mcp_error` naming it; the inventory is unchanged.
 */
export const mcpServerRoutes = new Hono<AppEnv>();

mcpServerRoutes.post('/:id/sync', async (c) => {
  authorize(c, 'mcp', 'write');
  const id = c.req.param('id');
  const reason = takeReason(c);
  const outcome = await syncMcpServer(c.get('deps'), id, changeMetaOf(c, reason));
  if (!outcome.ok) {
    if (outcome.code === 'not_found') throw new ApiError(404, 'not_found', outcome.message);
    throw new ApiError(502, 'mcp_error', outcome.message, { extra: { server: id, lastSync: outcome.server.lastSync } });
  }
  c.header('ETag', etagOf(outcome.server.version));
  return c.json(outcome.server);
});

// Deleting a server is its tools vanishing: they are marked removed (and leave bundles), never deleted.
mcpServerRoutes.delete('/:id', async (c) => {
  authorize(c, 'mcp', 'write');
  const id = c.req.param('id');
  const expected = requiredIfMatch(c);
  const reason = takeReason(c);
  await withChange(c, reason, async (ch) => {
    const existing = await mcpServerStore.get(ch.tx, id);
    if (!existing) throw new ApiError(404, 'not_found', `mcp-server ${id} does not exist`);
    checkVersion(expected, existing);
    const now = new Date().toISOString();
    for (const tool of await toolStore.list(ch.tx)) {
      if (tool.source?.kind !== 'mcp' || tool.source.server !== id || tool.status === 'removed') continue;
      const before = stripStored(tool);
      const after: Tool = { ...before, status: 'removed' };
      if (!(await toolStore.update(ch.tx, tool.id, after, tool.version, tool.createdAt, now)))
        throw changedMeanwhile(`tool ${tool.id}`, await toolStore.get(ch.tx, tool.id));
      await ch.record({ action: 'update', entityType: 'tool', entityId: tool.id, before, after, reason: reason ?? `MCP server ${id} deleted` });
    }
    if (!(await mcpServerStore.remove(ch.tx, id, existing.version))) throw changedMeanwhile(`mcp-server ${id}`, await mcpServerStore.get(ch.tx, id));
    await ch.record({ action: 'delete', entityType: 'mcp-server', entityId: id, before: stripStored(existing), after: null });
  });
  return c.body(null, 204);
});

mcpServerRoutes.route('/', crud);
