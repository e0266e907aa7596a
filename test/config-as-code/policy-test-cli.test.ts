import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as exportCmd } from '../../server/cli/commands/export.ts';
import { run as testCmd } from '../../server/cli/commands/test.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';

let s: ServedApp;
let work: string;

const capture = () => {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    lines,
    out: { log: (l: string) => lines.out.push(l), error: (l: string) => lines.err.push(l) },
    text: () => [...lines.out, ...lines.err].join('\n'),
  };
};
const file = (name: string, content: unknown) => {
  const p = join(work, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};

const tests = {
  tests: [
    {
      name: 'research bot queries knowledge',
      request: { subject: 'agent:research-bot', groups: ['knowledge'] },
      expect: { visible: ['core__knowledge-query'] },
    },
    {
      name: 'analysts need approval to update the graph',
      request: { subject: 'agent:analysis-bot', groups: ['write'], state: 'analysis' },
      expect: { decisions: { 'core__graph-update': 'require_approval' } },
    },
  ],
};

async function latestBundleFile(name: string) {
  const r = await fetch(`${s.url}/v1/tenants/acme-research/bundles/latest`, { headers: { authorization: `Bearer ${s.env.TOOLGATE_TOKEN}` } });
  return file(name, await r.text());
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'toolgate-test-cli-'));
  s = await startServedApp();
  const cur = await s.request('GET', '/v1/tenants/acme-research/tests');
  expect((await s.request('PUT', '/v1/tenants/acme-research/tests', { headers: { 'if-match': cur.headers.get('etag')! }, body: tests })).status).toBe(200);
  expect((await s.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'first' } })).status).toBe(201);
});

afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('toolgate test', () => {
  it('passes a published bundle against its tests (exit 0)', async () => {
    const c = capture();
    expect(await testCmd(['--bundle', await latestBundleFile('v1.json'), '--tests', file('tests.json', tests)], c.out)).toBe(0);
    expect(c.lines.out).toEqual([
      'ok    research bot queries knowledge',
      'ok    analysts need approval to update the graph',
      expect.stringMatching(/^2 passed, 0 failed \(tenant acme-research/),
    ]);
  });

  it('blocks a change that hides a tested tool: each failure printed, exit 1, from a bundle or from an exported directory', async () => {
    expect(await exportCmd(['--dir', join(work, 'config')], capture().out, { env: s.env })).toBe(0);
    const fromDir = capture();
    expect(await testCmd(['--dir', join(work, 'config'), '--tenant', 'acme-research'], fromDir.out)).toBe(0);

    // The edit a pull request would make: the researcher loses knowledge-query.
    const policyPath = join(work, 'config/tenants/acme-research/policy.json');
    const policy = JSON.parse(readFileSync(policyPath, 'utf8'));
    policy.roles.researcher.allow = ['core__text-completion'];
    writeFileSync(policyPath, JSON.stringify(policy, null, 2));
    const edited = capture();
    expect(await testCmd(['--dir', join(work, 'config'), '--tenant', 'acme-research'], edited.out)).toBe(1);
    expect(edited.lines.out[0]).toBe(
      'FAIL  research bot queries knowledge  /tests/0/expect/visible/0: expected core__knowledge-query visible, saw core__knowledge-query hidden (not_allowed)',
    );
    expect(edited.lines.err.at(-1)).toMatch(/^1 passed, 1 failed/);

    // The same edit published by force: the bundle fails the same test.
    const pol = await s.request('GET', '/v1/tenants/acme-research/policy');
    expect((await s.request('PUT', '/v1/tenants/acme-research/policy', { headers: { 'if-match': pol.headers.get('etag')! }, body: policy })).status).toBe(200);
    expect((await s.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'narrow' } })).status).toBe(422);
    expect((await s.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'narrow anyway', force: true } })).status).toBe(201);
    const fromBundle = capture();
    expect(
      await testCmd(['--bundle', await latestBundleFile('v2.json'), '--tests', join(work, 'config/tenants/acme-research/tests.json')], fromBundle.out),
    ).toBe(1);
    expect(fromBundle.lines.out[0]).toContain('/tests/0/expect/visible/0');
  });

  it('refuses files it cannot use with a clear message and exit 2', async () => {
    const bundle = await latestBundleFile('v-any.json');
    const cases: [string[], RegExp][] = [
      [['--bundle', bundle], /usage: toolgate test/],
      [['--bundle', join(work, 'missing.json'), '--tests', file('t.json', tests)], /cannot read .*missing\.json: no such file/],
      [['--bundle', bundle, '--tests', file('broken.json', '{"tests": [')], /broken\.json is not JSON/],
      [
        ['--bundle', bundle, '--tests', file('invalid.json', { tests: [{ name: 'x', request: { subject: 'a' }, expect: { visible: 'core__x' } }] })],
        /invalid\.json is not a valid tests file:\n {2}\/tests\/0\/expect\/visible: must be array/,
      ],
      [['--bundle', file('not-a-bundle.json', tests), '--tests', file('t2.json', tests)], /not-a-bundle\.json is not a usable bundle/],
      [['--dir', join(work, 'nowhere'), '--tenant', 'acme-research'], /nowhere: is not a directory/],
      [['--dir', join(work, 'config'), '--tenant', 'nope'], /has no tenants\/nope\/tenant\.json/],
    ];
    for (const [args, message] of cases) {
      const c = capture();
      expect(await testCmd(args, c.out), args.join(' ')).toBe(2);
      expect(c.lines.err.join('\n')).toMatch(message);
    }
  });
});
