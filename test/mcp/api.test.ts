import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServer, Tool } from '../../policy-schemas/types.gen.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { ChainVerifier } from '../../server/audit/chain.ts';
import {
  StateFileServer,
  crashingServer,
  everythingServer,
  garbageServer,
  memoryServer,
  missingCommand,
  objectSchema,
  silentServer,
} from '../fixtures/mcp/servers.ts';
import { type FixtureState, startHttpFixture } from '../fixtures/mcp/tool-list-server.ts';
import { type Harness, createHarness } from './harness.ts';

const LONG_NAME = `${'namespace.'.repeat(12)}tool/run`;
/** The first 8 hex digits of the sha-256 of a name (DESIGN: the suffix of a cut or meeting id). */
const sha8 = (name: string) => createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);

const v1: FixtureState = {
  pageSize: 2,
  tools: [
    { name: 'search', description: 'Search documents', inputSchema: objectSchema({ q: { type: 'string' } }, ['q']), annotations: { readOnlyHint: true } },
    { name: 'remove_me', description: 'Goes away in v2', inputSchema: objectSchema() },
    {
      name: 'odd',
      description: 'Asks for a connection in its arguments and refers to a remote schema',
      inputSchema: objectSchema({
        connectionId: { type: 'string' },
        v: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        w: { $ref: 'https://schemas.example.com/w.json' },
      }),
    },
    { name: 'github.create_issue', description: 'Open an issue', inputSchema: objectSchema({ title: { type: 'string' } }, ['title']) },
    { name: 'fs/read_file', description: 'Read a file', inputSchema: objectSchema({ path: { type: 'string' } }, ['path']) },
    { name: LONG_NAME, description: 'A name of 128 characters', inputSchema: objectSchema() },
  ],
};

const v2: FixtureState = {
  tools: [
    {
      name: 'search',
      description: 'Search documents',
      inputSchema: objectSchema({ q: { type: 'string' }, deleteAfter: { type: 'boolean' } }, ['q']),
      annotations: { readOnlyHint: true },
    },
    {
      name: 'odd',
      description: 'Asks for a connection in its arguments and refers to a remote schema',
      inputSchema: objectSchema({
        connectionId: { type: 'string' },
        v: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        w: { $ref: 'https://schemas.example.com/w.json' },
      }),
    },
    { name: 'brand_new', description: 'Added in v2', inputSchema: objectSchema({ n: { type: 'integer' } }) },
    { name: 'github.create_issue', description: 'Open an issue', inputSchema: objectSchema({ title: { type: 'string' } }, ['title']) },
    { name: 'fs/read_file', description: 'Read a file', inputSchema: objectSchema({ path: { type: 'string' } }, ['path']) },
    { name: LONG_NAME, description: 'A name of 128 characters', inputSchema: objectSchema() },
    // Meets github.create_issue after mapping: the tool imported first keeps its id.
    { name: 'github/create_issue', description: 'Open an issue, another way', inputSchema: objectSchema() },
  ],
};

let h: Harness;
const fixtures: StateFileServer[] = [];

beforeAll(async () => {
  h = await createHarness();
  const group = await h.call('admin', 'POST', '/v1/groups', { name: 'default', description: 'default' });
  if (group.status !== 201 && group.status !== 409) throw new Error(`cannot create the default group: ${group.status}`);
});
afterAll(async () => {
  fixtures.forEach((f) => f.dispose());
  await h.close();
});

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function createServer(server: McpServer): Promise<McpServer> {
  const res = await h.call('admin', 'POST', '/v1/mcp-servers', server);
  expect(res.status).toBe(201);
  return json<McpServer>(res);
}

/** The If-Match header naming the tool's current version, as a reviewer who just read it sends. */
async function ifMatchOf(id: string): Promise<Record<string, string>> {
  return { 'if-match': `"${(await getTool(id)).version}"` };
}

async function getTool(id: string): Promise<Tool & { version: number }> {
  const res = await h.call('admin', 'GET', `/v1/tools/${id}`);
  expect(res.status).toBe(200);
  return json(res);
}

async function toolCount(): Promise<number> {
  return (await json<{ items: Tool[] }>(await h.call('admin', 'GET', '/v1/tools'))).items.length;
}

