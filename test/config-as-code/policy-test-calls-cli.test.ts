// `toolgate test` runs policy tests' call expectations offline, argument constraints included.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run as testCmd } from '../../server/cli/commands/test.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { snapshot, tool } from '../engine/build.ts';

const work = mkdtempSync(join(tmpdir(), 'toolgate-test-calls-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const compiled = compileBundle(
  snapshot({
    policy: {
      roles: {
        builder: {
          groups: ['default'],
          allow: ['mcp__github__*'],
          constraints: [
            {
              tools: ['mcp__github__create_*'],
              otherwise: 'deny',
              arguments: { required: ['repo'], properties: { repo: { type: 'string', pattern: '^acme/' } } },
              reason: 'agents write only to acme repositories',
            },
          ],
        },
      },
      bindings: { 'agent:builder': ['builder'] },
    },
    tools: [tool('mcp__github__create_issue', { inputSchema: { type: 'object', properties: { repo: { type: 'string' }, title: { type: 'string' } } } })],
  }),
  { version: 1, previousRevision: null, issuedAt: new Date().toISOString() },
);
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const bundleFile = join(work, 'bundle.json');
writeFileSync(bundleFile, compiled.text);

const run = async (calls: unknown[]) => {
  const testsFile = join(work, `tests-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(testsFile, JSON.stringify({ tests: [{ name: 'repositories', request: { subject: 'agent:builder' }, expect: { calls } }] }));
  const lines: string[] = [];
  const code = await testCmd(['--bundle', bundleFile, '--tests', testsFile], { log: (l) => lines.push(l), error: (l) => lines.push(l) });
  return { code, text: lines.join('\n') };
};

describe('toolgate test with call expectations', () => {
  it('passes when decide answers as expected, and fails naming the call and the constraint seen', async () => {
    const ok = await run([
      { name: 'mcp__github__create_issue', arguments: { repo: 'acme/api', title: 't' }, decision: 'allow' },
      { name: 'mcp__github__create_issue', arguments: '{"repo":"other/x"}', decision: 'deny', errorCode: 'policy_denied' },
    ]);
    expect(ok).toMatchObject({ code: 0 });
    const bad = await run([{ name: 'mcp__github__create_issue', arguments: { repo: 'other/secret-name' }, decision: 'allow' }]);
    expect(bad.code).toBe(1);
    expect(bad.text).toContain('/tests/0/expect/calls/0');
    expect(bad.text).toContain('agents write only to acme repositories');
    expect(bad.text).not.toContain('secret-name');
  });

  it('refuses a tests file whose call expectation is malformed', async () => {
    const r = await run([{ name: 'mcp__github__create_issue', decision: 'maybe' }]);
    expect(r.code).toBe(2);
    expect(r.text).toContain('/tests/0/expect/calls/0/decision');
  });
});
