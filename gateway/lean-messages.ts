import { CallToolResultSchema, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * Exact, cheap checks for the JSON-RPC messages on the gateway's hot path (tools/call and
 * tools/list requests, their answers, the upstream's results). Each check accepts only a plain
 * common shape that the MCP SDK's zod schema also accepts and would pass on unchanged; anything
 * else (an unusual field, a progress token, a task, a wrong type) is left to the SDK's schema, so
 * what is accepted, what is refused and with which error stays the SDK's. The zod schemas cost
 * more than the gateway's own policy work per call; these checks cost a few property reads.
 */

/** A JSON-RPC request that passed the envelope check: its params still need their own check. */
export type LeanRequest = { jsonrpc: '2.0'; id: RequestId; method: string; params?: Record<string, unknown> };

export type LeanCallParams = { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || Number.isSafeInteger(v);
}

/** `_meta` absent, or an object without the keys the SDK acts on (progress, tasks). */
function plainMeta(v: unknown): boolean {
  return v === undefined || (isPlainObject(v) && v.progressToken === undefined && v[RELATED_TASK_META_KEY] === undefined);
}

/** A request as JSONRPCRequestSchema (strict) accepts it, in its plain form; null means "ask the schema". */
export function leanRequest(m: unknown): LeanRequest | null {
  if (!isPlainObject(m) || m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !isRequestId(m.id)) return null;
  for (const key in m) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return null;
  const params = m.params;
  if (params !== undefined && !(isPlainObject(params) && plainMeta(params._meta))) return null;
  return m as LeanRequest;
}

/** A successful answer as JSONRPCResultResponseSchema (strict) accepts it, in its plain form. */
export function isLeanResultResponse(m: unknown): boolean {
  if (!isPlainObject(m) || m.jsonrpc !== '2.0' || !isRequestId(m.id) || !isPlainObject(m.result) || !plainMeta(m.result._meta)) return false;
  for (const key in m) if (key !== 'jsonrpc' && key !== 'id' && key !== 'result') return false;
  return true;
}

/** tools/call params as CallToolRequestSchema reads them, without a task or a progress token. */
export function leanCallParams(params: Record<string, unknown> | undefined): LeanCallParams | null {
  if (!params || typeof params.name !== 'string' || params.task !== undefined) return null;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return null;
  return params as LeanCallParams;
}

/** tools/list params as ListToolsRequestSchema reads them (a cursor, when there is one, is judged by list-pages.ts). */
export function isLeanListParams(params: Record<string, unknown> | undefined): boolean {
  return params === undefined || params.cursor === undefined || typeof params.cursor === 'string';
}

/**
 * A tool result of text items only (each exactly `type` and `text`), as CallToolResultSchema
 * accepts it and returns it unchanged (content items with other fields are rebuilt by the schema).
 */
export function isPlainCallToolResult(v: unknown): v is CallToolResult {
  if (!isPlainObject(v) || !Array.isArray(v.content)) return false;
  if (v.isError !== undefined && typeof v.isError !== 'boolean') return false;
  if (v.structuredContent !== undefined && !isPlainObject(v.structuredContent)) return false;
  if (!plainMeta(v._meta)) return false;
  for (const item of v.content) {
    if (!isPlainObject(item) || item.type !== 'text' || typeof item.text !== 'string') return false;
    for (const key in item) if (key !== 'type' && key !== 'text') return false;
  }
  return true;
}

type ParseResult = { success: true; data: CallToolResult } | { success: false; error: unknown };

/**
 * CallToolResultSchema with the plain case checked by hand: the same answers, a fraction of the
 * cost. Shaped as a schema (`safeParse`) so the SDK's `request()` can take it as the result schema.
 */
export const callToolResultSchema = {
  safeParse(v: unknown): ParseResult {
    if (isPlainCallToolResult(v)) return { success: true, data: v };
    const parsed = CallToolResultSchema.safeParse(v);
    return parsed.success ? { success: true, data: parsed.data as CallToolResult } : { success: false, error: parsed.error };
  },
};
