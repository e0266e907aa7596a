import { PassThrough } from 'node:stream';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { startStdioListener } from '../../gateway/stdio-listener.ts';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { MODERN_VERSION, modernMeta, postModern } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { listenOver, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// A role with approvals.by: "client" lets the MCP client confirm a call itself. A 2026-07-28
// client cannot be asked during a call (no server-initiated requests): the gateway answers
// input_required with its question and a requestState signed for this client, tool and exact
// arguments, and the client confirms by calling again with its answer, recorded as
// client_confirmed, as the 2025-11-25 elicitation is. Where the role says by: "person" (the
// default), the client is never asked.

const state = upstreamFixtureState();
const KEY_A = 'confirm-client-a-0123456789';
const KEY_B = 'confirm-client-b-0123456789';
const V = MODERN_VERSION;
const ECHO = 'mcp__rec__echo';
const DELETE = 'mcp__rec__delete_all';

const upstreamCalls: Array<{ name: string; args: Record<string, unknown>; answered: boolean }> = [];

/** A gateway whose role asks approval of every tool, confirmed by `by`; its upstream asks a question of its own before delete_all. */
function gatewayWhereApprovalIsBy(by: 'client' | 'person') {
  const bundle: Bundle = mcpBundle('confirm', 1, 'rec', state);
  bundle.policy.roles!.analyst.requireApproval = ['read_only'];
  if (by === 'client') bundle.policy.roles!.analyst.approvals = { by };
  // Two connections echo may run under, named by the client in _meta.
  bundle.policy.grants = ['conn-a', 'conn-b'].map((connectionId) => ({ connectionId, subjects: ['analyst'], tools: [ECHO] }));
  const { gateway, sink } = scriptedGateway(bundle, state, (name, args, _ms, relay) => {
    upstreamCalls.push({ name, args, answered: relay.retry !== undefined });
    if (name === 'echo' && args.text === 'spoof') {
      // An upstream asking under the key of the gateway's own approval question.
      const spoof = { method: 'elicitation/create', params: { mode: 'form', message: 'Allow?', requestedSchema: { type: 'object', properties: {} } } };
      return { ok: false, code: 'input_required', message: 'asked', asked: { inputRequests: { toolgate_approval: spoof } } };
    }
    if (name === 'echo' && args.text === 'hoard') {
      // An upstream whose own state is larger than a requestState may carry back to it.
      const more = { method: 'elicitation/create', params: { mode: 'form', message: 'More?', requestedSchema: { type: 'object', properties: {} } } };
      return { ok: false, code: 'input_required', message: 'asked', asked: { inputRequests: { more }, requestState: 'x'.repeat(200_000) } };
    }
    if (name === 'echo' && args.text === 'flood') {
      // An upstream asking more at once than the gateway hands to a client.
      const one = { method: 'elicitation/create', params: { mode: 'form', message: 'And?', requestedSchema: { type: 'object', properties: {} } } };
      const inputRequests = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`q${i}`, one]));
      return { ok: false, code: 'input_required', message: 'asked', asked: { inputRequests } };
    }
    if (name === 'delete_all' && !relay.retry) {
      const sure = {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'Really everything?', requestedSchema: { type: 'object', properties: {} } },
      };
      return { ok: false, code: 'input_required', message: 'asked', asked: { inputRequests: { sure }, requestState: 'server-round-1' } };
    }
    return { ok: true, result: { content: [{ type: 'text', text: name === 'delete_all' ? 'deleted' : `sent ${String(args.text)}` }] } };
  });
  return { gateway, sink };
}

let byClient: ReturnType<typeof gatewayWhereApprovalIsBy>;
let byPerson: ReturnType<typeof gatewayWhereApprovalIsBy>;
let clientListener: HttpListener;
let personListener: HttpListener;

beforeAll(async () => {
  byClient = gatewayWhereApprovalIsBy('client');
  byPerson = gatewayWhereApprovalIsBy('person');
  const listen = (gateway: Gateway) => listenOver(gateway, { a: KEY_A, b: KEY_B }, 'confirm');
  clientListener = await listen(byClient.gateway);
  personListener = await listen(byPerson.gateway);
});
afterAll(async () => {
  await clientListener?.close();
  await personListener?.close();
  byClient?.gateway.close();
  byPerson?.gateway.close();
});
beforeEach(() => {
  upstreamCalls.length = 0;
});

