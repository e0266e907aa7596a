// Hand-made signed bundles whose tools are MCP tools pinned to what a fixture upstream offers.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { makeBundle, revisionOf } from '../distribution/signed-bundles.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';

/** The subject every tool of such a bundle is visible to. */
export const MCP_BUNDLE_SUBJECT = 'agent:support-bot';

/** A bundle for `tenant` whose catalog is `state`'s tools as `mcp__<server>__<name>`, all allowed to MCP_BUNDLE_SUBJECT. */
export function mcpBundle(tenant: string, version: number, server: string, state: UpstreamFixtureState, opts: { expiresAt?: string } = {}): Bundle {
  const b = makeBundle({ tenant, version, tools: state.tools.length, ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}) });
  const ids = state.tools.map((t) => `mcp__${server}__${t.name}`);
  const order = ids.map((id, i) => ({ id, i })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  b.catalog.tools = order.map(({ id, i }) => {
    const up = state.tools[i];
    return {
      ...b.catalog.tools[0],
      id,
      description: up.description ?? '',
      inputSchema: up.inputSchema,
      effect: 'read_only',
      redaction: { allow: ['content[].text'] },
      source: { kind: 'mcp', server, originalName: up.name },
      definitionHash: definitionHash(up),
    };
  });
  b.policy.roles = { analyst: { groups: ['default'], allow: [`mcp__${server}__*`], deny: [], requireApproval: [] } };
  b.casbin.policy = [['p', 'analyst', tenant, `mcp__${server}__*`, 'call', 'allow']];
  const loaded = loadBundle(b);
  // Partial vectors: which tools each request sees (the policy-test form of docs/spec.md §12).
  b.conformance = [{ subject: MCP_BUNDLE_SUBJECT }, { subject: 'agent:unknown' }].map((request) => ({
    rules: ['R6.1'],
    request,
    expect: { visible: evaluate(loaded, request).tools.map((t) => t.id) },
  }));
  b.revision = revisionOf(b);
  return b;
}

type SeedTool = { id: string; description: string; inputSchema: Record<string, unknown>; state?: string; availableInStates?: string[] };

/**
 * The demo seed's research → analysis → results workflow (server/seed/demo-data.json) served by an
 * MCP upstream named `rec`: `state` offers the seed tools `ids` (named without their `core__`
 * prefix), and `bundle` pins them with each tool's states as the seed gives them.
 */
export function seedWorkflow(ids: string[]): { state: UpstreamFixtureState; bundle(tenant: string, version: number): Bundle } {
  const demo = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'server', 'seed', 'demo-data.json'), 'utf8')) as {
    tools: SeedTool[];
    states: Array<{ name: string; description: string }>;
  };
  const seed = ids.map((id) => demo.tools.find((t) => t.id === id)!);
  const nameOf = (t: SeedTool) => t.id.slice('core__'.length);
  const state: UpstreamFixtureState = { tools: seed.map((t) => ({ name: nameOf(t), description: t.description, inputSchema: t.inputSchema })) };
  const bundle = (tenant: string, version: number) => {
    const b = mcpBundle(tenant, version, 'rec', state);
    b.catalog.states = demo.states;
    for (const t of seed) {
      const tool = b.catalog.tools.find((x) => x.id === `mcp__rec__${nameOf(t)}`) as BundleTool;
      if (t.state !== undefined) tool.state = t.state;
      if (t.availableInStates !== undefined) tool.availableInStates = t.availableInStates;
    }
    return b;
  };
  return { state, bundle };
}
