import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../policy-schemas/types.gen.ts';
import { expireDecisions } from '../../server/decisions/decision-store.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { decisionRecord } from '../support/decision-records.ts';

let t: TestApp;
let runtime: string;
let otherRuntime: string;
beforeAll(async () => {
  t = await startTestApp();
  runtime = await t.tokenFor('runtime', ['acme-research']);
  otherRuntime = await t.tokenFor('runtime', ['globex-eng']);
});
afterAll(async () => t.close());

const tenant = 'acme-research';
const base = `/v1/tenants/${tenant}`;
let seq = 0;

function rec(over: Partial<DecisionRecord> = {}): DecisionRecord {
  seq++;
  return decisionRecord({ at: new Date(Date.now() - 60_000 + seq).toISOString(), toolCallId: `call-${seq}`, ...over });
}

async function postGzip(path: string, body: unknown, token = runtime, headers: Record<string, string> = {}) {
  const res = await t.app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
    body: gzipSync(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const stored = async (query = '') => (await t.request('GET', `${base}/decisions?limit=1000${query}`)).json.items as { toolCallId: string; id: number }[];

describe('POST /v1/tenants/:tenant/decisions', () => {
  it('stores a gzip batch from the tenant runtime (202) and lists it newest first', async () => {
    const records = [rec(), rec({ decision: 'deny', errorCode: 'policy_denied', reason: 'not_allowed', tool: 'core__graph-update' })];
    const r = await postGzip(`${base}/decisions`, { runtimeId: 'worker-a', records });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ accepted: 2 });
    const items = await stored('&runtimeId=worker-a');
    expect(items.map((i) => i.toolCallId)).toEqual([records[1].toolCallId, records[0].toolCallId]);
    expect(items[0]).toMatchObject({
      runtimeId: 'worker-a',
      subject: 'agent:research-bot',
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'not_allowed',
      groups: ['knowledge'],
    });
  });

  it('lists by decision time: a batch that arrives late (after an outage) pages in behind newer decisions', async () => {
    const recent = rec({ subject: 'agent:late-test' });
    expect((await t.request('POST', `${base}/decisions`, { token: runtime, body: { runtimeId: 'w-now', records: [recent] } })).status).toBe(202);
    const late = rec({ subject: 'agent:late-test', at: new Date(Date.now() - 3_600_000).toISOString() });
    expect((await t.request('POST', `${base}/decisions`, { token: runtime, body: { runtimeId: 'w-late', records: [late] } })).status).toBe(202);
    const page1 = await t.request('GET', `${base}/decisions?subject=agent:late-test&limit=1`);
    expect(page1.json.items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual([recent.toolCallId]);
    const page2 = await t.request('GET', `${base}/decisions?subject=agent:late-test&limit=1&cursor=${encodeURIComponent(page1.json.nextCursor)}`);
    expect(page2.json.items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual([late.toolCallId]);
    expect((await t.request('GET', `${base}/decisions?cursor=12`)).status).toBe(400);
  });

  it('takes plain JSON too', async () => {
    const r = await t.request('POST', `${base}/decisions`, { token: runtime, body: { runtimeId: 'worker-plain', records: [rec()] } });
    expect(r.status).toBe(202);
  });

  it('refuses the whole batch when one record is bad, naming it by pointer, and stores none of it', async () => {
    const before = (await stored()).length;
    const good = rec();
    const r = await postGzip(`${base}/decisions`, {
      runtimeId: 'worker-a',
      records: [good, { ...rec(), decision: 'maybe' }, { ...rec(), arguments: '{"q":"secret"}' }],
    });
    expect(r.status).toBe(400);
    const pointers = r.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toContain('/records/1/decision');
    expect(pointers).toContain('/records/2/arguments');
    expect((await stored()).length).toBe(before);
  });

  it('refuses records stamped far in the future, missing fields, and bodies that are not JSON', async () => {
    const future = await postGzip(`${base}/decisions`, { runtimeId: 'w', records: [rec({ at: new Date(Date.now() + 3 * 86400_000).toISOString() })] });
    expect(future.status).toBe(400);
    expect(future.json.errors[0].pointer).toBe('/records/0/at');
    const leap = await postGzip(`${base}/decisions`, { runtimeId: 'w', records: [rec(), rec({ at: '2016-12-31T23:59:60Z' })] });
    expect(leap.status).toBe(400);
    // A leap second is no instant a Date can hold: the shared date-time format refuses it.
    expect(leap.json.errors).toEqual([expect.objectContaining({ pointer: '/records/1/at', code: 'format' })]);
    expect((await t.request('GET', `${base}/decisions?to=${encodeURIComponent('9999-12-31T23:59:59-05:00')}`)).json.errors[0].pointer).toBe('/to');
    expect((await t.request('POST', `${base}/impact`, { body: { from: '2016-12-31T23:59:60Z' } })).json.errors[0].pointer).toBe('/from');
    const missing = await postGzip(`${base}/decisions`, { records: [] });
    expect(missing.status).toBe(400);
    expect(missing.json.errors[0].pointer).toBe('/runtimeId');
    const garbage = await postGzip(`${base}/decisions`, '{"runtimeId":');
    expect(garbage.status).toBe(400);
    expect(garbage.json.code).toBe('invalid_json');
    const notGzip = await t.app.request(`${base}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runtime}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'plain',
    });
    expect(notGzip.status).toBe(400);
    const brotli = await t.app.request(`${base}/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runtime}`, 'content-type': 'application/json', 'content-encoding': 'br' },
      body: 'x',
    });
    expect(brotli.status).toBe(415);
  });

  it('refuses a gzip body that expands beyond the bound (413) without storing anything', async () => {
    const before = (await stored()).length;
    const bomb = `{"runtimeId":"w","records":[],"pad":"${'a'.repeat(9 * 1024 * 1024)}"}`;
    const r = await postGzip(`${base}/decisions`, bomb);
    expect(r.status).toBe(413);
    expect((await stored()).length).toBe(before);
  });

  it('lets a runtime token write only its own tenant, and only runtimes (and admins) write', async () => {
    expect((await postGzip(`${base}/decisions`, { runtimeId: 'w', records: [rec()] }, otherRuntime)).status).toBe(404);
    const viewer = await t.tokenFor('viewer', [tenant]);
    expect((await postGzip(`${base}/decisions`, { runtimeId: 'w', records: [rec()] }, viewer)).status).toBe(403);
    expect((await t.request('GET', `${base}/decisions`, { token: runtime })).status).toBe(403);
    expect((await t.request('GET', `/v1/tenants/globex-eng/decisions`, { token: viewer })).status).toBe(404);
  });
});

describe('reading and exporting decisions', () => {
  it('filters by subject, tool, decision, error code, runtime and time, and pages newest first', async () => {
    const batch = [
      rec({ subject: 'agent:analysis-bot', tool: 'core__reset-workflow', decision: 'require_approval' }),
      rec({ subject: 'agent:analysis-bot', tool: 'core__nope', decision: 'deny', errorCode: 'unavailable' }),
      rec({ subject: 'agent:analysis-bot', tool: 'core__text-completion', decision: 'deny', errorCode: 'validation' }),
    ];
    expect((await postGzip(`${base}/decisions`, { runtimeId: 'worker-filter', records: batch })).status).toBe(202);
    const q = async (query: string) => (await t.request('GET', `${base}/decisions?${query}`)).json.items.map((i: { toolCallId: string }) => i.toolCallId);
    expect(await q('subject=agent:analysis-bot')).toEqual(batch.map((b) => b.toolCallId).reverse());
    expect(await q('subject=agent:analysis-bot&decision=deny')).toEqual([batch[2].toolCallId, batch[1].toolCallId]);
    expect(await q('errorCode=unavailable&runtimeId=worker-filter')).toEqual([batch[1].toolCallId]);
    expect(await q('tool=core__reset-workflow')).toEqual([batch[0].toolCallId]);
    expect(await q(`subject=agent:analysis-bot&from=${encodeURIComponent(batch[1].at)}&to=${encodeURIComponent(batch[2].at)}`)).toEqual([batch[1].toolCallId]);

    const page1 = await t.request('GET', `${base}/decisions?subject=agent:analysis-bot&limit=2`);
    expect(page1.json.items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual([batch[2].toolCallId, batch[1].toolCallId]);
    const page2 = await t.request('GET', `${base}/decisions?subject=agent:analysis-bot&limit=2&cursor=${encodeURIComponent(page1.json.nextCursor)}`);
    expect(page2.json.items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual([batch[0].toolCallId]);
    expect(page2.json.nextCursor).toBeNull();

    const bad = await t.request('GET', `${base}/decisions?decision=perhaps&limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/decision', '/limit']);
  });

  it('is readable by admins, editors, viewers and auditors of the tenant; only auditors and admins export', async () => {
    for (const role of ['editor', 'viewer'] as const) {
      const token = await t.tokenFor(role, [tenant]);
      expect((await t.request('GET', `${base}/decisions`, { token })).status).toBe(200);
      expect((await t.request('GET', `${base}/decisions/export`, { token })).status).toBe(403);
    }
    const auditor = await t.tokenFor('auditor');
    expect((await t.request('GET', `${base}/decisions`, { token: auditor })).status).toBe(200);
    expect((await t.request('GET', `${base}/decisions/export`, { token: auditor })).status).toBe(200);
  });

  it('exports every matching record as JSONL and as CSV', async () => {
    const auditor = await t.tokenFor('auditor');
    const all = await stored('&subject=agent:analysis-bot');
    const jsonl = await t.request('GET', `${base}/decisions/export?format=jsonl&subject=agent:analysis-bot`, { token: auditor });
    expect(jsonl.headers.get('content-type')).toMatch(/ndjson/);
    const lines = jsonl.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.toolCallId)).toEqual(all.map((a) => a.toolCallId));
    const csv = await t.request('GET', `${base}/decisions/export?format=csv&subject=agent:analysis-bot`, { token: auditor });
    const rows = csv.text.trim().split('\r\n');
    expect(rows[0]).toBe(
      'id,at,receivedAt,runtimeId,toolCallId,subject,groups,state,profile,facts,tool,decision,errorCode,reason,bundleVersion,revision,' +
        'constraintRole,constraintIndex,constraintOtherwise,constraintReason,approvalId,approvalBy',
    );
    expect(rows).toHaveLength(all.length + 1);
    expect(rows[1]).toContain('"[""knowledge""]"');
  });
});

