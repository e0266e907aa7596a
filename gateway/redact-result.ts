import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LoadedBundle } from '../runtime/load-bundle.ts';
import { redact } from '../runtime/redact.ts';

type Content = CallToolResult['content'][number];

/** Fields a content item of each type needs to be valid MCP; an item redacted below them is dropped. */
const REQUIRED: Record<string, string[]> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource: ['resource'],
  resource_link: ['uri', 'name'],
};

/**
 * An upstream's tool result as the client may see it: the tool's redaction allowlist applied to
 * the result object (paths such as `content[].text` or `structuredContent.items[].id`). Each
 * content item keeps its `type`; an item left without the fields its type needs is dropped, so
 * the answer stays valid MCP.
 */
export function redactResult(loaded: LoadedBundle, toolId: string, result: CallToolResult): CallToolResult {
  const content: Content[] = [];
  for (const item of result.content ?? []) {
    const kept = (redact(loaded, toolId, { content: [item] }) as { content?: unknown[] } | undefined)?.content?.[0];
    if (!kept || typeof kept !== 'object') continue;
    const type = (item as { type: string }).type;
    const candidate = { ...(kept as Record<string, unknown>), type } as Content;
    // The type is the upstream's text: only this table's own entries count (not `constructor`).
    if ((Object.hasOwn(REQUIRED, type) ? REQUIRED[type] : []).every((f) => (candidate as Record<string, unknown>)[f] !== undefined)) content.push(candidate);
  }
  const out: CallToolResult = { content };
  if (result.structuredContent !== undefined) {
    const kept = (redact(loaded, toolId, { structuredContent: result.structuredContent }) as { structuredContent?: unknown } | undefined)?.structuredContent;
    if (kept !== undefined && kept !== null && typeof kept === 'object' && !Array.isArray(kept)) out.structuredContent = kept as Record<string, unknown>;
  }
  if (result.isError === true) out.isError = true;
  return out;
}
