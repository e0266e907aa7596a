import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { noteCallArguments, unreadableArgumentsOf } from '../../gateway/call-arguments-text.ts';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { startStdioListener } from '../../gateway/stdio-listener.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { initializeRequest, legacyClient, MODERN_VERSION, modernClient, modernHeaders, postInitialize, SESSION_VERSION } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { listenOver, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// docs/spec.md R14.6: a tool call's arguments are I-JSON, judged on their text. The gateway parses
// whole MCP messages, whose parsed value no longer shows a big integer, an overflowing number, a
// repeated member name or (once passed on) a lone surrogate; so every way in (HTTP POSTs in both
// protocol eras, stdio lines in both) reads the arguments' text, and a call whose arguments are
// not I-JSON is refused `invalid_json` as a tool result, the upstream never called.

const state = upstreamFixtureState();
const KEY = 'ijson-client-0123456789';
const V = MODERN_VERSION;
const TOOL = 'mcp__rec__echo';

/** Arguments texts that are valid JSON but not I-JSON, each as a model (or a broken client) might send them. */
const NOT_I_JSON: Array<[string, string]> = [
  ['an integer beyond 2^53 − 1', '{"text":"a","n":9007199254740993}'],
  ['a negative integer beyond −(2^53 − 1)', '{"text":"a","n":-9007199254740992}'],
  ['a number that overflows a double', '{"text":"a","n":1e400}'],
  ['a member name twice', '{"text":"harmless","text":"other"}'],
  ['a member name twice, deep and escaped', '{"text":"a","x":[{"k":1,"\\u006b":2}]}'],
  ['an escaped lone surrogate', '{"text":"\\ud800"}'],
  ['a lone low surrogate in a member name', '{"text":"a","\\udc00":1}'],
];
/** Valid I-JSON that looks like the above to a careless reader. */
const I_JSON = '{"text":"9007199254740993 1e400 \\"text\\": \\ud83d\\ude00"}';

const upstreamCalls: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let sink: ReturnType<typeof scriptedGateway>['sink'];
let listener: HttpListener;

beforeAll(async () => {
  ({ gateway, sink } = scriptedGateway(mcpBundle('ijson', 1, 'rec', state), state, (_name, args) => {
    upstreamCalls.push(args);
    return { ok: true, result: { content: [{ type: 'text', text: `echo ${String(args.text)}` }] } };
  }));
  listener = await listenOver(gateway, { bot: KEY });
});
afterAll(async () => {
  await listener?.close();
  gateway?.close();
});
beforeEach(() => {
  upstreamCalls.length = 0;
});

type Answer = { jsonrpc: '2.0'; id: number | string; result?: Record<string, any>; error?: Record<string, any> };

/** The refusal every transport answers: a tool result, `_meta.toolgate` as for other refusals, recorded. */
function expectInvalidJson(answer: Answer | undefined, last = true): void {
  expect(answer?.error).toBeUndefined();
  expect(answer?.result).toMatchObject({
    isError: true,
    content: [{ type: 'text', text: expect.stringMatching(/^invalid_json: .*not I-JSON/) }],
    _meta: { toolgate: { decision: 'deny', errorCode: 'invalid_json', bundleVersion: 1 } },
  });
  if (last) expect(sink.records.at(-1)).toMatchObject({ tool: TOOL, decision: 'deny', errorCode: 'invalid_json' });
}

const callText = (id: number, args: string, extraParams = '') =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${TOOL}","arguments":${args}${extraParams}}}`;

