import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter } from '../../gateway/client-keys.ts';
import { type ResolvedConfig, loadGatewayConfig } from '../../gateway/config.ts';
import type { Gateway } from '../../gateway/gateway.ts';
import { type HttpListener, startHttpListener } from '../../gateway/http-listener.ts';
import { createGatewayMetrics } from '../../gateway/metrics.ts';
import { OAuthResourceServer } from '../../gateway/oauth-resource-server.ts';
import { Upstream } from '../../gateway/upstream.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { freePort } from '../support/free-port.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from './mcp-bundle.ts';
import { gatewayHolding } from './scripted-gateway.ts';
import { postInitialize } from './era-clients.ts';
import { startResourceProvider } from './oauth-provider.ts';

// Issue 31.5: the gateway as an OAuth 2.1 resource server, against a real authorization server
// (oidc-provider issuing JWT access tokens for resource indicators). Each assistant signs in with
// an identity of its own; its token's claims pick its client; the token never leaves the gateway.
const KEY = 'static-client-key-0123456789';
const OTHER_RESOURCE = 'https://other-api.example.com/';
const ALLOWANCE = 12;

type Provider = Awaited<ReturnType<typeof startResourceProvider>>;

let dir: string;
let provider: Provider;
let stranger: Provider;
let upstreamServer: Server;
/** The headers of every request the HTTP upstream received. */
const upstreamSaw: IncomingHttpHeaders[] = [];
let upstream: Upstream;
let gateway: Gateway;
let listener: HttpListener;
let resource: string;
let deadIssuer: string;
/** The failure limiter's clock, moved on to give the address a fresh allowance (tokens are judged on the real clock). */
let clock = Date.now();
const limiter = new FailureLimiter(ALLOWANCE, () => clock);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-oauth-'));
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  deadIssuer = `http://127.0.0.1:${await freePort()}`;
  const clients = [
    { id: 'assistant-ana', groups: ['research'] },
    { id: 'assistant-bo', groups: ['finance'] },
    { id: 'assistant-cy', groups: ['marketing'] },
  ];
  provider = await startResourceProvider({ clients, resources: [resource, OTHER_RESOURCE] });
  // Another organisation's provider, not configured at the gateway, issuing for the same resource.
  stranger = await startResourceProvider({ clients, resources: [resource] });

  const state = upstreamFixtureState();
  upstreamServer = await startRecordingUpstream(state.tools);
  const upstreamUrl = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}/mcp`;

  const config = await configFrom({
    listen: { http: { port } },
    clients: [
      { name: 'static-bot', key: KEY, subject: MCP_BUNDLE_SUBJECT },
      { name: 'research-bot', subject: MCP_BUNDLE_SUBJECT },
      { name: 'finance-bot', subject: 'agent:finance' },
    ],
    auth: {
      oauth: {
        resource,
        issuers: [{ issuer: provider.issuer }, { issuer: deadIssuer }],
        clients: [
          { issuer: provider.issuer, claim: 'groups', value: 'research', client: 'research-bot' },
          { issuer: provider.issuer, claim: 'sub', value: 'assistant-bo', client: 'finance-bot' },
        ],
      },
    },
    upstreams: { rec: { kind: 'http', url: upstreamUrl } },
  });
  if (!config.ok) throw new Error(JSON.stringify(config.problems));

  upstream = new Upstream('rec', { kind: 'http', url: upstreamUrl }, { relistMs: 60_000 });
  await upstream.start();
  ({ gateway } = gatewayHolding(mcpBundle('oauth', 1, 'rec', state), new Map([['rec', upstream]]), 5000));
  const c = config.config;
  if (c.listen.kind !== 'http' || !c.oauth) throw new Error('expected an HTTP listener with OAuth');
  listener = await startHttpListener({
    listen: c.listen,
    clients: c.clients,
    metricsKeyDigest: null,
    gateway,
    metrics: createGatewayMetrics(),
    health: () => ({ status: 'ok' }),
    limiter,
    oauth: new OAuthResourceServer(c.oauth, { listenPath: c.listen.path }),
  });
});

afterAll(async () => {
  await listener?.close();
  gateway?.close();
  await upstream?.close();
  await new Promise<void>((r) => (upstreamServer ? upstreamServer.close(() => r()) : r()));
  await provider?.close();
  await stranger?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A gateway configuration file with a control section that is never contacted here, loaded as `toolgate gateway` loads it. */
async function configFrom(rest: Record<string, unknown>): Promise<Awaited<ReturnType<typeof loadGatewayConfig>>> {
  const { publicKey } = await generateKeyPair('ES256');
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256' }] }));
  const file = join(dir, `gateway-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(
    file,
    JSON.stringify({ control: { url: 'http://127.0.0.1:9', tenant: 'oauth', token: 'runtime-token', jwksFile: 'jwks.json', cacheDir: 'cache' }, ...rest }),
  );
  return loadGatewayConfig(file, {});
}

