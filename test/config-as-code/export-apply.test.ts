import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as apply } from '../../server/cli/commands/apply.ts';
import { run as exportCmd } from '../../server/cli/commands/export.ts';
import { layoutFiles } from '../../server/config-as-code/read-dir.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';

let populated: ServedApp;
let empty: ServedApp;
let work: string;

const capture = () => {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    lines,
    out: { log: (l: string) => lines.out.push(l), error: (l: string) => lines.err.push(l) },
    text: () => [...lines.out, ...lines.err].join('\n'),
  };
};
const read = (dir: string) => Object.fromEntries(layoutFiles(dir).map((p) => [p, readFileSync(join(dir, p), 'utf8')]));
const auditCount = async (s: ServedApp) => (await s.request('GET', '/v1/audit?order=desc&limit=1')).json.items[0]?.seq ?? 0;
const dir = (name: string) => join(work, name);
const keysSorted = (v: unknown): boolean =>
  Array.isArray(v)
    ? v.every(keysSorted)
    : v === null || typeof v !== 'object'
      ? true
      : Object.keys(v).join('\u0000') === Object.keys(v).sort().join('\u0000') && Object.values(v).every(keysSorted);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'toolgate-config-'));
  populated = await startServedApp();
  empty = await startServedApp({ seed: false });
  // More than the demo has: tests, a grant that expires, and an MCP server (no tools synced from it).
  const tests = await populated.request('GET', '/v1/tenants/acme-research/tests');
  const put = await populated.request('PUT', '/v1/tenants/acme-research/tests', {
    headers: { 'if-match': tests.headers.get('etag')! },
    body: {
      tests: [
        {
          name: 'research bot queries knowledge',
          request: { subject: 'agent:research-bot', groups: ['knowledge'] },
          expect: { visible: ['core__knowledge-query'] },
        },
      ],
    },
  });
  expect(put.status).toBe(200);
  const grant = await populated.request('POST', '/v1/tenants/acme-research/grants', {
    body: { connectionId: 'conn-archive', label: 'Archive', subjects: ['analyst'], tools: ['core__knowledge-*'], expiresAt: '2030-01-01T00:00:00.000Z' },
  });
  expect(grant.status).toBe(201);
  const mcp = await populated.request('POST', '/v1/mcp-servers', {
    body: { id: 'docs', label: 'Docs', transport: { kind: 'http', url: 'https://mcp.example.com/mcp' } },
  });
  expect(mcp.status).toBe(201);
});