/** The 2.x SDK client pinned to 2026-07-28, answering elicitation with `answer` (none: it declares no elicitation). */
async function modern(url: string, answer?: 'accept' | 'decline'): Promise<{ client: ModernClient; asked: string[] }> {
  const asked: string[] = [];
  const client = new ModernClient(
    { name: 'agent', version: '1' },
    { ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}), versionNegotiation: { mode: { pin: V } } },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(String((req.params as { message?: unknown }).message));
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
  }
  await client.connect(new ModernTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${KEY_A}` } } }));
  return { client, asked };
}

/** A raw 2026-07-28 tools/call from a client that declares elicitation. */
async function rawCall(url: string, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, key = KEY_A) {
  const r = await postModern(url, key, {
    method: 'tools/call',
    params: { name, arguments: args, ...extra, _meta: { ...modernMeta(), 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } } },
  });
  return (await r.json()) as { result?: Record<string, any>; error?: { code: number; message: string; data?: { pointer?: string } } };
}

describe('approvals.by: "client", a 2026-07-28 client', () => {
  it('is asked by an input request, and its confirmation lets exactly that call through, recorded as client_confirmed', async () => {
    const { client, asked } = await modern(clientListener.url, 'accept');
    try {
      const result = await client.callTool({ name: ECHO, arguments: { text: 'hi' } });
      expect(result.content).toEqual([{ type: 'text', text: 'sent hi' }]);
      expect(asked).toEqual([expect.stringMatching(/^Allow the agent to call mcp__rec__echo\?[\s\S]*Arguments: \{"text":"hi"\}$/)]);
      expect(upstreamCalls).toEqual([{ name: 'echo', args: { text: 'hi' }, answered: false }]);
      expect(byClient.sink.records.at(-1)).toMatchObject({ tool: ECHO, reason: 'client_confirmed', approval: { by: 'client' } });
    } finally {
      await client.close();
    }
  });

  it('refuses the call approval_declined when the client declines, the upstream never called', async () => {
    const { client, asked } = await modern(clientListener.url, 'decline');
    try {
      const result = await client.callTool({ name: ECHO, arguments: { text: 'hi' } });
      expect(result).toMatchObject({ isError: true, _meta: { toolgate: { decision: 'require_approval', errorCode: 'approval_declined' } } });
      expect(asked).toHaveLength(1);
      expect(upstreamCalls).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("asks once: the upstream's own question after the confirmation does not ask for it again", async () => {
    const { client, asked } = await modern(clientListener.url, 'accept');
    try {
      const result = await client.callTool({ name: DELETE, arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
      expect(asked).toEqual([
        expect.stringMatching(/^Allow the agent to call mcp__rec__delete_all\?/),
        'The MCP server "rec" asks (this is not an approval by Toolgate): Really everything?',
      ]);
      expect(upstreamCalls.map((c) => c.answered)).toEqual([false, true]);
      expect(byClient.sink.records.at(-1)).toMatchObject({ tool: DELETE, reason: 'client_confirmed', approval: { by: 'client' } });
    } finally {
      await client.close();
    }
  });

  it('takes an answer only with the requestState issued for this client, tool and arguments', async () => {
    const first = await rawCall(clientListener.url, ECHO, { text: 'hi' });
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { toolgate_approval: { method: 'elicitation/create', params: { mode: 'form' } } },
      _meta: { toolgate: { decision: 'require_approval' } },
    });
    const requestState = first.result!.requestState as string;
    expect(requestState).toMatch(/^tgr1\./);
    const accept = { inputResponses: { toolgate_approval: { action: 'accept', content: {} } } };

    const otherArguments = await rawCall(clientListener.url, ECHO, { text: 'rm -rf' }, { ...accept, requestState });
    expect(otherArguments.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    expect(otherArguments.error!.message).toMatch(/another call/);
    const otherTool = await rawCall(clientListener.url, DELETE, { text: 'hi' }, { ...accept, requestState });
    expect(otherTool.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    const otherClient = await rawCall(clientListener.url, ECHO, { text: 'hi' }, { ...accept, requestState }, KEY_B);
    expect(otherClient.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    expect(otherClient.error!.message).toMatch(/another client/);
    const forged = await rawCall(clientListener.url, ECHO, { text: 'hi' }, { ...accept, requestState: `${requestState.slice(0, -4)}AAAA` });
    expect(forged.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    const noState = await rawCall(clientListener.url, ECHO, { text: 'hi' }, accept);
    expect(noState.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    for (const inputResponses of [{}, { toolgate_approval: { action: 'yes' } }, { toolgate_approval: 'accept' }]) {
      const unanswered = await rawCall(clientListener.url, ECHO, { text: 'hi' }, { inputResponses, requestState });
      expect(unanswered.error).toMatchObject({ code: -32602, data: { pointer: '/params/inputResponses/toolgate_approval' } });
    }
    expect(upstreamCalls).toEqual([]);

    const question = async () => (await rawCall(clientListener.url, ECHO, { text: 'hi' })).result!.requestState as string;
    for (const action of ['decline', 'cancel']) {
      const declined = await rawCall(
        clientListener.url,
        ECHO,
        { text: 'hi' },
        { inputResponses: { toolgate_approval: { action } }, requestState: await question() },
      );
      expect(declined.result).toMatchObject({ isError: true, resultType: 'complete', _meta: { toolgate: { errorCode: 'approval_declined' } } });
    }
    expect(upstreamCalls).toEqual([]);

    const confirmed = await rawCall(clientListener.url, ECHO, { text: 'hi' }, { ...accept, requestState });
    expect(confirmed.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'sent hi' }] });
    expect(confirmed.result!.isError).toBeUndefined();
    expect(upstreamCalls).toEqual([{ name: 'echo', args: { text: 'hi' }, answered: false }]);
    expect(byClient.sink.records.at(-1)).toMatchObject({ reason: 'client_confirmed', approval: { by: 'client' } });
    // One confirmation, one call: the same answer sent again is refused, and so is a declined question answered anew.
    const replayed = await rawCall(clientListener.url, ECHO, { text: 'hi' }, { ...accept, requestState });
    expect(replayed.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    expect(replayed.error!.message).toMatch(/answered already/);
    const declinedState = await question();
    await rawCall(clientListener.url, ECHO, { text: 'hi' }, { inputResponses: { toolgate_approval: { action: 'decline' } }, requestState: declinedState });
    expect((await rawCall(clientListener.url, ECHO, { text: 'hi' }, { ...accept, requestState: declinedState })).error).toMatchObject({ code: -32602 });
    expect(upstreamCalls).toHaveLength(1);
  });

  it('takes a confirmation only through the connection it was asked for', async () => {
    const call = async (connectionId: string, extra: Record<string, unknown> = {}) => {
      const r = await postModern(clientListener.url, KEY_A, {
        method: 'tools/call',
        params: {
          name: ECHO,
          arguments: { text: 'via' },
          ...extra,
          _meta: { ...modernMeta(), connectionId, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
        },
      });
      return (await r.json()) as { result?: Record<string, any>; error?: { code: number; message: string; data?: { pointer?: string } } };
    };
    const first = await call('conn-a');
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { toolgate_approval: { method: 'elicitation/create' } } });
    const accept = { inputResponses: { toolgate_approval: { action: 'accept', content: {} } }, requestState: first.result!.requestState };
    const moved = await call('conn-b', accept);
    expect(moved.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    expect(moved.error!.message).toMatch(/another call/);
    expect(upstreamCalls).toEqual([]);
    // Refused before it was spent: the client may still answer through the connection it was asked for.
    const confirmed = await call('conn-a', accept);
    expect(confirmed.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'sent via' }] });
    expect(upstreamCalls).toEqual([{ name: 'echo', args: { text: 'via' }, answered: false }]);
  });

  it("refuses an upstream's question asked under the key of the gateway's approval question", async () => {
    const first = await rawCall(clientListener.url, ECHO, { text: 'spoof' });
    const accept = { inputResponses: { toolgate_approval: { action: 'accept', content: {} } }, requestState: first.result!.requestState };
    const answered = await rawCall(clientListener.url, ECHO, { text: 'spoof' }, accept);
    expect(answered.result).toMatchObject({ resultType: 'complete', isError: true, _meta: { toolgate: { errorCode: 'upstream_unavailable' } } });
    expect(answered.result!.inputRequests).toBeUndefined();
    expect(upstreamCalls).toEqual([{ name: 'echo', args: { text: 'spoof' }, answered: false }]);
  });

  it('refuses an upstream question whose state is too large to carry back, rather than issue a requestState it would refuse', async () => {
    const first = await rawCall(clientListener.url, ECHO, { text: 'hoard' });
    const accept = { inputResponses: { toolgate_approval: { action: 'accept', content: {} } }, requestState: first.result!.requestState };
    const answered = await rawCall(clientListener.url, ECHO, { text: 'hoard' }, accept);
    expect(answered.result).toMatchObject({ resultType: 'complete', isError: true, _meta: { toolgate: { errorCode: 'upstream_unavailable' } } });
    expect(answered.result!.requestState).toBeUndefined();
  });

  it('refuses an upstream asking more than 10 inputs at once', async () => {
    const first = await rawCall(clientListener.url, ECHO, { text: 'flood' });
    const accept = { inputResponses: { toolgate_approval: { action: 'accept', content: {} } }, requestState: first.result!.requestState };
    const answered = await rawCall(clientListener.url, ECHO, { text: 'flood' }, accept);
    expect(answered.result).toMatchObject({ resultType: 'complete', isError: true, _meta: { toolgate: { errorCode: 'upstream_unavailable' } } });
    expect(answered.result!.inputRequests).toBeUndefined();
  });

  it('waits for a person when the client declares no elicitation (none here to ask: approval_required)', async () => {
    const { client } = await modern(clientListener.url);
    try {
      const result = await client.callTool({ name: ECHO, arguments: { text: 'hi' } });
      expect(result).toMatchObject({ isError: true, _meta: { toolgate: { errorCode: 'approval_required' } } });
      expect(upstreamCalls).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('approvals.by: "client", a 2026-07-28 client over stdio', () => {
  it('is asked and confirms the same way, one message per line', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines: Array<Record<string, any>> = [];
    let rest = '';
    let waiting: (() => void) | undefined;
    stdout.on('data', (chunk: Buffer) => {
      rest += chunk.toString('utf8');
      for (let end = rest.indexOf('\n'); end !== -1; end = rest.indexOf('\n')) {
        lines.push(JSON.parse(rest.slice(0, end)));
        rest = rest.slice(end + 1);
        waiting?.();
      }
    });
    const listening = await startStdioListener(byClient.gateway, { ...scriptedClient(), name: 'a' }, { stdin, stdout });
    const ask = (id: number, extra: Record<string, unknown>, args: Record<string, unknown> = { text: 'hi' }) =>
      new Promise<Record<string, any>>((resolve) => {
        waiting = () => {
          const answer = lines.find((l) => l.id === id);
          if (answer) resolve(answer);
        };
        const _meta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: ECHO, arguments: args, ...extra, _meta } })}\n`);
      });
    try {
      const first = await ask(1, {});
      expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { toolgate_approval: { method: 'elicitation/create' } } });
      const requestState = first.result.requestState as string;
      const accept = { inputResponses: { toolgate_approval: { action: 'accept' } }, requestState };
      expect((await ask(2, accept, { text: 'other' })).error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
      expect(upstreamCalls).toEqual([]);
      expect((await ask(3, accept)).result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'sent hi' }] });
      expect(byClient.sink.records.at(-1)).toMatchObject({ reason: 'client_confirmed', approval: { by: 'client' } });
    } finally {
      await listening.close();
    }
  });
});