describe('reading the arguments text out of a message', () => {
  it('notes the arguments of a tools/call that are not I-JSON, and nothing else', () => {
    for (const [, args] of NOT_I_JSON) {
      const text = callText(1, args);
      const body = JSON.parse(text);
      noteCallArguments(text, body);
      expect(unreadableArgumentsOf(body)).toBe(args);
    }
    for (const text of [
      callText(1, I_JSON),
      // Not the arguments: the rest of the message is the protocol's business.
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${TOOL}","arguments":{"text":"a"},"_meta":{"n":9007199254740993}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"a":1,"a":2}}}`,
      // The arguments JSON.parse hands over are the last of two; those are the ones judged.
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${TOOL}","arguments":{"n":1e400},"arguments":{"text":"a"}}}`,
    ]) {
      const body = JSON.parse(text);
      noteCallArguments(text, body);
      expect(unreadableArgumentsOf(body)).toBeUndefined();
    }
  });

  it('finds the arguments however the message is written: escaped names, strings holding brackets, spaces, batches', () => {
    const text = ` [ {"jsonrpc":"2.0","id":1,"method":"tools/list"} ,
      {"id" : 2, "params" : {"name":"x}]\\"{", "_meta":{"a":[1,{"b":"]"}]}, "argum\\u0065nts" : {"a":1,"a":2} }, "method":"tools\\/call", "jsonrpc":"2.0"},
      ${callText(3, I_JSON)} ]`;
    const body = JSON.parse(text);
    noteCallArguments(text, body);
    expect(body.map((m: object) => unreadableArgumentsOf(m))).toEqual([undefined, '{"a":1,"a":2}', undefined]);
  });
});

describe('HTTP, MCP 2025-11-25 (sessions)', () => {
  async function session(): Promise<(body: string) => Promise<Response>> {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await postInitialize(listener.url, KEY);
    expect(init.status).toBe(200);
    const sid = init.headers.get('mcp-session-id')!;
    return (body) => fetch(listener.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body });
  }

  it.each(NOT_I_JSON)('refuses %s as invalid_json and never calls the upstream', async (_why, args) => {
    const post = await session();
    expectInvalidJson(await (await post(callText(5, args))).json());
    expect(upstreamCalls).toEqual([]);
  });

  it('refuses it too in a request the SDK server would otherwise take (a progress token), and in a batch beside a good call', async () => {
    const post = await session();
    expectInvalidJson(await (await post(callText(6, '{"text":"a","n":1e400}', ',"_meta":{"progressToken":"p1"}'))).json());
    expect(upstreamCalls).toEqual([]);
    const batch = (await (await post(`[${callText(7, '{"text":"a","text":"b"}')},${callText(8, I_JSON)}]`)).json()) as Answer[];
    expect(batch.map((a) => a.id)).toEqual([7, 8]);
    expectInvalidJson(batch[0], false);
    expect(batch[1].result).toMatchObject({ content: [{ type: 'text', text: 'echo 9007199254740993 1e400 "text": 😀' }] });
    expect(upstreamCalls).toEqual([{ text: '9007199254740993 1e400 "text": 😀' }]);
  });

  it("keeps decide()'s order: a tool that does not exist is unavailable, whatever its arguments", async () => {
    const post = await session();
    const answer = (await (await post(callText(9, '{"n":1e400}').replace(TOOL, 'mcp__rec__nope'))).json()) as Answer;
    expect(answer.result?._meta?.toolgate).toMatchObject({ decision: 'deny', errorCode: 'unavailable' });
  });

  it('refuses what the 1.x SDK client writes from numbers and strings no I-JSON reader can take', async () => {
    const client = await legacyClient(listener.url, KEY);
    try {
      // JSON.stringify writes 2^60 as an integer literal, and a lone surrogate as its escape.
      for (const args of [{ text: 'a', n: 2 ** 60 }, { text: 'a\ud800' }]) {
        const result = await client.callTool({ name: TOOL, arguments: args });
        expect(result).toMatchObject({ isError: true, _meta: { toolgate: { errorCode: 'invalid_json' } } });
      }
      expect((await client.callTool({ name: TOOL, arguments: { text: 'fine' } })).isError).toBeFalsy();
      expect(upstreamCalls).toEqual([{ text: 'fine' }]);
    } finally {
      await client.close();
    }
  });
});

