import { CallToolRequestSchema, CallToolResultSchema, JSONRPCMessageSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { callToolResultSchema, isLeanListParams, isLeanResultResponse, isPlainCallToolResult, leanCallParams, leanRequest } from './lean-messages.ts';

// The cheap checks may only take what the SDK's schema takes and passes on unchanged; anything
// else must be left to the schema (so its answer, or its error, stays the SDK's).
const text = (t: string) => ({ type: 'text', text: t });

const requests: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', arguments: { x: 1 } } },
  { jsonrpc: '2.0', id: 'abc', method: 'tools/call', params: { name: 'a' } },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'c', _meta: { toolCallId: 'x' } } },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 1 } } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'a', _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } } },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'a', task: { ttl: 5 } } },
  { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 5 } },
  { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'a', arguments: [] } },
  { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'a', arguments: null } },
  { jsonrpc: '2.0', id: 10, method: 'tools/list', params: { cursor: 5 } },
  { jsonrpc: '2.0', id: 1.5, method: 'tools/list' },
  { jsonrpc: '2.0', id: 2 ** 60, method: 'tools/list' },
  { jsonrpc: '2.0', id: null, method: 'tools/list' },
  { jsonrpc: '1.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', extra: true },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: [] } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  [],
  null,
  'tools/list',
];

const results: unknown[] = [
  { content: [text('hi')] },
  { content: [text('a'), text('b')], isError: true },
  { content: [], structuredContent: { n: 1 }, _meta: { toolgate: { decision: 'allow' } } },
  { content: [text('a')], extra: { kept: true } },
  { content: [{ type: 'text', text: 'a', annotations: { priority: 0.5 } }] },
  { content: [{ type: 'text', text: 'a', unknown: 1 }] },
  { content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
  { content: [{ type: 'image', data: '%%%', mimeType: 'image/png' }] },
  { content: [{ type: 'text', text: 5 }] },
  { content: [{ type: 'bogus' }] },
  { content: 'text' },
  {},
  { content: [text('a')], isError: 'yes' },
  { content: [text('a')], structuredContent: [1] },
  { content: [text('a')], _meta: { progressToken: [] } },
  [],
  null,
];

describe('the cheap message checks', () => {
  it('accept a request only when the JSON-RPC schema accepts it unchanged', () => {
    for (const m of requests) {
      const lean = leanRequest(m);
      const parsed = JSONRPCMessageSchema.safeParse(m);
      if (lean) {
        expect(parsed.success, JSON.stringify(m)).toBe(true);
        expect(parsed.data).toEqual(m);
      }
    }
    expect(leanRequest(requests[0])).not.toBeNull();
    expect(leanRequest(requests[2])).not.toBeNull();
  });

  it('accept tools/call and tools/list params only as the SDK reads them, and leave progress tokens and tasks to the SDK', () => {
    for (const m of requests) {
      const lean = leanRequest(m);
      if (!lean) continue;
      if (lean.method === 'tools/call' && leanCallParams(lean.params)) {
        const parsed = CallToolRequestSchema.safeParse(m);
        expect(parsed.success, JSON.stringify(m)).toBe(true);
        expect(parsed.data?.params).toEqual(lean.params);
      }
      if (lean.method === 'tools/list' && isLeanListParams(lean.params)) {
        expect(ListToolsRequestSchema.safeParse(m).success, JSON.stringify(m)).toBe(true);
      }
    }
    const taken = requests.filter((m) => {
      const lean = leanRequest(m);
      return lean?.method === 'tools/call' && leanCallParams(lean.params);
    });
    expect(taken.map((m) => (m as { id: unknown }).id)).toEqual([1, 'abc']);
  });

  it('take a tool result by hand only when CallToolResultSchema would pass it unchanged, and give the schema the rest', () => {
    for (const r of results) {
      const parsed = CallToolResultSchema.safeParse(r);
      if (isPlainCallToolResult(r)) {
        expect(parsed.success, JSON.stringify(r)).toBe(true);
        expect(parsed.data).toEqual(r);
      }
      // The combined check answers exactly as the schema does.
      const combined = callToolResultSchema.safeParse(r);
      expect(combined.success, JSON.stringify(r)).toBe(parsed.success);
      if (combined.success) expect(combined.data).toEqual(parsed.data);
    }
    expect(isPlainCallToolResult(results[0])).toBe(true);
    // An unknown field of a content item is dropped by the schema: never taken by hand.
    expect(isPlainCallToolResult(results[5])).toBe(false);
    expect((callToolResultSchema.safeParse(results[5]) as { data: { content: unknown[] } }).data.content).toEqual([text('a')]);
  });

  it('take an upstream answer by hand only when the JSON-RPC schema accepts it unchanged', () => {
    const answers = [
      ...results.map((result, i) => ({ jsonrpc: '2.0', id: i, result })),
      { jsonrpc: '2.0', id: 1, result: {}, extra: 1 },
      { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
      { jsonrpc: '2.0', result: {} },
    ];
    let taken = 0;
    for (const m of answers) {
      if (!isLeanResultResponse(m)) continue;
      taken++;
      const parsed = JSONRPCMessageSchema.safeParse(m);
      expect(parsed.success, JSON.stringify(m)).toBe(true);
      expect(parsed.data).toEqual(m);
    }
    expect(taken).toBeGreaterThan(0);
  });
});