describe('the constraint that decided and the approval that let a call through', () => {
  const subject = 'agent:constraint-log';
  const records = () => [
    // A reason a spreadsheet would run as a formula: the export must keep it text.
    rec({
      subject,
      tool: 'core__graph-update',
      decision: 'deny',
      errorCode: 'policy_denied',
      reason: 'constraint_denied',
      constraint: { role: 'researcher', index: 2, otherwise: 'deny', reason: '=HYPERLINK("http://x.example")' },
    }),
    rec({
      subject,
      tool: 'core__reset-workflow',
      decision: 'allow',
      reason: 'approved',
      constraint: { role: 'researcher', index: 0, otherwise: 'require_approval', reason: 'resets outside staging need a person' },
      approval: { id: 'apr_01', by: 'person' },
    }),
    rec({ subject, tool: 'core__reset-workflow', decision: 'allow', reason: 'client_confirmed', approval: { id: 'cc_01', by: 'client' } }),
    rec({ subject }),
  ];

  it('stores them as sent, lists them, and exports them as JSONL and as CSV columns', async () => {
    const sent = records();
    expect((await postGzip(`${base}/decisions`, { runtimeId: 'worker-constraints', records: sent })).status).toBe(202);
    const byCall = (items: { toolCallId: string }[]) => new Map(items.map((i) => [i.toolCallId, i]));

    const listed = byCall((await t.request('GET', `${base}/decisions?subject=${subject}`)).json.items);
    for (const r of sent) {
      const item = listed.get(r.toolCallId) as Record<string, unknown>;
      expect(item.constraint).toEqual(r.constraint);
      expect(item.approval).toEqual(r.approval);
    }
    expect(listed.get(sent[3].toolCallId)).not.toHaveProperty('constraint');
    expect(listed.get(sent[3].toolCallId)).not.toHaveProperty('approval');

    const auditor = await t.tokenFor('auditor');
    const jsonl = await t.request('GET', `${base}/decisions/export?format=jsonl&subject=${subject}`, { token: auditor });
    const lines = byCall(
      jsonl.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    expect(lines.size).toBe(sent.length);
    for (const r of sent) {
      const line = lines.get(r.toolCallId) as Record<string, unknown>;
      expect(line.constraint).toEqual(r.constraint);
      expect(line.approval).toEqual(r.approval);
      expect(line).not.toHaveProperty('arguments');
    }

    const csv = await t.request('GET', `${base}/decisions/export?format=csv&subject=${subject}`, { token: auditor });
    const [header, ...rows] = csv.text.trim().split('\r\n');
    const columns = header.split(',');
    const cells = new Map(rows.map((row) => parseCsvRow(row)).map((c) => [c[columns.indexOf('toolCallId')], c]));
    const cell = (call: string, column: string) => cells.get(call)![columns.indexOf(column)];
    expect(cell(sent[0].toolCallId, 'constraintRole')).toBe('researcher');
    expect(cell(sent[0].toolCallId, 'constraintIndex')).toBe('2');
    expect(cell(sent[0].toolCallId, 'constraintOtherwise')).toBe('deny');
    // Kept as text: one leading apostrophe, which a reader drops.
    expect(cell(sent[0].toolCallId, 'constraintReason')).toBe(`'=HYPERLINK("http://x.example")`);
    expect(cell(sent[0].toolCallId, 'approvalId')).toBe('');
    expect(cell(sent[1].toolCallId, 'constraintOtherwise')).toBe('require_approval');
    expect(cell(sent[1].toolCallId, 'constraintReason')).toBe('resets outside staging need a person');
    expect([cell(sent[1].toolCallId, 'approvalId'), cell(sent[1].toolCallId, 'approvalBy')]).toEqual(['apr_01', 'person']);
    expect([cell(sent[2].toolCallId, 'constraintRole'), cell(sent[2].toolCallId, 'approvalBy')]).toEqual(['', 'client']);
    expect(columns.slice(-6).map((c) => cell(sent[3].toolCallId, c))).toEqual(['', '', '', '', '', '']);
  });

  it('refuses a constraint or an approval of the wrong shape, naming it by pointer, and stores none of the batch', async () => {
    const before = (await stored()).length;
    const good = { role: 'researcher', index: 0, otherwise: 'deny', reason: 'r' };
    const cases: [unknown, string][] = [
      [{ constraint: { ...good, index: 100 } }, '/records/1/constraint/index'],
      [{ constraint: { ...good, index: '0' } }, '/records/1/constraint/index'],
      [{ constraint: { ...good, otherwise: 'allow' } }, '/records/1/constraint/otherwise'],
      [{ constraint: { ...good, reason: 'x'.repeat(201) } }, '/records/1/constraint/reason'],
      [{ constraint: { ...good, role: 'Not A Role!' } }, '/records/1/constraint/role'],
      // Arguments never ride along, not even inside the constraint.
      [{ constraint: { ...good, arguments: { to: 'a@b.example' } } }, '/records/1/constraint/arguments'],
      [{ constraint: 'researcher#0' }, '/records/1/constraint'],
      [{ approval: { id: 'apr_01', by: 'agent' } }, '/records/1/approval/by'],
    ];
    for (const [over, pointer] of cases) {
      const r = await postGzip(`${base}/decisions`, { runtimeId: 'worker-constraints', records: [rec(), { ...rec(), ...(over as object) }] });
      expect(r.status, pointer).toBe(400);
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    }
    const missing = await postGzip(`${base}/decisions`, {
      runtimeId: 'worker-constraints',
      records: [{ ...rec(), constraint: { role: 'researcher', index: 0, otherwise: 'deny' } }],
    });
    expect(missing.status).toBe(400);
    expect(missing.json.errors).toEqual([expect.objectContaining({ pointer: '/records/0/constraint/reason', message: 'is required' })]);
    expect((await stored()).length).toBe(before);
  });
});

/** One RFC 4180 row of quoted or empty cells, unquoted. */
function parseCsvRow(row: string): string[] {
  const cells: string[] = [];
  for (const m of row.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)) cells.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]);
  return cells;
}

