import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { StateFileServer, TEST_MCP_POLICY, objectSchema } from '../fixtures/mcp/servers.ts';
import type { FixtureState } from '../fixtures/mcp/tool-list-server.ts';
import { scriptedGateway } from '../gateway/scripted-gateway.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

// Names an MCP server gives its tools that no tool id can hold, from import to a call through the
// gateway: the id maps the name, and the upstream is called by the name it gave.
const TENANT = 'acme-research';
const SUBJECT = 'agent:research-bot';
const offered: FixtureState = {
  tools: [
    { name: 'github.create_issue', description: 'Open an issue', inputSchema: objectSchema({ title: { type: 'string' } }, ['title']) },
    { name: 'github/create_issue', description: 'Open an issue, the other way', inputSchema: objectSchema({ title: { type: 'string' } }, ['title']) },
  ],
};

const sha8 = (name: string) => createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);

/** The name a catalog entry's MCP server gives it (an excluded entry carries none). */
const nameOf = (x: Bundle['catalog']['tools'][number]) => ('source' in x ? x.source?.originalName : undefined);

let t: TestApp;
const fixture = new StateFileServer(offered);

beforeAll(async () => {
  t = await startTestApp({ settings: { mcpCommands: TEST_MCP_POLICY.commands, mcpAllowHosts: TEST_MCP_POLICY.allowHosts } });
});
afterAll(async () => {
  fixture.dispose();
  await t.close();
});

async function approveForResearch(id: string): Promise<void> {
  const tool = await t.request('GET', `/v1/tools/${id}`);
  const approve = await t.request('POST', `/v1/tools/${id}/approve`, {
    body: { definitionHash: tool.json.definitionHash },
    headers: { 'if-match': tool.headers.get('etag')! },
  });
  expect(approve.status).toBe(200);
  const now = await t.request('GET', `/v1/tools/${id}`);
  const patch = await t.request('PATCH', `/v1/tools/${id}`, {
    body: { groups: ['knowledge'], effect: 'read_only', redaction: { allow: ['content[].text'] } },
    headers: { 'if-match': now.headers.get('etag')! },
  });
  expect(patch.status).toBe(200);
}

/** A session of SUBJECT, in the knowledge group, on `gateway`. */
function knowledgeSession(gateway: ReturnType<typeof scriptedGateway>['gateway']) {
  return gateway.openSession({
    name: 'bot',
    subject: SUBJECT,
    keyDigest: null,
    request: { subject: SUBJECT, groups: ['knowledge'] },
    initialState: 'undefined',
  });
}

describe('an MCP tool whose name no id can hold', () => {
  let bundle: Bundle;

  it('is imported under mapped ids, both suffixed where the names meet, and published with the names kept', async () => {
    expect((await t.request('POST', '/v1/mcp-servers', { body: { id: 'rec', label: 'Recorder', transport: fixture.transport() } })).status).toBe(201);
    const sync = await t.request('POST', '/v1/mcp-servers/rec/sync');
    expect(sync.status).toBe(200);
    const added = sync.json.lastSync.added as string[];
    expect(added).toEqual([`mcp__rec__github_create_issue_${sha8('github.create_issue')}`, `mcp__rec__github_create_issue_${sha8('github/create_issue')}`]);
    expect(sync.json.lastSync.rejected).toEqual([]);
    for (const id of added) await approveForResearch(id);
    const policy = await t.request('GET', `/v1/tenants/${TENANT}/policy`);
    policy.json.roles.researcher.allow.push('mcp__rec__*');
    expect((await t.request('PUT', `/v1/tenants/${TENANT}/policy`, { body: policy.json, headers: { 'if-match': policy.headers.get('etag')! } })).status).toBe(
      200,
    );
    expect((await t.request('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: 'dotted names' } })).status).toBe(201);
    const latest = await t.request('GET', `/v1/tenants/${TENANT}/bundles/latest`);
    bundle = JSON.parse(latest.text) as Bundle;
    const sources = bundle.catalog.tools.filter((x) => x.id.startsWith('mcp__rec__')).map((x): [string, string | undefined] => [x.id, nameOf(x)]);
    expect(new Map(sources)).toEqual(
      new Map([
        [added[0], 'github.create_issue'],
        [added[1], 'github/create_issue'],
      ]),
    );
  });

  it('is listed by the gateway under its id and called upstream by the name its server gave', async () => {
    const calls: string[] = [];
    const { gateway } = scriptedGateway(bundle, offered, (name) => {
      calls.push(name);
      return { ok: true, result: { content: [{ type: 'text', text: `called ${name}` }] } };
    });
    const session = knowledgeSession(gateway);
    const listed = gateway
      .list(session)
      .tools.map((x) => x.name)
      .filter((n) => n.startsWith('mcp__rec__'));
    expect(listed).toHaveLength(2);
    const byName = new Map(bundle.catalog.tools.map((x) => [nameOf(x), x.id]));
    for (const name of ['github.create_issue', 'github/create_issue']) {
      const id = byName.get(name)!;
      expect(listed).toContain(id);
      const result = (await gateway.call(session, { name: id, arguments: { title: 'x' } })) as CallToolResult;
      expect(result.isError).not.toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: `called ${name}` }]);
    }
    expect(calls).toEqual(['github.create_issue', 'github/create_issue']);
  });

  it('is withheld when the upstream no longer offers the name it was pinned under', async () => {
    const renamed: FixtureState = { tools: offered.tools.map((x) => ({ ...x, name: x.name.replace('github', 'gh') })) };
    const calls: string[] = [];
    const { gateway } = scriptedGateway(bundle, renamed, (name) => {
      calls.push(name);
      return { ok: true, result: { content: [] } };
    });
    const session = knowledgeSession(gateway);
    expect(gateway.list(session).tools.filter((x) => x.name.startsWith('mcp__rec__'))).toEqual([]);
    const id = bundle.catalog.tools.find((x) => nameOf(x) === 'github.create_issue')!.id;
    const refused = (await gateway.call(session, { name: id, arguments: { title: 'x' } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(calls).toEqual([]);
  });
});
