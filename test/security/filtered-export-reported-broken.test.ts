// An auditor who exported with a filter was told by `toolgate audit verify` that the chain was
// "BROKEN … events are missing or reordered". A filtered export now says so in its first line, and
// verify reports it as a partial export (exit 3): each event still matches its own hash, and an
// altered event inside it is still BROKEN (exit 1). A full export keeps verifying as before.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run as auditCli } from '../../server/cli/commands/audit.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  for (let i = 0; i < 3; i++) expect((await t.request('POST', '/v1/groups', { body: { name: `partial-${i}`, description: 'x' } })).status).toBe(201);
  expect((await t.request('POST', '/v1/tenants', { body: { id: 'beta-partial', name: 'Beta' } })).status).toBe(201);
});
afterAll(async () => t?.close());

async function verify(file: string): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  try {
    return { code: await auditCli(['verify', file]), out: lines.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
async function exported(query: string, name: string): Promise<{ file: string; text: string }> {
  const r = await t.request('GET', `/v1/audit/export${query}`);
  expect(r.status).toBe(200);
  const file = join(t.dir, name);
  writeFileSync(file, r.text);
  return { file, text: r.text };
}

describe('a filtered export', () => {
  for (const [what, query, format] of [
    ['by entity type (JSONL)', '?entityType=group', 'jsonl'],
    ['by tenant (JSONL)', '?tenant=beta-partial', 'jsonl'],
    ['by action (CSV)', '?action=create&format=csv', 'csv'],
    ['by time (CSV)', `?from=${encodeURIComponent('2000-01-01T00:00:00.000Z')}&entityType=group&format=csv`, 'csv'],
  ] as const) {
    it(`${what} says so in its first line and verifies as a partial export, never as broken`, async () => {
      const { file, text } = await exported(query, `partial-${format}-${what.length}.${format}`);
      const first = text.split(/\r?\n/, 1)[0];
      expect(first).toMatch(/partial/);
      if (format === 'jsonl') expect(JSON.parse(first)).toMatchObject({ format: 'toolgate.audit-export/v1', partial: true });
      const r = await verify(file);
      expect(r.out).not.toMatch(/BROKEN|missing/);
      expect(r.out).toMatch(/^partial export: .* events matching the filter \{/);
      expect(r.code).toBe(3);
    });
  }

  it('with an event altered inside it is still BROKEN (exit 1)', async () => {
    const { file, text } = await exported('?entityType=group', 'partial-altered.jsonl');
    const lines = text.trim().split('\n');
    const altered = lines[2].replace(/"entityId":"([^"]+)"/, '"entityId":"$1-altered"');
    expect(altered).not.toBe(lines[2]);
    lines[2] = altered;
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = await verify(file);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^BROKEN \(partial export, filter \{"entityType":"group"\}\): event \d+ \(line 3\) was altered/);
  });

  it('reordered inside is BROKEN too', async () => {
    const { file, text } = await exported('?entityType=group', 'partial-reordered.jsonl');
    const lines = text.trim().split('\n');
    [lines[1], lines[2]] = [lines[2], lines[1]];
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect((await verify(file)).code).toBe(1);
  });
});

describe('a full export', () => {
  for (const format of ['jsonl', 'csv'] as const) {
    it(`(${format}) has no partial line and verifies as the whole chain (exit 0)`, async () => {
      const { file, text } = await exported(`?format=${format}`, `full.${format}`);
      expect(text.split(/\r?\n/, 1)[0]).not.toMatch(/partial/);
      const r = await verify(file);
      expect(r.out).toMatch(/^ok: \d+ events, chain intact/);
      expect(r.code).toBe(0);
    });
  }

  it('with an event cut out is still BROKEN: events are missing', async () => {
    const { file, text } = await exported('', 'full-cut.jsonl');
    const lines = text.trim().split('\n');
    lines.splice(2, 1);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = await verify(file);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/BROKEN at seq 4: .*events are missing/);
  });
});
