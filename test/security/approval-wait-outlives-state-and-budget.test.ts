import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApprovalHold, HoldOutcome, HoldRequest } from '../../gateway/approval-hold.ts';
import type { ResolvedClient } from '../../gateway/config.ts';
import type { Gateway } from '../../gateway/gateway.ts';
import type { BundleTool } from '../../policy-schemas/types.gen.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from '../gateway/mcp-bundle.ts';
import { scriptedGateway } from '../gateway/scripted-gateway.ts';

// The attack: a call that needs a person's approval waits minutes in the gateway. Meanwhile the
// same client's other calls move on: one moves the workflow state to where the held tool is not
// available, others spend the client's counting budget. When the person approves, the held call
// must be judged as things are then, not as they were when it started waiting.
const upstreamTools = [
  { name: 'wire', description: 'Sends money', inputSchema: { type: 'object', properties: { amount: { type: 'number' } } } },
  { name: 'finish', description: 'Closes the case', inputSchema: { type: 'object' } },
  { name: 'read', description: 'Reads a page', inputSchema: { type: 'object' } },
];

function bundle() {
  const b = mcpBundle('held-calls', 1, 'rec', { tools: upstreamTools });
  b.catalog.states = [
    { name: 'open', description: 'a case is open' },
    { name: 'closed', description: 'the case is closed' },
  ];
  const tool = (n: string) => b.catalog.tools.find((t) => t.id === `mcp__rec__${n}`) as BundleTool;
  tool('wire').effect = 'external_side_effect';
  tool('wire').availableInStates = ['open'];
  tool('finish').state = 'closed';
  b.policy.roles!.analyst.requireApproval = ['external_side_effect'];
  b.policy.budgets = { maxResultBytes: 400 };
  return b;
}

/** Holds every call until the test lets it go, then approves it as a person would. */
class HeldUntilReleased {
  held: Array<() => void> = [];
  async hold(_req: HoldRequest): Promise<HoldOutcome> {
    await new Promise<void>((resolve) => this.held.push(resolve));
    return { ok: true, by: 'person', approval: { redeem: () => ({ ok: true, id: 'approval-1', by: 'person' }) } };
  }
  releaseAll(): void {
    for (const r of this.held.splice(0)) r();
  }
}

const calls: string[] = [];
const gateways: Gateway[] = [];
function gatewayWith(hold: HeldUntilReleased, resultText = 'ok') {
  const { gateway } = scriptedGateway(
    bundle(),
    { tools: upstreamTools },
    (name) => {
      calls.push(name);
      return { ok: true, result: { content: [{ type: 'text', text: resultText }] } };
    },
    { approvals: hold as unknown as ApprovalHold },
  );
  gateways.push(gateway);
  return gateway;
}
afterAll(() => {
  for (const g of gateways) g.close();
});

const client: ResolvedClient = { name: 'bot', subject: MCP_BUNDLE_SUBJECT, keyDigest: null, request: { subject: MCP_BUNDLE_SUBJECT }, initialState: 'open' };
const code = (r: CallToolResult) => (r._meta?.toolgate as { errorCode?: string } | undefined)?.errorCode;
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

describe('a call held for approval', () => {
  it('is refused when the session moved to a state where its tool is not available meanwhile', async () => {
    const hold = new HeldUntilReleased();
    const gateway = gatewayWith(hold);
    const session = gateway.openSession(client);
    const held = gateway.call(session, { name: 'mcp__rec__wire', arguments: { amount: 10 } });
    await until(() => hold.held.length === 1);
    const finished = await gateway.call(session, { name: 'mcp__rec__finish', arguments: {} });
    expect(finished.isError).toBeFalsy();
    expect(session.state).toBe('closed');
    hold.releaseAll();
    const r = await held;
    expect(r.isError).toBe(true);
    expect(code(r)).toBe('policy_denied');
    expect(calls).not.toContain('wire');
  });

  it('is refused when the client spent its budget meanwhile', async () => {
    calls.length = 0;
    const hold = new HeldUntilReleased();
    const gateway = gatewayWith(hold, 'x'.repeat(300));
    const session = gateway.openSession(client);
    const held = gateway.call(session, { name: 'mcp__rec__wire', arguments: { amount: 10 } });
    await until(() => hold.held.length === 1);
    // Two reads of 300+ bytes: the second passes the 400-byte budget (refused after it ran, as budgets are).
    await gateway.call(session, { name: 'mcp__rec__read', arguments: {} });
    expect(code(await gateway.call(session, { name: 'mcp__rec__read', arguments: {} }))).toBe('budget_exceeded');
    hold.releaseAll();
    const r = await held;
    expect(code(r)).toBe('budget_exceeded');
    expect(calls).not.toContain('wire');
  });
});
