import { definitionHash } from './definition-hash.ts';
import type { ToolDefinition } from './definition-hash.ts';
import type { LoadedBundle } from './load-bundle.ts';

export type DefinitionCheck =
  | { ok: true; definitionHash: string }
  | { ok: false; code: 'unavailable' | 'definition_mismatch'; message: string; expected?: string; actual?: string };

/**
 * Compares a live definition (e.g. what an MCP server's tools/list offers now) with the pin the
 * bundle carries; a changed definition must not be exposed until an admin approves it again.
 *
 * @example
 *   checkDefinition(loaded, 'mcp__github__get_issue', { name: 'get_issue', description, inputSchema })
 */
export function checkDefinition(loaded: LoadedBundle, toolId: string, live: ToolDefinition): DefinitionCheck {
  const tool = loaded.byId.get(toolId);
  if (!tool) return { ok: false, code: 'unavailable', message: `${toolId} is not in the bundle` };
  const actual = definitionHash(live);
  if (actual !== tool.definitionHash) {
    return {
      ok: false,
      code: 'definition_mismatch',
      message: `the definition of ${toolId} changed since it was approved`,
      expected: tool.definitionHash,
      actual,
    };
  }
  return { ok: true, definitionHash: actual };
}