describe('/v1/mcp-servers CRUD', () => {
  it('creates, reads, replaces and deletes a server with If-Match', async () => {
    const created = await createServer({ id: 'crud', label: 'CRUD', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } });
    expect(created).toMatchObject({ id: 'crud', version: 1 });
    const got = await h.call('viewer', 'GET', '/v1/mcp-servers/crud');
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"1"');
    const noMatch = await h.call('admin', 'PUT', '/v1/mcp-servers/crud', {
      id: 'crud',
      label: 'renamed',
      transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' },
    });
    expect(noMatch.status).toBe(428);
    const put = await h.call(
      'admin',
      'PUT',
      '/v1/mcp-servers/crud',
      { id: 'crud', label: 'renamed', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } },
      { 'if-match': '"1"' },
    );
    expect(put.status).toBe(200);
    expect((await json<McpServer>(put)).label).toBe('renamed');
    const list = await json<{ items: McpServer[] }>(await h.call('editor', 'GET', '/v1/mcp-servers'));
    expect(list.items.map((s) => s.id)).toContain('crud');
    const del = await h.call('admin', 'DELETE', '/v1/mcp-servers/crud', undefined, { 'if-match': '"2"' });
    expect(del.status).toBe(204);
    expect((await h.call('admin', 'GET', '/v1/mcp-servers/crud')).status).toBe(404);
  });

  it('refuses a duplicate id with 409', async () => {
    await createServer({ id: 'dup', label: 'one', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } });
    const again = await h.call('admin', 'POST', '/v1/mcp-servers', { id: 'dup', label: 'two', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } });
    expect(again.status).toBe(409);
  });

  it('answers 400 with a pointer for each problem in a bad body', async () => {
    const res = await h.call('admin', 'POST', '/v1/mcp-servers', {
      id: 'Bad_Id',
      label: '',
      transport: { kind: 'stdio', command: 'x', env: ['not valid'] },
      syncIntervalSeconds: 5,
    });
    expect(res.status).toBe(400);
    const problem = await json<{ code: string; errors: Array<{ pointer: string }> }>(res);
    expect(problem.code).toBe('validation');
    const pointers = problem.errors.map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/id', '/label', '/transport/env/0', '/syncIntervalSeconds']));
  });

  it('refuses a transport that is neither stdio nor http', async () => {
    const res = await h.call('admin', 'POST', '/v1/mcp-servers', { id: 'ws', label: 'ws', transport: { kind: 'websocket', url: 'ws://127.0.0.1:1' } });
    expect(res.status).toBe(400);
  });

  it('refuses a credential pasted into the arguments', async () => {
    const res = await h.call('admin', 'POST', '/v1/mcp-servers', {
      id: 'leak',
      label: 'leak',
      transport: { kind: 'stdio', command: 'srv', args: ['ghp_abcdefghijklmnopqrstuvwxyz0123456789'] },
    });
    expect(res.status).toBe(400);
    const problem = await json<{ code: string; errors: Array<{ pointer: string }> }>(res);
    expect(problem.code).toBe('secret_field');
    expect(problem.errors[0].pointer).toBe('/transport/args/0');
  });

  it('refuses credentials in an HTTP transport URL', async () => {
    for (const url of ['https://user:hunter22@mcp.example.com/mcp', 'https://mcp.example.com/mcp?api_key=abc123']) {
      const res = await h.call('admin', 'POST', '/v1/mcp-servers', { id: 'url-leak', label: 'leak', transport: { kind: 'http', url } });
      expect(res.status).toBe(400);
      const problem = await json<{ code: string; errors: Array<{ pointer: string }> }>(res);
      expect(problem).toMatchObject({ code: 'secret_field', errors: [{ pointer: '/transport/url' }] });
    }
    expect((await h.call('admin', 'GET', '/v1/mcp-servers/url-leak')).status).toBe(404);
  });

  it('rejects a body that is not JSON', async () => {
    const res = await h.call('admin', 'POST', '/v1/mcp-servers', '{nope');
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('invalid_json');
  });

  it('lets only admins create, change and sync servers', async () => {
    const body = { id: 'nope', label: 'nope', transport: { kind: 'http', url: 'http://127.0.0.1:9/mcp' } };
    expect((await h.call(null, 'POST', '/v1/mcp-servers', body)).status).toBe(401);
    for (const role of ['editor', 'viewer', 'auditor'] as const) {
      expect((await h.call(role, 'POST', '/v1/mcp-servers', body)).status).toBe(403);
    }
    await createServer({ ...body, id: 'guarded' } as McpServer);
    for (const role of ['editor', 'viewer', 'auditor'] as const) {
      expect((await h.call(role, 'POST', '/v1/mcp-servers/guarded/sync')).status).toBe(403);
      expect((await h.call(role, 'DELETE', '/v1/mcp-servers/guarded', undefined, { 'if-match': '"1"' })).status).toBe(403);
    }
    expect((await h.call(null, 'POST', '/v1/mcp-servers/guarded/sync')).status).toBe(401);
  });

  it('answers 404 for syncing, reading or approving what does not exist', async () => {
    expect((await h.call('admin', 'POST', '/v1/mcp-servers/ghost/sync')).status).toBe(404);
    expect((await h.call('admin', 'GET', '/v1/mcp-servers/ghost')).status).toBe(404);
    const approve = await h.call('admin', 'POST', '/v1/tools/mcp__ghost__x/approve', { definitionHash: `sha256:${'0'.repeat(64)}` }, { 'if-match': '"1"' });
    expect(approve.status).toBe(404);
  });
});

