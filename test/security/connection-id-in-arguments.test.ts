// Attack: put a `connectionId` inside a tool call's arguments, where an input schema leaves
// objects open, so the tool reads a connection that the runtime never checked against the grants
// (connections travel beside the arguments, and only there are they checked).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { Bundle, BundleTool, Tool } from '../../policy-schemas/types.gen.ts';
import { conformanceFailures } from '../../runtime/conformance.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { checkInputSchema } from '../../server/validation/input-schema.ts';
import { misreadingSubject } from '../conformance/misreadings.ts';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { mcpBundle } from '../gateway/mcp-bundle.ts';
import { scriptedClient, scriptedGateway } from '../gateway/scripted-gateway.ts';

// Schemas that save (none names connectionId), each leaving some object open.
const SCHEMAS: Record<string, Record<string, unknown>> = {
  core__send: { type: 'object', properties: { to: { type: 'string' } } },
  core__open: { type: 'object', additionalProperties: true, properties: { q: { type: 'string' } } },
  core__list: { type: 'object', additionalProperties: false, properties: { items: { type: 'array', items: { type: 'object' } } } },
  core__refs: { type: 'object', additionalProperties: false, $defs: { meta: { type: 'object' } }, properties: { meta: { $ref: '#/$defs/meta' } } },
};
const tools: Tool[] = Object.entries(SCHEMAS).map(([id, inputSchema]) =>
  tool(id, { inputSchema, ...(id === 'core__send' ? { requiresConnection: true } : {}) }),
);

function compiled(): Bundle {
  const r = compileBundle(
    snapshot({
      tools,
      policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
      grants: [{ connectionId: 'conn-mine', subjects: ['agent:a'], tools: ['core__send'] }],
    }),
    { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return JSON.parse(r.text) as Bundle;
}
const bundle = compiled();
const view = createView(loadBundle(bundle), { subject: 'agent:a', groups: ['*'] });
const call = (name: string, args: string | Record<string, unknown>) =>
  decide(view, { toolCallId: 'c1', name, arguments: args, ...(name === 'core__send' ? { connectionId: 'conn-mine' } : {}) });

const CASES: Array<[string, string, string | Record<string, unknown>, string]> = [
  ['at the top level, beside a granted connection (the report)', 'core__send', '{"to":"x","connectionId":"conn-other"}', '/connectionId'],
  ['in a nested object', 'core__send', '{"to":"x","options":{"retry":{"connectionId":"conn-other"}}}', '/options/retry/connectionId'],
  ['in an object inside an array', 'core__list', '{"items":[{"a":1},{"connectionId":"conn-other"}]}', '/items/1/connectionId'],
  ['with additionalProperties: true', 'core__open', '{"q":"x","connectionId":"conn-other"}', '/connectionId'],
  ['in an open object a $defs reference points at', 'core__refs', '{"meta":{"auth":{"connectionId":"conn-other"}}}', '/meta/auth/connectionId'],
  ['spelled with a JSON escape', 'core__open', '{"connection\\u0049d":"conn-other"}', '/connectionId'],
  ['in arguments handed over already parsed', 'core__send', { to: 'x', cc: [{ connectionId: 'conn-other' }] }, '/cc/0/connectionId'],
  ['with a null value', 'core__open', '{"connectionId":null}', '/connectionId'],
];

describe('a connectionId smuggled into arguments is refused', () => {
  it('saves every schema used here: the hole is at call time, not at save', () => {
    for (const [id, schema] of Object.entries(SCHEMAS)) expect(checkInputSchema(schema, ''), id).toEqual([]);
  });

  for (const [name, tool, args, pointer] of CASES) {
    it(`refuses it ${name}, naming the member but never its value`, () => {
      const d = call(tool, args);
      expect(d).toMatchObject({ toolCallId: 'c1', decision: 'deny', errorCode: 'validation' });
      expect(d.errors?.map((e) => e.pointer)).toContain(pointer);
      expect(JSON.stringify(d)).not.toContain('conn-other');
    });
  }

  it('still allows the same calls without the member', () => {
    expect(call('core__send', '{"to":"x","options":{"retry":{"times":2}}}').decision).toBe('allow');
    expect(call('core__list', '{"items":[{"a":1},{"connection":"c"}]}').decision).toBe('allow');
    expect(call('core__open', '{"q":"connectionId"}').decision).toBe('allow');
    expect(call('core__refs', '{"meta":{"auth":{"connectionIds":[]}}}').decision).toBe('allow');
  });

  it('ships a conformance vector, so a runtime that lets it through refuses the bundle', () => {
    const vector = bundle.conformance.find(
      (v) => v.rules.includes('R7.10') && 'call' in v && v.expect.decision === 'deny' && v.expect.pointers?.[0]?.endsWith('/connectionId'),
    );
    expect(vector).toBeDefined();
    const lenient = conformanceFailures(bundle.conformance, misreadingSubject(bundle, 'connection-member-ignored'));
    expect(lenient.flatMap((f) => f.rules)).toContain('R7.10');
    const topLevelOnly = conformanceFailures(bundle.conformance, misreadingSubject(bundle, 'connection-member-top-level-only'));
    expect(topLevelOnly.flatMap((f) => f.rules)).toContain('R7.10');
  });
});

describe('the gateway inherits the refusal', () => {
  // The fixture's echo tool, its schema opened in the bundle (the pin stays the upstream's own).
  const state = upstreamFixtureState();
  const b = mcpBundle('smuggle', 1, 'rec', state);
  const echo = b.catalog.tools.find((t) => t.id === 'mcp__rec__echo') as BundleTool;
  echo.inputSchema = { type: 'object', properties: { text: { type: 'string' } } };
  const forwarded: unknown[] = [];
  const { gateway } = scriptedGateway(b, state, (_name, args) => {
    forwarded.push(args);
    return { ok: true, result: { content: [{ type: 'text', text: 'done' }] } };
  });
  const client = scriptedClient();
  const session = gateway.openSession(client);
  const codeOf = (r: CallToolResult) => (r._meta as { toolgate: { errorCode?: string } }).toolgate.errorCode;

  it('answers validation for tools/call arguments holding a connectionId, and never forwards them', async () => {
    for (const args of [
      { text: 'a', connectionId: 'conn-other' },
      { text: 'a', more: [{ x: { connectionId: 'conn-other' } }] },
    ]) {
      const r = await gateway.call(session, { name: 'mcp__rec__echo', arguments: args });
      expect(codeOf(r)).toBe('validation');
      expect(JSON.stringify(r)).not.toContain('conn-other');
    }
    expect(forwarded).toEqual([]);
    const ok = await gateway.call(session, { name: 'mcp__rec__echo', arguments: { text: 'a', more: [{ x: 1 }] } });
    expect(codeOf(ok)).toBeUndefined();
    expect(forwarded).toHaveLength(1);
  });
});