describe('HTTP, MCP 2026-07-28 (stateless)', () => {
  const meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{}}`;
  const post = (body: string) => fetch(listener.url, { method: 'POST', headers: modernHeaders(KEY, 'tools/call', TOOL), body });

  it.each(NOT_I_JSON)('refuses %s as invalid_json and never calls the upstream', async (_why, args) => {
    expectInvalidJson(await (await post(callText(5, args, meta))).json());
    expect(upstreamCalls).toEqual([]);
  });

  it('passes I-JSON arguments that only look like the refused ones', async () => {
    const answer = (await (await post(callText(6, I_JSON, meta))).json()) as Answer;
    expect(answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'echo 9007199254740993 1e400 "text": 😀' }] });
    expect(upstreamCalls).toHaveLength(1);
  });

  it('refuses what the 2.x SDK client writes from a number beyond 2^53', async () => {
    const client = await modernClient(listener.url, KEY);
    try {
      const result = await client.callTool({ name: TOOL, arguments: { text: 'a', n: 2 ** 60 } });
      expect(result).toMatchObject({ isError: true, _meta: { toolgate: { errorCode: 'invalid_json' } } });
      expect(upstreamCalls).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('stdio, both eras', () => {
  /** The stdio listener on in-memory streams: write lines, read the answers by id. */
  async function stdio() {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = new Map<number | string, Answer>();
    let rest = '';
    const waiting = new Map<number | string, (a: Answer) => void>();
    stdout.on('data', (chunk: Buffer) => {
      rest += chunk.toString('utf8');
      for (let end = rest.indexOf('\n'); end !== -1; end = rest.indexOf('\n')) {
        const message = JSON.parse(rest.slice(0, end)) as Answer;
        rest = rest.slice(end + 1);
        if (message.id === undefined || !('result' in message || 'error' in message)) continue;
        answers.set(message.id, message);
        waiting.get(message.id)?.(message);
      }
    });
    const listening = await startStdioListener(gateway, scriptedClient(), { stdin, stdout });
    const ask = (id: number, line: string) =>
      new Promise<Answer>((resolve) => {
        if (answers.has(id)) return resolve(answers.get(id)!);
        waiting.set(id, resolve);
        stdin.write(`${line}\n`);
      });
    return { ask, close: () => listening.close() };
  }

  it.each(NOT_I_JSON)('2025-11-25: refuses %s as invalid_json and never calls the upstream', async (_why, args) => {
    const { ask, close } = await stdio();
    try {
      const init = await ask(1, JSON.stringify(initializeRequest(SESSION_VERSION, {}, 1)));
      expect(init.result?.protocolVersion).toBe('2025-11-25');
      expectInvalidJson(await ask(2, callText(2, args)));
      expectInvalidJson(await ask(3, callText(3, args, ',"_meta":{"progressToken":3}')));
      expect(upstreamCalls).toEqual([]);
      expect((await ask(4, callText(4, I_JSON))).result?.isError).toBeFalsy();
      expect(upstreamCalls).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it.each(NOT_I_JSON)('2026-07-28: refuses %s as invalid_json and never calls the upstream', async (_why, args) => {
    const { ask, close } = await stdio();
    const meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{}}`;
    try {
      expectInvalidJson(await ask(7, callText(7, args, meta)));
      expect(upstreamCalls).toEqual([]);
      expect((await ask(8, callText(8, I_JSON, meta))).result).toMatchObject({ resultType: 'complete', content: [{ text: expect.stringMatching(/^echo /) }] });
    } finally {
      await close();
    }
  });

  it('answers a line that is not JSON with nothing and goes on reading', async () => {
    const { ask, close } = await stdio();
    try {
      const meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"${V}","io.modelcontextprotocol/clientCapabilities":{}}`;
      const answer = await ask(9, `{"jsonrpc":"2.0","id":99,"method":\n${callText(9, '{"text":"a","n":1e400}', meta)}`);
      expectInvalidJson(answer);
    } finally {
      await close();
    }
  });
});
