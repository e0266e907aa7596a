// Attack (on availability): save something the API accepts but the compiler refuses (a `role:`
// subject, a grant naming nobody, a profile both enabling and disabling a tool, a delete that
// leaves a dangling name…), so every publish of the tenant answers 422 from then on.
// Property: over random sequences of changes through the HTTP API, after every accepted change
// every tenant's draft compiles.
import { afterEach, describe, expect, it } from 'vitest';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { loadDraftSnapshot } from '../../server/store/snapshot.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { rng } from '../support/seeded-random.ts';
import { importQuarantinedTool } from './support.ts';

const GROUPS = ['default', 'g1', 'g2', 'g3', 'ghost'];
const STATES = ['undefined', 's1', 's2', 'nowhere'];
const CORE = ['core__a', 'core__b', 'core__c', 'core__d'];
const IMPORTED = ['mcp__srv__x', 'mcp__srv__y', 'mcp__srv__z'];
const TOOLS = [...CORE, ...IMPORTED, 'core__ghost'];
const ROLES = ['r1', 'r2', 'r3'];
const SUBJECTS = ['agent:a', 'agent:b', 'user:c', 'role:r1', 'r1'];
const TENANTS = ['t1', 't2', 't3'];
const CONNECTIONS = ['c1', 'c2'];
const SCHEMAS: Record<string, unknown>[] = [
  { type: 'object', properties: { q: { type: 'string' } } },
  { type: 'object', properties: { q: { type: 'string' } } },
  { type: 'object', properties: { q: { type: 'string' } } },
  { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } },
  { type: 'object', properties: { q: { oneOf: [{ type: 'string' }] } } },
  { type: 'object', $defs: { enum: { properties: { connectionId: { type: 'string' } } } }, properties: { q: { $ref: '#/$defs/enum' } } },
  { type: 'object', properties: { q: { type: 'string', pattern: '(?=x)' } } },
];

type Step = { method: string; path: string; body?: unknown; ifMatch?: boolean };

function randomStep(r: ReturnType<typeof rng>): Step {
  const tenant = r.pick(TENANTS);
  const glob = () => (r.chance(0.5) ? `${r.pick(['core', 'mcp'])}__*` : r.pick(TOOLS));
  switch (r.int(13)) {
    case 0:
    case 1: {
      const id = r.pick(CORE);
      const body = {
        id,
        description: id,
        inputSchema: r.pick(SCHEMAS),
        effect: r.pick(['read_only', 'state_change', 'external_side_effect']),
        groups: r.chance(0.7) ? r.some(GROUPS.slice(0, 3), 2) : r.some(GROUPS, 2),
        ...(r.chance(0.3) ? { state: r.pick(STATES) } : {}),
        ...(r.chance(0.3) ? { availableInStates: r.some(STATES, 2) } : {}),
        ...(r.chance(0.7) ? { redaction: { allow: ['x'] } } : {}),
        status: r.pick(['active', 'active', 'disabled', 'quarantined']),
      };
      return r.chance(0.5) ? { method: 'POST', path: '/v1/tools', body } : { method: 'PUT', path: `/v1/tools/${id}`, body, ifMatch: true };
    }
    case 2: {
      const patch: Record<string, unknown> = {};
      if (r.chance(0.5)) patch.groups = r.chance(0.7) ? r.some(GROUPS.slice(0, 3), 2) : r.some(GROUPS, 2);
      if (r.chance(0.3)) patch.status = r.pick(['active', 'disabled', 'quarantined', null]);
      if (r.chance(0.3)) patch.state = r.pick([...STATES, null]);
      if (r.chance(0.3)) patch.redaction = r.chance(0.8) ? { allow: ['x'] } : null;
      return { method: 'PATCH', path: `/v1/tools/${r.pick([...CORE, ...IMPORTED])}`, body: patch, ifMatch: true };
    }
    case 3:
      return { method: 'DELETE', path: `/v1/tools/${r.pick(CORE)}`, ifMatch: true };
    case 4: {
      const name = r.pick(GROUPS.slice(1));
      const body = { name, includes: r.some(GROUPS, 2) };
      return r.chance(0.5) ? { method: 'POST', path: '/v1/groups', body } : { method: 'PUT', path: `/v1/groups/${name}`, body, ifMatch: true };
    }
    case 5:
      return r.chance(0.5)
        ? { method: 'DELETE', path: `/v1/groups/${r.pick(GROUPS)}`, ifMatch: true }
        : { method: 'DELETE', path: `/v1/states/${r.pick(STATES)}`, ifMatch: true };
    case 6:
      return { method: 'POST', path: '/v1/states', body: { name: r.pick(STATES) } };
    case 7:
    case 8: {
      const roles: Record<string, unknown> = {};
      const known = r.chance(0.7);
      for (const name of r.some(ROLES, 3))
        roles[name] = {
          groups: r.chance(0.5) ? ['*'] : r.some(known ? GROUPS.slice(0, 3) : GROUPS, 2),
          allow: Array.from({ length: r.int(3) }, glob),
          deny: Array.from({ length: r.int(2) }, glob),
        };
      const bindings: Record<string, string[]> = {};
      for (const s of r.some(known ? SUBJECTS.slice(0, 3) : SUBJECTS, 3)) bindings[s] = r.some(known ? Object.keys(roles) : ROLES, 2);
      const profiles: Record<string, unknown> = {};
      if (r.chance(0.4)) profiles.openai = { enable: r.some(TOOLS, 2), disable: r.some(TOOLS, 2) };
      return { method: 'PUT', path: `/v1/tenants/${tenant}/policy`, body: { roles, bindings, profiles }, ifMatch: true };
    }
    case 9: {
      const connectionId = r.pick(CONNECTIONS);
      const body = {
        connectionId,
        subjects: r
          .some([...SUBJECTS, ...ROLES, 'nobody'], 2)
          .concat('r1')
          .slice(0, 3),
        tools: [glob()],
      };
      return r.chance(0.5)
        ? { method: 'POST', path: `/v1/tenants/${tenant}/grants`, body }
        : { method: 'PUT', path: `/v1/tenants/${tenant}/grants/${connectionId}`, body, ifMatch: true };
    }
    case 10:
      return { method: 'DELETE', path: `/v1/tenants/${tenant}/grants/${r.pick(CONNECTIONS)}`, ifMatch: true };
    case 11:
      return { method: 'APPROVE', path: `/v1/tools/${r.pick(IMPORTED)}/approve` };
    default:
      return r.chance(0.5)
        ? {
            method: 'POST',
            path: '/v1/tenants',
            body: {
              id: tenant,
              name: tenant,
              ...(r.chance(0.5) ? { policy: { roles: { r1: { groups: ['*'], allow: [glob()] } }, bindings: { [r.pick(SUBJECTS)]: ['r1'] } } } : {}),
            },
          }
        : { method: 'DELETE', path: `/v1/tenants/${tenant}`, ifMatch: true };
  }
}

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function send(app: TestApp, step: Step) {
  if (step.method === 'APPROVE') {
    const tool = await app.request('GET', step.path.replace(/\/approve$/, ''));
    return app.request('POST', step.path, { body: { definitionHash: tool.json?.definitionHash }, headers: { 'if-match': tool.headers.get('etag') ?? '"0"' } });
  }
  const headers: Record<string, string> = {};
  if (step.ifMatch) {
    const current = await app.request('GET', step.path);
    headers['if-match'] = current.headers.get('etag') ?? '"1"';
  }
  return app.request(step.method, step.path, { body: step.body, headers });
}