describe('sync and approval against the SDK test server', () => {
  let fixture: StateFileServer;
  beforeAll(async () => {
    fixture = new StateFileServer(v1);
    fixtures.push(fixture);
    await createServer({ id: 'drift', label: 'Drifting test server', transport: fixture.transport() });
  });

  it('imports every page of new tools quarantined, names mapped to ids, flagging schemas', async () => {
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/drift/sync');
    expect(res.status).toBe(200);
    const server = await json<McpServer>(res);
    expect(server.lastSync).toMatchObject({
      ok: true,
      added: [
        'mcp__drift__search',
        'mcp__drift__remove_me',
        'mcp__drift__odd',
        'mcp__drift__github_create_issue',
        'mcp__drift__fs_read_file',
        `mcp__drift__${'namespace_'.repeat(4)}nam_${sha8(LONG_NAME)}`,
      ],
      changed: [],
      removed: [],
    });
    expect(server.lastSync?.rejected).toEqual([]);
    const dotted = await getTool('mcp__drift__github_create_issue');
    expect(dotted).toMatchObject({ status: 'quarantined', source: { kind: 'mcp', server: 'drift', originalName: 'github.create_issue' } });
    expect(dotted.review?.current.name).toBe('github.create_issue');
    const long = await getTool(`mcp__drift__${'namespace_'.repeat(4)}nam_${sha8(LONG_NAME)}`);
    expect(long.source?.originalName).toBe(LONG_NAME);
    expect(server.lastSync?.flagged?.map((f) => f.name)).toEqual(['mcp__drift__odd']);
    const search = await getTool('mcp__drift__search');
    expect(search).toMatchObject({
      status: 'quarantined',
      effect: 'external_side_effect',
      groups: ['default'],
      source: { kind: 'mcp', server: 'drift', originalName: 'search', hints: { readOnlyHint: true } },
    });
    expect(search.review?.current.definitionHash).toBe(search.definitionHash);
    expect(search.redaction).toBeUndefined();
    const odd = await getTool('mcp__drift__odd');
    expect(odd.status).toBe('quarantined');
    // oneOf is in the vocabulary: what stays refused is the connectionId property and the remote $ref.
    expect(odd.review?.problems?.map((p) => p.pointer)).toEqual(['/inputSchema/properties/connectionId', '/inputSchema/properties/w/$ref']);
  });

  it('refuses approval without the current definition hash, naming both', async () => {
    const search = await getTool('mcp__drift__search');
    const stale = `sha256:${'a'.repeat(64)}`;
    const res = await h.call('admin', 'POST', '/v1/tools/mcp__drift__search/approve', { definitionHash: stale }, await ifMatchOf('mcp__drift__search'));
    expect(res.status).toBe(409);
    const problem = await json<{ code: string; detail: string }>(res);
    expect(problem.code).toBe('definition_mismatch');
    expect(problem.detail).toContain(stale);
    expect(problem.detail).toContain(search.definitionHash!);
    expect((await getTool('mcp__drift__search')).status).toBe('quarantined');
  });

  it('answers 400 with pointers for a bad approval body', async () => {
    const res = await h.call(
      'admin',
      'POST',
      '/v1/tools/mcp__drift__search/approve',
      { definitionHash: 'md5:abc', extra: 1 },
      await ifMatchOf('mcp__drift__search'),
    );
    expect(res.status).toBe(400);
    const pointers = (await json<{ errors: Array<{ pointer: string }> }>(res)).errors.map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/definitionHash', '/extra']));
  });

  it('lets only admins approve', async () => {
    const { definitionHash } = await getTool('mcp__drift__search');
    for (const role of ['editor', 'viewer', 'auditor'] as const) {
      expect((await h.call(role, 'POST', '/v1/tools/mcp__drift__search/approve', { definitionHash })).status).toBe(403);
    }
  });

  it('refuses to approve a tool whose input schema leaves the restricted subset', async () => {
    const { definitionHash } = await getTool('mcp__drift__odd');
    const res = await h.call('admin', 'POST', '/v1/tools/mcp__drift__odd/approve', { definitionHash }, await ifMatchOf('mcp__drift__odd'));
    expect(res.status).toBe(400);
    const problem = await json<{ detail: string; errors: Array<{ pointer: string }> }>(res);
    expect(problem.errors.map((e) => e.pointer)).toEqual(['/inputSchema/properties/connectionId', '/inputSchema/properties/w/$ref']);
    expect((await getTool('mcp__drift__odd')).status).toBe('quarantined');
  });

  it('refuses to approve a tool whose input schema does not compile', async () => {
    fixture.write({
      ...v1,
      tools: [
        ...v1.tools,
        { name: 'dangling', description: 'Refers to nothing', inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } },
      ],
    });
    expect((await h.call('admin', 'POST', '/v1/mcp-servers/drift/sync')).status).toBe(200);
    const { definitionHash } = await getTool('mcp__drift__dangling');
    const res = await h.call('admin', 'POST', '/v1/tools/mcp__drift__dangling/approve', { definitionHash }, await ifMatchOf('mcp__drift__dangling'));
    expect(res.status).toBe(400);
    const problem = await json<{ detail: string; errors: Array<{ pointer: string; message: string }> }>(res);
    expect(problem.errors[0]).toMatchObject({ pointer: '/inputSchema/properties/a/$ref', message: expect.stringContaining('no subschema') });
    expect((await getTool('mcp__drift__dangling')).review?.problems?.[0].message).toContain('no subschema');
    fixture.write(v1);
    expect((await h.call('admin', 'POST', '/v1/mcp-servers/drift/sync')).status).toBe(200);
    expect((await getTool('mcp__drift__dangling')).status).toBe('removed');
  });

  it('honours a stale If-Match on approval with 412', async () => {
    const { definitionHash, version } = await getTool('mcp__drift__search');
    const res = await h.call('admin', 'POST', '/v1/tools/mcp__drift__search/approve', { definitionHash }, { 'if-match': `"${version + 5}"` });
    expect(res.status).toBe(412);
  });

  it('refuses to enable an imported tool by editing its status', async () => {
    const { version } = await getTool('mcp__drift__search');
    const res = await h.call('admin', 'PATCH', '/v1/tools/mcp__drift__search', { status: 'active' }, { 'if-match': `"${version}"` });
    expect(res.status).toBe(409);
    expect((await getTool('mcp__drift__search')).status).toBe('quarantined');
  });

  it('activates a quarantined tool approved with its current hash, and audits it', async () => {
    for (const id of ['mcp__drift__search', 'mcp__drift__remove_me']) {
      const { definitionHash, version } = await getTool(id);
      const res = await h.call('admin', 'POST', `/v1/tools/${id}/approve`, { definitionHash, reason: 'reviewed' }, { 'if-match': `"${version}"` });
      expect(res.status).toBe(200);
      const tool = await json<Tool>(res);
      expect(tool.status).toBe('active');
      expect(tool.source?.approvedDefinitionHash).toBe(definitionHash);
      expect(tool.review).toBeUndefined();
    }
    const events = await listAuditEvents(h.deps.database.db, { action: 'approve', entityId: 'mcp__drift__search' }, 0, 10);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: 'token:t-admin', entityType: 'tool', reason: 'reviewed', after: { status: 'active' } });
    const again = await h.call(
      'admin',
      'POST',
      '/v1/tools/mcp__drift__search/approve',
      { definitionHash: (await getTool('mcp__drift__search')).definitionHash },
      await ifMatchOf('mcp__drift__search'),
    );
    expect(again.status).toBe(409);
  });

  it('keeps an approved, unchanged tool active with its admin edits on re-sync', async () => {
    const { version } = await getTool('mcp__drift__search');
    const edit = await h.call(
      'admin',
      'PATCH',
      '/v1/tools/mcp__drift__search',
      { redaction: { allow: ['title'] }, effect: 'state_change' },
      { 'if-match': `"${version}"` },
    );
    expect(edit.status).toBe(200);
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/drift/sync');
    expect(res.status).toBe(200);
    expect((await json<McpServer>(res)).lastSync).toMatchObject({ ok: true, added: [], changed: [], removed: [] });
    const search = await getTool('mcp__drift__search');
    expect(search).toMatchObject({ status: 'active', redaction: { allow: ['title'] }, effect: 'state_change', version: version + 1 });
  });

  it('quarantines a changed tool with both definitions, marks a vanished one removed and imports a new one', async () => {
    const approved = await getTool('mcp__drift__search');
    const seqBefore = (await listAuditEvents(h.deps.database.db, {}, 0, 10_000)).length;
    fixture.write(v2);
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/drift/sync');
    expect(res.status).toBe(200);
    const server = await json<McpServer>(res);
    const meeting = `mcp__drift__github_create_issue_${sha8('github/create_issue')}`;
    expect(server.lastSync).toMatchObject({
      ok: true,
      added: ['mcp__drift__brand_new', meeting],
      changed: ['mcp__drift__search'],
      removed: ['mcp__drift__remove_me'],
    });
    // The name that arrived later and meets an imported one is suffixed; the imported one keeps its id.
    expect((await getTool(meeting)).source?.originalName).toBe('github/create_issue');
    expect((await getTool('mcp__drift__github_create_issue')).source?.originalName).toBe('github.create_issue');

    const search = await getTool('mcp__drift__search');
    expect(search.status).toBe('quarantined');
    expect(search.redaction).toEqual({ allow: ['title'] });
    expect(search.effect).toBe('state_change');
    expect(search.source?.approvedDefinitionHash).toBe(approved.definitionHash);
    expect(search.review?.previous).toMatchObject({ definitionHash: approved.definitionHash, inputSchema: approved.inputSchema });
    expect(search.review?.current).toMatchObject({ definitionHash: search.definitionHash, inputSchema: v2.tools[0].inputSchema });
    expect((await getTool('mcp__drift__remove_me')).status).toBe('removed');
    expect((await getTool('mcp__drift__brand_new')).status).toBe('quarantined');

    const events = (await listAuditEvents(h.deps.database.db, {}, 0, 10_000)).slice(seqBefore);
    expect(events.map((e) => `${e.action} ${e.entityType} ${e.entityId}`).sort()).toEqual(
      [
        'sync mcp-server drift',
        'sync tool mcp__drift__brand_new',
        `sync tool ${meeting}`,
        'sync tool mcp__drift__remove_me',
        'sync tool mcp__drift__search',
      ].sort(),
    );
    const verifier = new ChainVerifier();
    for (const e of await listAuditEvents(h.deps.database.db, {}, 0, 10_000)) verifier.push(e);
    expect(verifier.result().ok).toBe(true);
  });

  it('keeps the server lastSync when an admin edits the server', async () => {
    const current = await json<McpServer & { version: number }>(await h.call('admin', 'GET', '/v1/mcp-servers/drift'));
    const { lastSync: _ls, version, createdAt: _c, updatedAt: _u, ...rest } = current;
    const res = await h.call('admin', 'PUT', '/v1/mcp-servers/drift', { ...rest, label: 'Renamed' }, { 'if-match': `"${version}"` });
    expect(res.status).toBe(200);
    const saved = await json<McpServer>(res);
    expect(saved.label).toBe('Renamed');
    expect(saved.lastSync).toEqual(current.lastSync);
  });
});

