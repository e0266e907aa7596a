import type { Tool } from '../../../../policy-schemas/types.gen.ts';

/**
 * Whether a tool matches the search text as `GET /v1/tools?q=` matches it (case-insensitive, in
 * its id, description or the name its MCP server gives it). The tools page narrows the page it
 * shows with it while the server's answer for the text just typed is on its way.
 */
export function matchesSearch(tool: Tool, text: string): boolean {
  const needle = text.toLowerCase();
  return (
    !needle ||
    tool.id.toLowerCase().includes(needle) ||
    tool.description.toLowerCase().includes(needle) ||
    (tool.source?.originalName?.toLowerCase().includes(needle) ?? false)
  );
}

/** How long the search box waits for a pause in typing before asking the server, ms. */
export const SEARCH_PAUSE_MS = 120;
