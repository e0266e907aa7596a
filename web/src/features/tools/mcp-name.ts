import type { Tool } from '../../../../policy-schemas/types.gen.ts';

/**
 * The name an imported tool has on its MCP server, when its id had to map it (or always, with
 * `always`). An id that is `mcp__<server>__<name>` already says the name, so the list leaves it out.
 */
export function mcpName(tool: Tool, always = false): string | null {
  const source = tool.source;
  if (source?.kind !== 'mcp' || source.originalName === undefined) return null;
  if (always) return source.originalName;
  return tool.id === `mcp__${source.server ?? ''}__${source.originalName}` ? null : source.originalName;
}
