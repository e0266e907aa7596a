import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, acceptedContent, createMcpHandler, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { Upstream } from '../../gateway/upstream.ts';
import { modernClient, modernMeta, postModern } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { gatewayHolding, listenOver } from './scripted-gateway.ts';

// Towards upstreams too, the revision is chosen per server: an MCP server built on the official
// 2.x server SDK (@modelcontextprotocol/server, createMcpHandler) is discovered as 2026-07-28 and
// spoken to statelessly (every request with its _meta envelope and the Mcp-* headers, no
// initialize, no session), with the same pins and policy as a 2025-11-25 server.
const KEY = 'modern-upstream-client-key-0123';
const echoSchema = { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'], additionalProperties: false };

/** x-mcp-header is a 2026-07-28 extension keyword the SDK's JSON Schema type does not list. */
const regionSchema = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } },
  required: ['region'],
} as Parameters<typeof fromJsonSchema>[0];

let http: Server;
let url: string;
/** What the server received: each POST's JSON-RPC method and its headers. */
const seen: Array<{ method: string; headers: IncomingHttpHeaders; meta: Record<string, unknown> | undefined }> = [];

beforeAll(async () => {
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'modern-fixture', version: '1.0.0' });
      server.registerTool('echo', { description: 'Echoes the text back.', inputSchema: fromJsonSchema<{ text: string }>(echoSchema) }, async (args) => ({
        content: [{ type: 'text', text: `echo: ${args.text}` }],
        structuredContent: { text: args.text, secret: 'upstream-secret-value' },
      }));
      // Its region argument travels in the Mcp-Param-Region header too (x-mcp-header), which the SDK checks against the body.
      server.registerTool(
        'region',
        {
          description: 'Runs in a region.',
          inputSchema: fromJsonSchema<{ region: string; query?: string }>(regionSchema),
        },
        async (args) => ({ content: [{ type: 'text', text: `ran in ${args.region}` }] }),
      );
      // Asks for a confirmation by retry (2026-07-28 input_required) until it has one.
      server.registerTool(
        'confirm',
        { description: 'Deploys once confirmed.', inputSchema: fromJsonSchema<Record<string, never>>({ type: 'object', properties: {} }) },
        async (_args, ctx) => {
          const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
          if (answer?.confirm !== true) {
            return inputRequired({
              inputRequests: {
                confirm: inputRequired.elicit({ message: 'Deploy now?', requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } } }),
              },
            });
          }
          return { content: [{ type: 'text', text: 'deployed' }] };
        },
      );
      return server;
    }),
  );
  http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: { method?: string; params?: { _meta?: Record<string, unknown> } } | undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      seen.push({ method: String(body?.method), headers: req.headers, meta: body?.params?._meta });
      void handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  http?.closeAllConnections();
  await new Promise((r) => http?.close(r));
});

/** A gateway in front of `up` whose bundle pins what the server lists (as an import would), and a listener for the KEY client. */
async function gatewayInFrontOf(up: Upstream): Promise<{ gateway: Gateway; listener: HttpListener }> {
  const probe = await modernClient(url);
  const listed = (await probe.listTools()).tools;
  await probe.close();
  const bundle = mcpBundle('modern', 1, 'modern', {
    tools: listed.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> })),
  });
  const { gateway } = gatewayHolding(bundle, new Map([['modern', up]]), 5000);
  return { gateway, listener: await listenOver(gateway, { bot: KEY }) };
}