describe('a definition the inventory cannot hold', () => {
  it('sends the approved tool back to quarantine and cannot be approved', async () => {
    const fixture = new StateFileServer({ tools: [{ name: 'grow', description: 'Short', inputSchema: objectSchema() }] });
    fixtures.push(fixture);
    await createServer({ id: 'growing', label: 'Growing', transport: fixture.transport() });
    expect((await h.call('admin', 'POST', '/v1/mcp-servers/growing/sync')).status).toBe(200);
    const first = await getTool('mcp__growing__grow');
    expect(
      (await h.call('admin', 'POST', '/v1/tools/mcp__growing__grow/approve', { definitionHash: first.definitionHash }, await ifMatchOf('mcp__growing__grow')))
        .status,
    ).toBe(200);

    fixture.write({ tools: [{ name: 'grow', description: 'x'.repeat(9000), inputSchema: objectSchema() }] });
    const sync = await json<McpServer>(await h.call('admin', 'POST', '/v1/mcp-servers/growing/sync'));
    expect(sync.lastSync).toMatchObject({ changed: ['mcp__growing__grow'], rejected: [{ name: 'grow' }] });
    const held = await getTool('mcp__growing__grow');
    expect(held).toMatchObject({ status: 'quarantined', description: 'Short' });
    const res = await h.call(
      'admin',
      'POST',
      '/v1/tools/mcp__growing__grow/approve',
      { definitionHash: held.definitionHash },
      await ifMatchOf('mcp__growing__grow'),
    );
    expect(res.status).toBe(400);
    const problem = await json<{ detail: string; errors: Array<{ pointer: string }> }>(res);
    expect(problem.detail).toContain('cannot be stored');
    expect(problem.errors[0].pointer).toBe('/description');
  });
});