afterAll(async () => {
  await populated?.close();
  await empty?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('toolgate export and apply', () => {
  it('round trip: export a populated server, apply to an empty one, export again: byte-identical files', async () => {
    const first = capture();
    expect(await exportCmd(['--dir', dir('a')], first.out, { env: populated.env })).toBe(0);
    const a = read(dir('a'));
    expect(Object.keys(a)).toEqual(
      expect.arrayContaining([
        'groups/default.json',
        'groups/knowledge.json',
        'states/undefined.json',
        'tools/core__knowledge-query.json',
        'mcp-servers/docs.json',
        'tenants/acme-research/tenant.json',
        'tenants/acme-research/policy.json',
        'tenants/acme-research/tests.json',
        'tenants/acme-research/grants/conn-archive.json',
        'tenants/globex-eng/tenant.json',
      ]),
    );
    // Deterministic bytes, nothing the server made, no secret.
    for (const text of Object.values(a)) {
      expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
      expect(keysSorted(JSON.parse(text))).toBe(true);
      expect(text).not.toMatch(/"(version|createdAt|updatedAt|definitionHash|lastSync|tenant)"/);
      expect(text).not.toContain('tg_test_admin_token');
    }
    expect(JSON.parse(a['tenants/acme-research/tenant.json'])).toEqual({ id: 'acme-research', name: expect.any(String) });

    const applied = capture();
    expect(await apply(['--dir', dir('a'), '--reason', 'restore from git'], applied.out, { env: empty.env })).toBe(0);
    expect(applied.text()).toMatch(/applied \d+ changes/);
    // Groups before the tools in them, tools before the policies naming them.
    const order = applied.lines.out;
    const at = (p: string) => order.findIndex((l) => l.endsWith(p));
    expect(at('groups/knowledge.json')).toBeLessThan(at('tools/core__knowledge-query.json'));
    expect(at('tools/core__knowledge-query.json')).toBeLessThan(at('tenants/acme-research/tenant.json'));
    expect(at('tenants/acme-research/tenant.json')).toBeLessThan(at('tenants/acme-research/grants/conn-archive.json'));

    expect(await exportCmd(['--dir', dir('b')], capture().out, { env: empty.env })).toBe(0);
    expect(read(dir('b'))).toEqual(a);
  });

  it('applying the same directory twice changes nothing: an empty plan and no audit event', async () => {
    const before = await auditCount(empty);
    const plan = capture();
    expect(await apply(['--dir', dir('a'), '--plan'], plan.out, { env: empty.env })).toBe(0);
    expect(plan.lines.out).toEqual(['No changes: the server matches the directory.']);
    const again = capture();
    expect(await apply(['--dir', dir('a'), '--prune', '--reason', 'again'], again.out, { env: empty.env })).toBe(0);
    expect(again.text()).toContain('no changes');
    expect(await auditCount(empty)).toBe(before);
  });

  it('plans creates, updates with a readable diff and deletes (only with --prune), and changes nothing', async () => {
    cpSync(dir('a'), dir('edit'), { recursive: true });
    const group = JSON.parse(readFileSync(join(dir('edit'), 'groups/knowledge.json'), 'utf8'));
    writeFileSync(join(dir('edit'), 'groups/knowledge.json'), JSON.stringify({ ...group, description: 'Knowledge tools, reviewed' }));
    writeFileSync(join(dir('edit'), 'states/archived.json'), JSON.stringify({ name: 'archived', description: 'Done and filed' }));
    rmSync(join(dir('edit'), 'tenants/acme-research/grants/conn-archive.json'));
    const before = await auditCount(empty);

    const plan = capture();
    expect(await apply(['--dir', dir('edit'), '--plan'], plan.out, { env: empty.env })).toBe(0);
    expect(plan.lines.out).toContain('create  states/archived.json');
    expect(plan.lines.out).toContain('update  groups/knowledge.json');
    expect(plan.lines.out).toContain(`    -  "description": ${JSON.stringify(group.description)},`);
    expect(plan.lines.out).toContain('    +  "description": "Knowledge tools, reviewed",');
    expect(plan.text()).not.toMatch(/^delete/m);
    expect(plan.lines.out.at(-1)).toBe('Plan: 1 to create, 1 to update, 0 to delete.');

    const prunePlan = capture();
    expect(await apply(['--dir', dir('edit'), '--plan', '--prune'], prunePlan.out, { env: empty.env })).toBe(0);
    expect(prunePlan.lines.out).toContain('delete  tenants/acme-research/grants/conn-archive.json');
    expect(prunePlan.lines.out.at(-1)).toBe('Plan: 1 to create, 1 to update, 1 to delete.');
    expect(await auditCount(empty)).toBe(before);

    const done = capture();
    expect(await apply(['--dir', dir('edit'), '--prune', '--reason', 'file the archive (100% reviewed, ✓)'], done.out, { env: empty.env })).toBe(0);
    expect((await empty.request('GET', '/v1/tenants/acme-research/grants/conn-archive')).status).toBe(404);
    expect((await empty.request('GET', '/v1/groups/knowledge')).json.description).toBe('Knowledge tools, reviewed');
    const events = (await empty.request('GET', '/v1/audit?order=desc&limit=3')).json.items;
    expect(events.map((e: { reason: string }) => e.reason)).toEqual(Array(3).fill('file the archive (100% reviewed, ✓)'));
  });

  it('refuses a hand-edited file with an error by file name and JSON pointer, and applies nothing', async () => {
    cpSync(dir('a'), dir('bad'), { recursive: true });
    writeFileSync(join(dir('bad'), 'groups/knowledge.json'), JSON.stringify({ name: 'knowledge', description: 'ok again' }));
    const tool = JSON.parse(readFileSync(join(dir('bad'), 'tools/core__text-completion.json'), 'utf8'));
    writeFileSync(join(dir('bad'), 'tools/core__text-completion.json'), JSON.stringify({ ...tool, effect: 'sometimes' }));
    writeFileSync(join(dir('bad'), 'states/research.json'), '{ "name": "research", ');
    writeFileSync(join(dir('bad'), 'groups/other.json'), JSON.stringify({ name: 'renamed' }));
    const before = await auditCount(empty);
    const r = capture();
    expect(await apply(['--dir', dir('bad'), '--reason', 'broken'], r.out, { env: empty.env })).toBe(2);
    expect(r.lines.err[0]).toMatch(/has 3 problems; nothing was applied/);
    expect(r.text()).toContain('tools/core__text-completion.json /effect: must be one of "read_only", "state_change", "external_side_effect"');
    expect(r.text()).toMatch(/states\/research\.json: is not JSON/);
    expect(r.text()).toContain('groups/other.json /name: must be "other", the name of the file');
    expect(await auditCount(empty)).toBe(before);
  });

  it("stops at the first refusal, naming the file and the server's problem, and reports what it applied", async () => {
    cpSync(dir('a'), dir('refused'), { recursive: true });
    writeFileSync(join(dir('refused'), 'groups/knowledge.json'), JSON.stringify({ name: 'knowledge', description: 'before the refusal', includes: [] }));
    const policy = JSON.parse(readFileSync(join(dir('refused'), 'tenants/acme-research/policy.json'), 'utf8'));
    policy.roles.researcher.allow.push('core__no-such-tool');
    writeFileSync(join(dir('refused'), 'tenants/acme-research/policy.json'), JSON.stringify(policy));
    writeFileSync(join(dir('refused'), 'tenants/acme-research/tests.json'), JSON.stringify({ tests: [] }));
    const r = capture();
    expect(await apply(['--dir', dir('refused'), '--reason', 'half'], r.out, { env: empty.env })).toBe(1);
    expect(r.text()).toContain('refused: tenants/acme-research/policy.json (update): 400 unknown_reference');
    expect(r.text()).toContain('/roles/researcher/allow/2: unknown tool "core__no-such-tool"');
    expect(r.text()).toContain('applied before the refusal (1):\n  updated groups/knowledge.json');
    expect((await empty.request('GET', '/v1/groups/knowledge')).json.description).toBe('before the refusal');
    // Later changes in the plan (the tests) were not sent.
    expect((await empty.request('GET', '/v1/tenants/acme-research/tests')).json.tests).toHaveLength(1);
  });

  it('sends If-Match with what it read: a change made meanwhile is refused, not overwritten', async () => {
    cpSync(dir('a'), dir('race'), { recursive: true });
    writeFileSync(join(dir('race'), 'states/research.json'), JSON.stringify({ name: 'research', description: 'from git' }));
    let raced = false;
    const racingFetch: typeof fetch = async (input, init) => {
      if (!raced && init?.method === 'PUT') {
        raced = true;
        const cur = await empty.request('GET', '/v1/states/research');
        await empty.request('PUT', '/v1/states/research', {
          headers: { 'if-match': cur.headers.get('etag')! },
          body: { name: 'research', description: 'edited in the console meanwhile' },
        });
      }
      return fetch(input, init);
    };
    const r = capture();
    expect(await apply(['--dir', dir('race'), '--reason', 'race'], r.out, { env: empty.env, fetch: racingFetch })).toBe(1);
    expect(r.text()).toContain('refused: states/research.json (update): 412 precondition_failed');
    expect((await empty.request('GET', '/v1/states/research')).json.description).toBe('edited in the console meanwhile');
  });

  it('exports imported tools with their source; apply updates only what an admin owns and never creates or approves one', async () => {
    const now = new Date().toISOString();
    const imported = {
      id: 'mcp__docs__search',
      description: 'Search the docs',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      effect: 'external_side_effect' as const,
      groups: ['default'],
      status: 'quarantined' as const,
      requiresConnection: false,
      source: { kind: 'mcp' as const, server: 'docs', originalName: 'search' },
    };
    await populated.deps.database.change((tx) => toolStore.insert(tx, imported.id, imported, now));
    expect(await exportCmd(['--dir', dir('mcp')], capture().out, { env: populated.env })).toBe(0);
    const path = join(dir('mcp'), 'tools/mcp__docs__search.json');
    const file = JSON.parse(readFileSync(path, 'utf8'));
    expect(file.source).toEqual({ kind: 'mcp', server: 'docs', originalName: 'search' });

    // Applied elsewhere it is not created: it must come from a sync.
    const elsewhere = capture();
    expect(await apply(['--dir', dir('mcp'), '--plan'], elsewhere.out, { env: empty.env })).toBe(0);
    expect(elsewhere.text()).toContain('note    tools/mcp__docs__search.json: not on the server: imported tools arrive by syncing MCP server docs');

    // Here: admin fields change, the definition and the quarantine stay.
    writeFileSync(
      path,
      JSON.stringify({ ...file, groups: ['knowledge'], status: 'active', description: 'Rewritten by hand', redaction: { allow: ['title'] } }),
    );
    const r = capture();
    expect(await apply(['--dir', dir('mcp'), '--reason', 'sort the docs tool'], r.out, { env: populated.env })).toBe(0);
    expect(r.text()).toContain('status stays quarantined');
    expect(r.text()).toContain('updated tools/mcp__docs__search.json');
    const now2 = (await populated.request('GET', '/v1/tools/mcp__docs__search')).json;
    expect(now2).toMatchObject({
      groups: ['knowledge'],
      status: 'quarantined',
      description: 'Search the docs',
      redaction: { allow: ['title'] },
      source: { kind: 'mcp', server: 'docs' },
    });
    const twice = capture();
    expect(await apply(['--dir', dir('mcp'), '--plan', '--prune'], twice.out, { env: populated.env })).toBe(0);
    expect(twice.lines.out.at(-1)).toBe('No changes: the server matches the directory.');
  });

  it('exports into a working copy: files of entities gone are removed, other files stay', async () => {
    cpSync(dir('a'), dir('checkout'), { recursive: true });
    writeFileSync(join(dir('checkout'), 'README.md'), '# our Toolgate configuration\n');
    writeFileSync(join(dir('checkout'), 'tools/core__retired.json'), '{}');
    const r = capture();
    expect(await exportCmd(['--dir', dir('checkout')], r.out, { env: populated.env })).toBe(0);
    expect(r.text()).toContain('removed 1 of entities that no longer exist');
    expect(readFileSync(join(dir('checkout'), 'README.md'), 'utf8')).toBe('# our Toolgate configuration\n');
    expect(read(dir('checkout'))).not.toHaveProperty(['tools/core__retired.json']);
  });

  it('says what is missing instead of guessing', async () => {
    const noEnv = capture();
    expect(await apply(['--dir', dir('a'), '--plan'], noEnv.out, { env: {} })).toBe(2);
    expect(noEnv.text()).toContain('TOOLGATE_URL is not set');
    const noReason = capture();
    expect(await apply(['--dir', dir('a')], noReason.out, { env: empty.env })).toBe(2);
    expect(noReason.text()).toContain('--reason is required');
    const noDir = capture();
    expect(await apply(['--dir', join(work, 'nowhere'), '--plan'], noDir.out, { env: empty.env })).toBe(2);
    expect(noDir.text()).toContain('is not a directory');
    const badToken = capture();
    expect(await exportCmd(['--dir', dir('x')], badToken.out, { env: { ...empty.env, TOOLGATE_TOKEN: 'wrong' } })).toBe(1);
    expect(badToken.text()).toContain('401');
  });
});