describe('an upstream that speaks MCP 2026-07-28', () => {
  let upstream: Upstream;
  let gateway: Gateway;
  let listener: HttpListener;

  afterAll(async () => {
    await listener?.close();
    gateway?.close();
    await upstream?.close();
  });

  it('is discovered as 2026-07-28 and listed without initialize or a session, every request carrying its envelope and headers', async () => {
    upstream = new Upstream('modern', { kind: 'http', url }, {});
    await upstream.start();
    expect(upstream.status()).toMatchObject({ state: 'ready', protocol: '2026-07-28', tools: 3 });
    const methods = seen.map((s) => s.method);
    expect(methods).toContain('server/discover');
    expect(methods).toContain('tools/list');
    expect(methods).not.toContain('initialize');
    for (const s of seen) {
      expect(s.headers['mcp-session-id']).toBeUndefined();
      expect(s.headers['mcp-protocol-version']).toBe('2026-07-28');
      expect(s.headers['mcp-method']).toBe(s.method);
      expect(s.meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
    }
  });

  it('serves its tools through the gateway under the same pins and redaction', async () => {
    ({ gateway, listener } = await gatewayInFrontOf(upstream));
    const client = await modernClient(listener.url, KEY);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['mcp__modern__confirm', 'mcp__modern__echo', 'mcp__modern__region']);
    const before = seen.length;
    const r = await client.callTool({ name: 'mcp__modern__echo', arguments: { text: 'hello' } });
    expect(r.content).toEqual([{ type: 'text', text: 'echo: hello' }]);
    expect(JSON.stringify(r)).not.toContain('upstream-secret-value');
    const call = seen.slice(before).find((s) => s.method === 'tools/call')!;
    expect(call.headers['mcp-name']).toBe('echo');
    expect(call.headers.authorization).toBeUndefined();
    // A refusal never reaches it.
    const refused = await client.callTool({ name: 'mcp__modern__echo', arguments: { text: 5 } });
    expect((refused._meta?.toolgate as { errorCode?: string } | undefined)?.errorCode).toBe('validation');
    expect(seen.slice(before).filter((s) => s.method === 'tools/call')).toHaveLength(1);
    // An x-mcp-header argument: the client mirrors it (checked by the gateway), the gateway mirrors it upstream (checked by the server).
    const ran = await client.callTool({ name: 'mcp__modern__region', arguments: { region: 'eu-west 1 ü' } });
    expect(ran.content).toEqual([{ type: 'text', text: 'ran in eu-west 1 ü' }]);
    const sent = seen.filter((s) => s.method === 'tools/call').at(-1)!;
    expect(sent.headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('eu-west 1 ü').toString('base64')}?=`);
    await client.close();

    // A client whose header says another region than its body is refused before anything is called.
    const callsBefore = seen.filter((s) => s.method === 'tools/call').length;
    const lying = await postModern(
      listener.url,
      KEY,
      { method: 'tools/call', params: { name: 'mcp__modern__region', arguments: { region: 'eu-west-1' }, _meta: modernMeta() } },
      { 'mcp-param-region': 'us-east-1' },
    );
    expect(lying.status).toBe(400);
    expect((await lying.json()).error).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Param-Region/) });
    // So is one whose header names a region while the call gives no arguments at all.
    const bare = await postModern(
      listener.url,
      KEY,
      { method: 'tools/call', params: { name: 'mcp__modern__region', _meta: modernMeta() } },
      { 'mcp-param-region': 'us-east-1' },
    );
    expect(bare.status).toBe(400);
    expect((await bare.json()).error).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Param-Region/) });
    expect(seen.filter((s) => s.method === 'tools/call').length).toBe(callsBefore);
  });
});

describe('an upstream that asks for input by retry (2026-07-28 input_required)', () => {
  it('puts the question to a 2025-11-25 session client that can be asked, then retries with the answer; a 2026-07-28 client is refused', async () => {
    const up = new Upstream('modern', { kind: 'http', url }, {});
    await up.start();
    const { gateway: gw, listener: own } = await gatewayInFrontOf(up);
    try {
      const legacy = new LegacyClient({ name: 'desk', version: '1' }, { capabilities: { elicitation: { form: {} } } });
      const asked: string[] = [];
      legacy.setRequestHandler(ElicitRequestSchema, (req) => {
        asked.push(String(req.params.message));
        return { action: 'accept', content: { confirm: true } };
      });
      await legacy.connect(new LegacyTransport(new URL(own.url), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
      const done = await legacy.callTool({ name: 'mcp__modern__confirm', arguments: {} });
      expect(done.content).toEqual([{ type: 'text', text: 'deployed' }]);
      expect(asked).toEqual(['The MCP server "modern" asks (this is not an approval by Toolgate): Deploy now?']);
      await legacy.close();

      // A 2026-07-28 client that cannot answer is told so; the upstream asked for what it could not give.
      const mute = await modernClient(own.url, KEY);
      const refused = await mute.callTool({ name: 'mcp__modern__confirm', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(refused.content).toEqual([{ type: 'text', text: expect.stringMatching(/^upstream_unavailable: .*did not declare/) }]);
      await mute.close();

      // One that declares elicitation gets the question as input_required and answers by calling again (the 2.x client does it itself).
      const modern = new ModernClient(
        { name: 'agent', version: '1' },
        { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      const modernAsked: string[] = [];
      modern.setRequestHandler('elicitation/create', async (req) => {
        modernAsked.push(String((req.params as { message?: unknown }).message));
        return { action: 'accept', content: { confirm: true } };
      });
      await modern.connect(new ModernTransport(new URL(own.url), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }));
      const confirmed = await modern.callTool({ name: 'mcp__modern__confirm', arguments: {} });
      expect(confirmed.content).toEqual([{ type: 'text', text: 'deployed' }]);
      expect(modernAsked).toEqual(['The MCP server "modern" asks (this is not an approval by Toolgate): Deploy now?']);
      await modern.close();

      // Answers reach the upstream only with the requestState this gateway issued for this very call.
      const callsBefore = seen.filter((x) => x.method === 'tools/call').length;
      const retry = async (extra: Record<string, unknown>, args: Record<string, unknown> = {}) => {
        const r = await postModern(own.url, KEY, {
          method: 'tools/call',
          params: {
            name: 'mcp__modern__confirm',
            arguments: args,
            ...extra,
            _meta: { ...modernMeta(), 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
          },
        });
        return r.json();
      };
      const first = await retry({});
      expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } });
      const issued = first.result.requestState as string;
      expect(issued).toMatch(/^tgr1\./);
      const answers = { inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } };
      for (const [extra, why] of [
        [answers, /requestState is not one this gateway issued/],
        [{ ...answers, requestState: 'forged-state' }, /not one this gateway issued/],
        [{ ...answers, requestState: `${issued.slice(0, -4)}AAAA` }, /signature does not verify/],
        [{ ...answers, requestState: issued, inputResponses: 'yes' }, /inputResponses must be an object/],
      ] as const) {
        const refusedRetry = await retry(extra);
        expect(refusedRetry.error.code).toBe(-32602);
        expect(refusedRetry.error.message).toMatch(why);
      }
      // Another call's arguments: the state does not carry over.
      expect((await retry({ ...answers, requestState: issued }, { other: 1 })).error.message).toMatch(/another call/);
      expect(seen.filter((x) => x.method === 'tools/call').length).toBe(callsBefore + 1);
      // The genuine retry goes through.
      expect((await retry({ ...answers, requestState: issued })).result.content).toEqual([{ type: 'text', text: 'deployed' }]);
    } finally {
      await own.close();
      gw.close();
      await up.close();
    }
  });
});

describe('a hostile 2026-07-28 upstream', () => {
  it('answering garbage or a result of the wrong shape is upstream_unavailable for that call, and is reconnected', async () => {
    const echo = { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object', properties: {} } };
    let calls = 0;
    const hostile = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params?: { name?: string } };
        const answer = (result: unknown) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
        };
        if (body.method === 'server/discover') return answer({ resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} } });
        if (body.method === 'tools/list') return answer({ resultType: 'complete', tools: [echo], ttlMs: 0, cacheScope: 'public' });
        calls++;
        if (calls === 1) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('Traceback (most recent call last): not JSON-RPC');
        }
        if (calls === 2) return answer({ resultType: 'complete', content: 'not a list' });
        return answer({ resultType: 'complete', content: [{ type: 'text', text: 'fine' }] });
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const failures: string[] = [];
    const up = new Upstream(
      'hostile',
      { kind: 'http', url: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/mcp` },
      { backoff: { initialMs: 50, maxMs: 100 }, onFailure: (_id, m) => failures.push(m) },
    );
    try {
      await up.start();
      expect(up.status()).toMatchObject({ state: 'ready', protocol: '2026-07-28' });
      expect(await up.call('echo', {}, 2000)).toMatchObject({ ok: false, code: 'upstream_unavailable' });
      await vi.waitFor(() => expect(up.isReady()).toBe(true), { timeout: 10_000 });
      expect(await up.call('echo', {}, 2000)).toMatchObject({ ok: false, code: 'upstream_unavailable' });
      await vi.waitFor(() => expect(up.isReady()).toBe(true), { timeout: 10_000 });
      expect(await up.call('echo', {}, 2000)).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'fine' }] } });
      expect(failures).toEqual([expect.stringContaining('not MCP'), 'answered a call with something that is not a tool result']);
      expect(up.status().restarts).toBe(2);
    } finally {
      await up.close();
      hostile.closeAllConnections();
      await new Promise((r) => hostile.close(r));
    }
  });
});