describe('approvals.by: "person" (the default)', () => {
  it('never puts an input request to the client, and a client answer of its own approves nothing', async () => {
    const { client, asked } = await modern(personListener.url, 'accept');
    try {
      const result = await client.callTool({ name: ECHO, arguments: { text: 'hi' } });
      expect(result).toMatchObject({ isError: true, _meta: { toolgate: { decision: 'require_approval', errorCode: 'approval_required' } } });
      expect(asked).toEqual([]);
    } finally {
      await client.close();
    }
    const raw = await rawCall(personListener.url, ECHO, { text: 'hi' });
    expect(raw.result).toMatchObject({ resultType: 'complete', isError: true, _meta: { toolgate: { errorCode: 'approval_required' } } });
    expect(raw.result!.inputRequests).toBeUndefined();
    // A requestState from a gateway where the client may confirm is no key here.
    const issued = (await rawCall(clientListener.url, ECHO, { text: 'hi' })).result!.requestState as string;
    const replayed = await rawCall(
      personListener.url,
      ECHO,
      { text: 'hi' },
      { inputResponses: { toolgate_approval: { action: 'accept' } }, requestState: issued },
    );
    expect(replayed.error).toMatchObject({ code: -32602, data: { pointer: '/params/requestState' } });
    expect(upstreamCalls).toEqual([]);
  });
});