describe('the cap per tenant and retention', () => {
  it('evicts the oldest records beyond the cap and counts them', async () => {
    const t2 = await startTestApp();
    try {
      const token = await t2.tokenFor('runtime', ['globex-eng']);
      t2.deps.config.decisions = { retentionDays: 30, maxPerTenant: 5 };
      const records = Array.from({ length: 8 }, () => rec({ subject: 'agent:coding-bot', groups: ['basic'] }));
      const res = await t2.app.request('/v1/tenants/globex-eng/decisions', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ runtimeId: 'noisy', records }),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ accepted: 8, evicted: 3 });
      const items = (await t2.request('GET', '/v1/tenants/globex-eng/decisions')).json.items;
      expect(items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual(
        records
          .slice(3)
          .map((r) => r.toolCallId)
          .reverse(),
      );
      const summary = (await t2.request('GET', '/v1/tenants/globex-eng/decisions/summary')).json;
      expect(summary.counters).toEqual({ stored: 5, evicted: 3, expired: 0 });
    } finally {
      await t2.close();
    }
  });

  it('evicts over several chunks down to the cap exactly, and only from the tenant that is over it', async () => {
    const t2 = await startTestApp();
    try {
      const acme = await t2.tokenFor('runtime', ['acme-research']);
      const globex = await t2.tokenFor('runtime', ['globex-eng']);
      const post = (tenantId: string, token: string, runtimeId: string, records: DecisionRecord[]) =>
        t2.app.request(`/v1/tenants/${tenantId}/decisions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ runtimeId, records }),
        });
      // Older than anything globex-eng reports: were eviction not confined to the tenant, these would go first.
      const hourAgo = Date.now() - 3_600_000;
      const acmeRecords = Array.from({ length: 3 }, (_, i) => rec({ at: new Date(hourAgo + i).toISOString() }));
      expect((await post('acme-research', acme, 'acme-w', acmeRecords)).status).toBe(202);

      t2.deps.config.decisions = { retentionDays: 30, maxPerTenant: 600 };
      const records = Array.from({ length: 1_300 }, () => rec({ subject: 'agent:coding-bot', groups: ['basic'] }));
      const res = await post('globex-eng', globex, 'noisy', records);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ accepted: 1_300, evicted: 700 });

      const kept = (await t2.request('GET', '/v1/tenants/globex-eng/decisions?limit=1000')).json.items as { toolCallId: string }[];
      expect(kept.map((i) => i.toolCallId)).toEqual(
        records
          .slice(700)
          .map((r) => r.toolCallId)
          .reverse(),
      );
      expect((await t2.request('GET', '/v1/tenants/globex-eng/decisions/summary')).json.counters).toEqual({ stored: 600, evicted: 700, expired: 0 });

      const acmeKept = (await t2.request('GET', '/v1/tenants/acme-research/decisions')).json.items as { toolCallId: string }[];
      expect(acmeKept.map((i) => i.toolCallId)).toEqual(acmeRecords.map((r) => r.toolCallId).reverse());
      expect((await t2.request('GET', '/v1/tenants/acme-research/decisions/summary')).json.counters).toEqual({ stored: 3, evicted: 0, expired: 0 });
    } finally {
      await t2.close();
    }
  });

  it('deletes records past retention and counts them', async () => {
    const t2 = await startTestApp();
    try {
      const token = await t2.tokenFor('runtime', ['globex-eng']);
      const old = rec({ subject: 'agent:coding-bot', groups: ['basic'], at: new Date(Date.now() - 40 * 86400_000).toISOString() });
      const fresh = rec({ subject: 'agent:coding-bot', groups: ['basic'] });
      await t2.app.request('/v1/tenants/globex-eng/decisions', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ runtimeId: 'w', records: [old, fresh] }),
      });
      const d = t2.deps.database;
      const expired = await expireDecisions((fn) => d.change(fn), d.db, new Date(Date.now() - 30 * 86400_000).toISOString());
      expect(expired).toBe(1);
      const items = (await t2.request('GET', '/v1/tenants/globex-eng/decisions')).json.items;
      expect(items.map((i: { toolCallId: string }) => i.toolCallId)).toEqual([fresh.toolCallId]);
      expect((await t2.request('GET', '/v1/tenants/globex-eng/decisions/summary')).json.counters).toEqual({ stored: 1, evicted: 0, expired: 1 });
    } finally {
      await t2.close();
    }
  });
});

describe('summary and the runtime list', () => {
  it('counts decisions over time and names the most denied tools and subjects with their reasons', async () => {
    const t2 = await startTestApp();
    try {
      const token = await t2.tokenFor('runtime', ['globex-eng']);
      const records = [
        rec({ subject: 'agent:review-bot', tool: 'core__host_exec', decision: 'deny', errorCode: 'policy_denied', reason: 'denied' }),
        rec({ subject: 'agent:review-bot', tool: 'core__host_exec', decision: 'deny', errorCode: 'policy_denied', reason: 'denied' }),
        rec({ subject: 'agent:coding-bot', tool: 'core__host_exec', decision: 'deny', errorCode: 'validation' }),
        rec({ subject: 'agent:coding-bot', tool: 'core__host_fs_read_file', decision: 'allow' }),
        rec({ subject: 'agent:coding-bot', tool: 'core__host_fs_write_file', decision: 'require_approval' }),
      ].map((r) => ({ ...r, groups: ['basic'] }));
      await t2.app.request('/v1/tenants/globex-eng/decisions', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ runtimeId: 'w-1', dropped: 17, records }),
      });
      const s = (await t2.request('GET', `/v1/tenants/globex-eng/decisions/summary?from=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}`))
        .json;
      const sum = (k: 'allow' | 'deny' | 'require_approval') => s.buckets.reduce((n: number, b: Record<string, number>) => n + b[k], 0);
      expect([sum('allow'), sum('deny'), sum('require_approval')]).toEqual([1, 3, 1]);
      expect(s.topDeniedTools[0]).toEqual({
        key: 'core__host_exec',
        calls: 3,
        reasons: [
          { reason: 'denied', calls: 2 },
          { reason: 'validation', calls: 1 },
        ],
      });
      expect(s.topDeniedSubjects.map((x: { key: string }) => x.key)).toEqual(['agent:review-bot', 'agent:coding-bot']);
      expect(s.runtimes).toEqual([expect.objectContaining({ runtimeId: 'w-1', received: 5, dropped: 17 })]);

      await t2.request('POST', '/v1/tenants/globex-eng/runtimes/status', { token, body: { runtimeId: 'w-1', version: null, health: 'none' } });
      const fleet = (await t2.request('GET', '/v1/tenants/globex-eng/runtimes')).json.runtimes;
      expect(fleet).toEqual([expect.objectContaining({ runtimeId: 'w-1', decisionsDropped: 17 })]);
    } finally {
      await t2.close();
    }
  });
});
