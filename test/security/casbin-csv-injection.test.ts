// Attack: a subject carrying CSV syntax (`agent:x, role:admin, t`) goes verbatim into the bundle's
// Casbin `g` rows; a runtime in another language that loads them as a CSV policy file then reads
// a different policy than the one compiled (a new binding, a shifted column, a lost row).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAdapter, newEnforcer } from 'casbin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag } from './support.ts';

const HOSTILE = [
  'agent:evil, role:admin, acme-research',
  'agent:"quoted"',
  "agent:o'brien",
  'agent:(unbalanced',
  ' agent:padded',
  'agent:new\nline',
  'agent:tab\there',
  'agent:back\\slash',
  'agent:#comment',
  'agent:nbsp\u00a0',
];
const pointerOf = (key: string) => `/bindings/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('subjects are CSV-safe by schema', () => {
  for (const subject of HOSTILE) {
    it(`refuses binding ${JSON.stringify(subject)} with 400 naming its pointer`, async () => {
      const r = await t.request('PUT', '/v1/tenants/acme-research/policy', {
        body: { roles: { researcher: { groups: ['*'], allow: ['core__*'] }, admin: { groups: ['*'], allow: ['*'] } }, bindings: { [subject]: ['researcher'] } },
        headers: { 'if-match': await etag(t, '/v1/tenants/acme-research/policy') },
      });
      expect(r.status).toBe(400);
      expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: pointerOf(subject) }));
    });
  }

  it('refuses them as grant subjects and simulate subjects too', async () => {
    for (const subject of HOSTILE.slice(0, 4)) {
      const g = await t.request('POST', '/v1/tenants/acme-research/grants', { body: { connectionId: 'c-1', subjects: [subject], tools: ['core__*'] } });
      expect(g.status).toBe(400);
      expect(g.json.errors).toContainEqual(expect.objectContaining({ pointer: '/subjects/0' }));
      const s = await t.request('POST', '/v1/tenants/acme-research/simulate', { body: { subject } });
      expect(s.status).toBe(400);
    }
  });

  it('makes the compiler refuse a stored binding that predates the rule', () => {
    const r = compileBundle(
      snapshot({
        tools: [tool('core__a')],
        policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: Object.fromEntries(HOSTILE.map((s) => [s, ['r']])) },
      }),
      { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) for (const s of HOSTILE) expect(r.errors.map((e) => e.pointer)).toContain(`/policy${pointerOf(s)}`);
  });

  it('accepts only subjects that stay intact through a CSV policy file read by node-casbin', async () => {
    const subjects = ['user:alice@example.com', 'agent:a/b|c+d=e~f!g$h%i&j*k?l^m;n[o]p{q}r<s>t`u', 'user:ünïcødé-名前'];
    const { tenant: _t, version: _v, createdAt: _c, updatedAt: _u, ...policy } = (await t.request('GET', '/v1/tenants/acme-research/policy')).json;
    policy.bindings[HOSTILE[0]] = ['researcher'];
    for (const s of subjects) policy.bindings[s] = ['researcher'];
    const refused = await t.request('PUT', '/v1/tenants/acme-research/policy', {
      body: policy,
      headers: { 'if-match': await etag(t, '/v1/tenants/acme-research/policy') },
    });
    expect(refused.json.errors).toEqual([expect.objectContaining({ pointer: pointerOf(HOSTILE[0]) })]);
    delete policy.bindings[HOSTILE[0]];
    const r = await t.request('PUT', '/v1/tenants/acme-research/policy', {
      body: policy,
      headers: { 'if-match': await etag(t, '/v1/tenants/acme-research/policy') },
    });
    expect(r.status).toBe(200);
    const published = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'csv' } });
    expect(published.status, published.text).toBe(201);
    const bundle = (await t.request('GET', '/v1/tenants/acme-research/bundles/latest')).json;
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-csv-'));
    try {
      writeFileSync(join(dir, 'model.conf'), bundle.casbin.model);
      writeFileSync(join(dir, 'policy.csv'), (bundle.casbin.policy as string[][]).map((row) => row.join(', ')).join('\n'));
      const e = await newEnforcer(join(dir, 'model.conf'), new FileAdapter(join(dir, 'policy.csv')));
      expect((await e.getGroupingPolicy()).map((row) => row[0])).toEqual(expect.arrayContaining(subjects));
      for (const s of subjects) expect(e.enforceSync(s, 'acme-research', 'core__knowledge-query', 'call'), s).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