/** An MCP server over streamable HTTP (stateless, JSON answers) that keeps the headers of every request it receives. */
async function startRecordingUpstream(tools: ReturnType<typeof upstreamFixtureState>['tools']): Promise<Server> {
  const server = createServer(async (req, res) => {
    upstreamSaw.push({ ...req.headers });
    const mcp = new McpServer({ name: 'recording', version: '1' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    mcp.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: 'text', text: `echo: ${String(r.params.arguments?.text)}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return server;
}

const rpc = (credential: string | null) => postInitialize(listener.url, credential);

async function legacyClient(credential: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'assistant', version: '1' });
  await client.connect(new LegacyTransport(new URL(listener.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
  return client;
}

async function modernClient(credential: string): Promise<ModernClient> {
  const client = new ModernClient({ name: 'assistant', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(listener.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
  return client;
}

/** The status and challenge a credential gets, the body read. */
async function refusal(credential: string | null): Promise<{ status: number; challenge: string | null }> {
  const r = await rpc(credential);
  await r.text();
  return { status: r.status, challenge: r.headers.get('www-authenticate') };
}

/** The provider's token with some claims changed, signed again with the provider's own published key. */
async function reissued(change: Record<string, unknown>, how: Parameters<Provider['sign']>[1] = {}): Promise<string> {
  const claims = decodeJwt(await provider.token('assistant-ana', resource));
  return provider.sign({ ...claims, ...change }, how);
}

describe('the gateway as an OAuth resource server', () => {
  it('publishes its protected resource metadata (RFC 9728) at the root and the resource-suffixed well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const r = await fetch(new URL(path, listener.url));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json');
      const doc = (await r.json()) as Record<string, unknown>;
      expect(doc.resource).toBe(resource);
      expect(doc.authorization_servers).toEqual([provider.issuer, deadIssuer]);
      expect(doc.bearer_methods_supported).toEqual(['header']);
    }
    expect((await fetch(new URL('/.well-known/oauth-protected-resource/elsewhere', listener.url))).status).toBe(404);
  });

  it('answers a request with no credential 401 with resource_metadata in the challenge, without holding it against the address', async () => {
    for (let i = 0; i < ALLOWANCE * 2; i++) {
      const r = await refusal(null);
      expect(r.status).toBe(401);
      expect(r.challenge).toBe(`Bearer resource_metadata="${new URL(listener.url).origin}/.well-known/oauth-protected-resource/mcp"`);
    }
    expect((await refusal(KEY)).status).toBe(200);
  });

  it("takes the provider's access token for this resource: the mapped client's tools and calls, through clients of both eras", async () => {
    const token = await provider.token('assistant-ana', resource);
    const legacy = await legacyClient(token);
    expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('mcp__rec__echo');
    const r = (await legacy.callTool({ name: 'mcp__rec__echo', arguments: { text: 'hi' } })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(r.isError).toBeFalsy();
    expect(r.content[0].text).toBe('echo: hi');
    await legacy.close();

    const modern = await modernClient(token);
    const listed = await modern.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('mcp__rec__echo');
    const m = await modern.callTool({ name: 'mcp__rec__echo', arguments: { text: 'again' } });
    expect((m.content as Array<{ text: string }>)[0].text).toBe('echo: again');
    await modern.close();
  });

  it('maps each token to its own client by its claims: another assistant is another client, with what its subject may see', async () => {
    const finance = await legacyClient(await provider.token('assistant-bo', resource));
    // finance-bot's subject is granted nothing in this bundle.
    expect((await finance.listTools()).tools).toEqual([]);
    await finance.close();
  });

  it('keeps static keys working alongside tokens', async () => {
    const c = await legacyClient(KEY);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('mcp__rec__echo');
    await c.close();
  });

  it("never sends the client's token or key upstream", async () => {
    const token = await provider.token('assistant-ana', resource);
    upstreamSaw.length = 0;
    const c = await legacyClient(token);
    await c.callTool({ name: 'mcp__rec__echo', arguments: { text: 'secret-path' } });
    await c.close();
    expect(upstreamSaw.length).toBeGreaterThan(0);
    for (const headers of upstreamSaw) {
      expect(headers.authorization).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain(token);
      expect(JSON.stringify(headers)).not.toContain(token.split('.')[2]);
    }
  });

  describe('refuses, 401 invalid_token, a token that is not good for this resource', () => {
    const cases: Array<[string, () => Promise<string>]> = [
      ['a token the provider issued for another resource (RFC 8707 audience)', () => provider.token('assistant-ana', OTHER_RESOURCE)],
      ['a token from an issuer that is not configured', () => stranger.token('assistant-ana', resource)],
      ['an expired token', () => reissued({ iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })],
      ['a token not valid yet', () => reissued({ nbf: Math.floor(Date.now() / 1000) + 3600 })],
      ['a token without an expiry', () => reissued({ exp: undefined })],
      ['a token signed by a key the provider never published, under its kid', () => reissued({}, { by: 'forger' })],
      ['a token whose kid the provider does not list', () => reissued({}, { kid: 'not-a-published-key' })],
      ['a token with its issuer rewritten', () => reissued({ iss: `${provider.issuer}/` })],
      ['a token with its audience rewritten', () => reissued({ aud: 'https://gateway.example.com/mcp' })],
      ['a token whose claims no mapping matches', () => provider.token('assistant-cy', resource)],
      [
        'an unsigned token (alg none)',
        async () => {
          const claims = decodeJwt(await provider.token('assistant-ana', resource));
          const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
          return `${part({ alg: 'none', typ: 'at+jwt' })}.${part(claims)}.`;
        },
      ],
      [
        'a token signed HS256 with the public key set as the secret',
        async () => {
          const claims = decodeJwt(await provider.token('assistant-ana', resource));
          const jwks = await (await fetch(provider.jwksUri)).text();
          return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'provider-key' }).sign(new TextEncoder().encode(jwks));
        },
      ],
      [
        'a token with one character of its signature changed',
        async () => {
          const t = await provider.token('assistant-ana', resource);
          return `${t.slice(0, -2)}${t.at(-2) === 'A' ? 'B' : 'A'}${t.at(-1)}`;
        },
      ],
    ];
    for (const [what, make] of cases) {
      it(what, async () => {
        clock += 60_000; // a fresh allowance for the address
        const token = await make();
        const r = await refusal(token);
        expect(r.status).toBe(401);
        expect(r.challenge).toContain('error="invalid_token"');
        expect(r.challenge).toContain('resource_metadata="');
      });
    }
  });

  it('the token the provider issues is good (the refusals above are for what was changed, not the provider)', async () => {
    expect((await refusal(await reissued({}))).status).toBe(200);
  });

  it('rate limits invalid tokens per address as unknown keys are, then lets a good credential in again', async () => {
    clock += 60_000;
    const bad = await reissued({}, { by: 'forger' });
    for (let i = 0; i < ALLOWANCE; i++) expect((await refusal(bad)).status).toBe(401);
    const blocked = await rpc(await provider.token('assistant-ana', resource));
    await blocked.text();
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    clock += 60_000;
    expect((await refusal(await provider.token('assistant-ana', resource))).status).toBe(200);
  });

  it("answers 503, not counted against the address, when a configured issuer's keys cannot be fetched", async () => {
    clock += 60_000;
    const token = await reissued({ iss: deadIssuer });
    for (let i = 0; i < ALLOWANCE + 2; i++) {
      const r = await rpc(token);
      await r.text();
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('30');
    }
    expect((await refusal(KEY)).status).toBe(200);
  });
});

describe('auth.oauth in the gateway configuration', () => {
  const base = {
    listen: { http: { port: 0 } },
    clients: [{ name: 'bot', subject: 'agent:bot' }],
    upstreams: {},
  };
  const oauth = (o: Record<string, unknown>) => ({
    auth: {
      oauth: {
        resource: 'https://gw.example.com/mcp',
        issuers: [{ issuer: 'https://idp.example.com' }],
        clients: [{ claim: 'sub', value: 'x', client: 'bot' }],
        ...o,
      },
    },
  });
  const problems = async (rest: Record<string, unknown>) => {
    const r = await configFrom({ ...base, ...rest });
    return r.ok ? [] : r.problems;
  };

  it('accepts a client reached only through an OAuth mapping, and fills the audience with the resource', async () => {
    const r = await configFrom({ ...base, ...oauth({}) });
    expect(r.ok).toBe(true);
    const oauthConfig = (r as { config: ResolvedConfig }).config.oauth!;
    expect(oauthConfig.issuers).toEqual([{ issuer: 'https://idp.example.com', audience: 'https://gw.example.com/mcp', jwksUri: null }]);
    expect(oauthConfig.mappings[0].client.name).toBe('bot');
  });

  it('refuses a keyless HTTP client that no mapping reaches, naming it', async () => {
    expect(await problems({})).toEqual([{ pointer: '/clients/0', message: expect.stringContaining('needs key or keySha256') }]);
  });

  it('names the pointer of each bad entry', async () => {
    expect(await problems(oauth({ clients: [{ claim: 'sub', value: 'x', client: 'nobody' }] }))).toContainEqual({
      pointer: '/auth/oauth/clients/0/client',
      message: 'names no entry of /clients',
    });
    expect(await problems(oauth({ resource: 'https://gw.example.com/mcp#frag' }))).toContainEqual(expect.objectContaining({ pointer: '/auth/oauth/resource' }));
    expect(await problems(oauth({ resource: 'https://gw.example.com/mcp?x=1' }))).toContainEqual(expect.objectContaining({ pointer: '/auth/oauth/resource' }));
    expect(await problems(oauth({ issuers: [{ issuer: 'https://idp.example.com' }, { issuer: 'https://idp.example.com' }] }))).toContainEqual({
      pointer: '/auth/oauth/issuers/1/issuer',
      message: 'repeats /auth/oauth/issuers/0/issuer',
    });
    expect(await problems(oauth({ issuers: [] }))).toContainEqual(expect.objectContaining({ pointer: '/auth/oauth/issuers' }));
    expect(await problems(oauth({ issuers: [{ issuer: 'ftp://idp' }] }))).toContainEqual(expect.objectContaining({ pointer: '/auth/oauth/issuers/0/issuer' }));
    expect(await problems(oauth({ issuers: [{ issuer: 'https://idp.example.com', jwks: 'x' }] }))).toContainEqual({
      pointer: '/auth/oauth/issuers/0/jwks',
      message: 'is not a known field',
    });
    expect(await problems(oauth({ clients: [{ claim: 'sub', client: 'bot' }] }))).toContainEqual({
      pointer: '/auth/oauth/clients/0/value',
      message: 'is required',
    });
    expect(await problems({ ...oauth({}), listen: { stdio: { client: 'bot' } } })).toContainEqual(expect.objectContaining({ pointer: '/auth/oauth' }));
  });

  it('refuses, with several issuers, a mapping that does not say whose tokens it takes, and one naming an issuer not configured', async () => {
    const two = [{ issuer: 'https://idp.example.com' }, { issuer: 'https://partner.example.org' }];
    expect(await problems(oauth({ issuers: two }))).toEqual([
      { pointer: '/auth/oauth/clients/0/issuer', message: expect.stringContaining('is required when several issuers are configured') },
    ]);
    expect(await problems(oauth({ clients: [{ issuer: 'https://elsewhere.example.net', claim: 'sub', value: 'x', client: 'bot' }] }))).toEqual([
      { pointer: '/auth/oauth/clients/0/issuer', message: 'names no entry of /auth/oauth/issuers' },
    ]);
    expect(await problems(oauth({ clients: [{ issuer: 'not a url', claim: 'sub', value: 'x', client: 'bot' }] }))).toContainEqual(
      expect.objectContaining({ pointer: '/auth/oauth/clients/0/issuer' }),
    );
    const named = await configFrom({
      ...base,
      ...oauth({ issuers: two, clients: [{ issuer: 'https://partner.example.org', claim: 'sub', value: 'x', client: 'bot' }] }),
    });
    expect(named.ok).toBe(true);
    expect((named as { config: ResolvedConfig }).config.oauth!.mappings[0]).toMatchObject({ issuer: 'https://partner.example.org', client: { name: 'bot' } });
  });
});