describe('deleting a server', () => {
  it('marks its imported tools removed and keeps them in the inventory', async () => {
    const fixture = new StateFileServer({ tools: [{ name: 'gone', description: 'Gone soon', inputSchema: objectSchema() }] });
    fixtures.push(fixture);
    await createServer({ id: 'short-lived', label: 'Short-lived', transport: fixture.transport() });
    expect((await h.call('admin', 'POST', '/v1/mcp-servers/short-lived/sync')).status).toBe(200);
    const { version } = await json<{ version: number }>(await h.call('admin', 'GET', '/v1/mcp-servers/short-lived'));
    expect((await h.call('admin', 'DELETE', '/v1/mcp-servers/short-lived')).status).toBe(428);
    expect((await h.call('admin', 'DELETE', '/v1/mcp-servers/short-lived', undefined, { 'if-match': `"${version + 1}"` })).status).toBe(412);
    expect((await h.call('admin', 'DELETE', '/v1/mcp-servers/short-lived', undefined, { 'if-match': `"${version}"` })).status).toBe(204);
    expect((await getTool('mcp__short-lived__gone')).status).toBe('removed');
    const events = await listAuditEvents(h.deps.database.db, { entityId: 'mcp__short-lived__gone', action: 'update' }, 0, 10);
    expect(events).toMatchObject([{ entityType: 'tool', reason: 'MCP server short-lived deleted', after: { status: 'removed' } }]);
  });
});

