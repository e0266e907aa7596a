import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { memoryDecisionSink } from '../../gateway/decision-sink.ts';
import { type RunningGateway, startGateway } from '../../gateway/start.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { type LiveServer, startLiveServer } from '../distribution/live-server.ts';
import { jwksOf, makeKey, signBytes } from '../distribution/signed-bundles.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { freePort } from '../support/free-port.ts';
import { connectClient, eventually } from './gateway-process.ts';
import { MCP_BUNDLE_SUBJECT, mcpBundle } from './mcp-bundle.ts';
import { startResourceProvider } from './oauth-provider.ts';

// `toolgate gateway` started from a configuration file with auth.oauth, its issuer's keys found
// through the issuer's own discovery document: an assistant with a token from the provider is the
// client its claims map to, in the decision records too, beside a client with a static key.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');
const TSX_LOADER = import.meta.resolve('tsx');
const TENANT = 'oauth-start';
const KEY = 'oauth-start-static-key-0123456789';

let srv: LiveServer;
let dir: string;
let provider: Awaited<ReturnType<typeof startResourceProvider>>;
let gateway: RunningGateway | undefined;
let resource: string;
const sink = memoryDecisionSink();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-gw-oauth-'));
  const state = upstreamFixtureState();
  writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
  srv = await startLiveServer();
  await srv.createTenant(TENANT);
  const key = await makeKey('oauth-start-key');
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify(jwksOf(key)));
  const bundle = mcpBundle(TENANT, 1, 'rec', state);
  const text = canonicalJson(bundle);
  await srv.place(TENANT, 1, { text, signature: await signBytes(text, key), revision: bundle.revision });

  const port = await freePort();
  resource = `http://127.0.0.1:${port}/mcp`;
  provider = await startResourceProvider({ clients: [{ id: 'assistant-ana', groups: ['research'] }], resources: [resource] });
  writeFileSync(
    join(dir, 'gateway.json'),
    JSON.stringify({
      control: { url: srv.url, tenant: TENANT, token: '${OAUTH_START_TOKEN}', jwksFile: 'jwks.json', cacheDir: 'cache' },
      listen: { http: { port } },
      clients: [
        { name: 'static-bot', key: KEY, subject: 'agent:static-bot' },
        { name: 'research-assistants', subject: MCP_BUNDLE_SUBJECT },
      ],
      auth: { oauth: { resource, issuers: [{ issuer: provider.issuer }], clients: [{ claim: 'groups', value: 'research', client: 'research-assistants' }] } },
      upstreams: { rec: { kind: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, FIXTURE, join(dir, 'state.json'), '-'] } },
    }),
  );
  const loaded = await loadGatewayConfig(join(dir, 'gateway.json'), { OAUTH_START_TOKEN: await srv.tokenFor('runtime', [TENANT]) });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  gateway = await startGateway(loaded.config, { sink });
  await eventually(() => (gateway!.health().status === 'ok' ? true : undefined), 20_000, 'the gateway ready');
});

afterAll(async () => {
  await gateway?.close();
  await provider?.close();
  await srv?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('toolgate gateway with auth.oauth', () => {
  it('serves its metadata and challenges, and takes a token from the configured provider as the mapped client', async () => {
    const metadata = (await (await fetch(`${new URL(resource).origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource, authorization_servers: [provider.issuer] });
    const challenged = await fetch(gateway!.url!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('www-authenticate')).toContain('resource_metadata=');

    const c = await connectClient(gateway!.url!, await provider.token('assistant-ana', resource));
    const r = (await c.client.callTool({ name: 'mcp__rec__echo', arguments: { text: 'from a token' } })) as CallToolResult;
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(sink.records.at(-1)).toMatchObject({ tool: 'mcp__rec__echo', decision: 'allow', subject: MCP_BUNDLE_SUBJECT });
    await c.client.close();

    // The static key is another client, which this bundle grants nothing.
    const s = await connectClient(gateway!.url!, KEY);
    expect((await s.client.listTools()).tools).toEqual([]);
    await s.client.close();
  });
});