async function draftsCompile(app: TestApp): Promise<string[]> {
  const db = app.deps.database.db;
  const failures: string[] = [];
  for (const { id } of await db.selectFrom('tenants').select('id').execute()) {
    const snapshot = (await loadDraftSnapshot(db, id))!;
    const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
    if (!r.ok) failures.push(`${id}: ${r.errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`);
  }
  return failures;
}

describe('what saves, publishes', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`keeps every tenant's draft compiling after each accepted change (seed ${seed})`, async () => {
      t = await startTestApp({ seed: false });
      for (const name of ['x', 'y', 'z']) await importQuarantinedTool(t, 'srv', name);
      for (const name of ['g1', 'g2']) expect((await t.request('POST', '/v1/groups', { body: { name } })).status).toBe(201);
      expect((await t.request('POST', '/v1/states', { body: { name: 's1' } })).status).toBe(201);
      for (const id of ['t1', 't2']) expect((await t.request('POST', '/v1/tenants', { body: { id, name: id } })).status).toBe(201);
      const r = rng(seed);
      const log: string[] = [];
      let accepted = 0;
      for (let i = 0; i < 200; i++) {
        const step = randomStep(r);
        const res = await send(t, step);
        log.push(`${step.method} ${step.path} ${JSON.stringify(step.body ?? '')} → ${res.status}`);
        expect(res.status, `seed ${seed} step ${i}: a 5xx\n${log.slice(-5).join('\n')}\n${res.text}`).toBeLessThan(500);
        if (res.status >= 300) continue;
        accepted++;
        const failures = await draftsCompile(t);
        if (failures.length)
          throw new Error(
            `seed ${seed} step ${i}: accepted, then the draft does not compile:\n${failures.join('\n')}\nlast steps:\n${log.slice(-8).join('\n')}`,
          );
      }
      // The generator must reach both answers, not only refusals.
      expect(accepted).toBeGreaterThan(30);
      expect(accepted).toBeLessThan(200);
    });
  }
});

describe('the examples, one by one', () => {
  const put = async (app: TestApp, path: string, body: unknown) => {
    const current = await app.request('GET', path);
    return app.request('PUT', path, { body, headers: { 'if-match': current.headers.get('etag')! } });
  };

  it('refuses a binding for subject role:x at save, naming it', async () => {
    t = await startTestApp();
    const r = await put(t, '/v1/tenants/acme-research/policy', { roles: { x: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'role:x': ['x'] } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/bindings/role:x' }));
  });

  it('refuses a grant whose subject is neither a role nor a bound subject', async () => {
    t = await startTestApp();
    const r = await t.request('POST', '/v1/tenants/acme-research/grants', { body: { connectionId: 'c9', subjects: ['agent:nobody'], tools: ['core__*'] } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/subjects/0' })]);
  });

  it('refuses a profile that both enables and disables one tool', async () => {
    t = await startTestApp();
    const { tenant: _t, version: _v, createdAt: _c, updatedAt: _u, ...policy } = (await t.request('GET', '/v1/tenants/acme-research/policy')).json;
    policy.profiles = { openai: { enable: ['core__knowledge-query'], disable: ['core__knowledge-query'] } };
    const r = await put(t, '/v1/tenants/acme-research/policy', policy);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/profiles/openai/disable/0' })]);
  });

  it('refuses with 409 a policy edit that would orphan a grant, naming the grant', async () => {
    t = await startTestApp();
    const r = await put(t, '/v1/tenants/acme-research/policy', { roles: {}, bindings: {} });
    expect(r.status).toBe(409);
    expect(r.json.errors[0].pointer).toMatch(/^\/tenants\/acme-research\/grants\//);
    expect((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'still publishes' } })).status).toBe(201);
  });
});