describe('a server that pages past the import bounds', () => {
  it('answers 502 in the fixed form, records it, and leaves the tools it imported before as they were', async () => {
    const tools = [
      { name: 'first', description: 'On page one', inputSchema: objectSchema() },
      { name: 'second', description: 'On page two', inputSchema: objectSchema() },
    ];
    const fixture = new StateFileServer({ tools, pageSize: 1 });
    fixtures.push(fixture);
    await createServer({ id: 'looping', label: 'Looping', transport: fixture.transport() });
    const first = await json<McpServer>(await h.call('admin', 'POST', '/v1/mcp-servers/looping/sync'));
    expect(first.lastSync?.added).toEqual(['mcp__looping__first', 'mcp__looping__second']);

    fixture.write({ tools, pageSize: 1, repeatCursor: 'again' });
    const before = await toolCount();
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/looping/sync');
    expect(res.status).toBe(502);
    const message = 'MCP server "looping" failed (phase: tools/list, code: cursor_repeated)';
    expect(await json(res)).toMatchObject({ code: 'mcp_error', detail: message });
    expect(await toolCount()).toBe(before);
    expect((await getTool('mcp__looping__second')).status).toBe('quarantined');
    const server = await json<McpServer>(await h.call('admin', 'GET', '/v1/mcp-servers/looping'));
    expect(server.lastSync).toMatchObject({ ok: false, error: message });
  });
});

describe('sync failures leave the inventory unchanged', () => {
  // Short only here: reference servers may start slowly on a loaded machine.
  beforeAll(() => {
    process.env.TOOLGATE_MCP_TIMEOUT_MS = '1500';
  });
  afterAll(() => {
    delete process.env.TOOLGATE_MCP_TIMEOUT_MS;
  });
  const cases: Array<[string, McpServer['transport'], RegExp]> = [
    ['missing', missingCommand(), /MCP server "missing" failed to start or initialize: the command was not found/],
    ['crashing', crashingServer(), /MCP server "crashing" .*connection closed/],
    ['silent', silentServer(), /MCP server "silent" .*no answer within 1500 ms/],
    ['garbage', garbageServer(), /MCP server "garbage" .*not MCP/],
  ];
  for (const [id, transport, message] of cases) {
    it(`answers 502 mcp_error naming the ${id} server and records the failure`, async () => {
      await createServer({ id, label: id, transport });
      const before = await toolCount();
      const res = await h.call('admin', 'POST', `/v1/mcp-servers/${id}/sync`);
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = await json<{ code: string; detail: string }>(res);
      expect(problem.code).toBe('mcp_error');
      expect(problem.detail).toMatch(message);
      expect(await toolCount()).toBe(before);
      const server = await json<McpServer>(await h.call('admin', 'GET', `/v1/mcp-servers/${id}`));
      expect(server.lastSync).toMatchObject({ ok: false, error: expect.stringMatching(message) });
    });
  }
});

describe('sync against reference servers from npm and over HTTP', () => {
  it('imports server-everything quarantined as external_side_effect, its annotations kept as hints', async () => {
    await createServer({ id: 'everything', label: 'Everything', transport: everythingServer() });
    const res = await h.call('admin', 'POST', '/v1/mcp-servers/everything/sync');
    expect(res.status).toBe(200);
    const server = await json<McpServer>(res);
    expect(server.lastSync?.added).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    const echo = await getTool('mcp__everything__echo');
    expect(echo).toMatchObject({ status: 'quarantined', effect: 'external_side_effect', source: { hints: { readOnlyHint: true } } });
    const gzip = await getTool('mcp__everything__gzip-file-as-resource');
    expect(gzip.effect).toBe('external_side_effect');
    expect(gzip.source?.hints?.readOnlyHint).not.toBe(true);
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
  });

  it('imports server-memory and, synced again, changes nothing', async () => {
    await createServer({ id: 'memory', label: 'Memory', transport: memoryServer() });
    const first = await json<McpServer>(await h.call('admin', 'POST', '/v1/mcp-servers/memory/sync'));
    expect(first.lastSync?.added).toEqual(expect.arrayContaining(['mcp__memory__create_entities', 'mcp__memory__read_graph']));
    const second = await json<McpServer>(await h.call('admin', 'POST', '/v1/mcp-servers/memory/sync'));
    expect(second.lastSync).toMatchObject({ ok: true, added: [], changed: [], removed: [] });
  });

  it('imports from a streamable HTTP server on 127.0.0.1', async () => {
    const http = await startHttpFixture(() => ({ tools: [{ name: 'ping', description: 'Ping', inputSchema: objectSchema() }] }));
    try {
      await createServer({ id: 'web', label: 'Web', transport: { kind: 'http', url: http.url } });
      const res = await h.call('admin', 'POST', '/v1/mcp-servers/web/sync');
      expect(res.status).toBe(200);
      expect((await json<McpServer>(res)).lastSync?.added).toEqual(['mcp__web__ping']);
    } finally {
      await http.close();
    }
  });
});
