// Attack: reshape a body with `__proto__` / `constructor` / `prototype` keys so that what ajv
// validates is not what is stored, or simply ask PUT/PATCH to take a tool out of quarantine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCheckpoints } from '../../server/audit/checkpoint-verify.ts';
import { run as evaluateCli } from '../../server/cli/commands/evaluate.ts';
import { readTrustedKeys } from '../../server/cli/commands/verify.ts';
import { mergePatch } from '../../server/http/merge-patch.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';
import { etag, importQuarantinedTool, rawRequest } from './support.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await importQuarantinedTool(t, 'x', 'y');
  await importQuarantinedTool(t, 'x', 'z');
});
afterAll(async () => t.close());

const TOOL = 'mcp__x__y';
const status = async (id: string) => (await t.request('GET', `/v1/tools/${id}`)).json.status;

async function publishedTool(id: string) {
  const r = await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'check' } });
  expect([200, 201]).toContain(r.status);
  const latest = await t.request('GET', '/v1/tenants/acme-research/bundles/latest');
  return (latest.json.catalog.tools as Array<{ id: string; excluded?: string; effect?: string }>).find((x) => x.id === id);
}

describe('a __proto__ key cannot smuggle a tool out of quarantine', () => {
  it('refuses the merge patch of the report with 400 naming /__proto__, and the tool stays quarantined and unshipped', async () => {
    const r = await rawRequest(t, 'PATCH', `/v1/tools/${TOOL}`, '{"status": null, "__proto__": {"status": "quarantined"}, "redaction": {"allow": ["x"]}}', {
      'if-match': await etag(t, `/v1/tools/${TOOL}`),
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/__proto__' }));
    expect(await status(TOOL)).toBe('quarantined');
    expect(await publishedTool(TOOL)).toEqual(expect.objectContaining({ excluded: 'quarantined' }));
  });

  it('refuses the same trick in a PUT body', async () => {
    const r = await rawRequest(
      t,
      'PUT',
      `/v1/tools/${TOOL}`,
      `{"id": "${TOOL}", "description": "Imported y", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}, "effect": "read_only", "__proto__": {"status": "quarantined"}, "redaction": {"allow": ["x"]}}`,
      { 'if-match': await etag(t, `/v1/tools/${TOOL}`) },
    );
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: '/__proto__' }));
    expect(await status(TOOL)).toBe('quarantined');
  });

  it('refuses a __proto__ nested anywhere, naming its pointer', async () => {
    const r = await rawRequest(
      t,
      'PATCH',
      `/v1/tools/${TOOL}`,
      '{"redaction": {"allow": ["x"], "__proto__": {"allow": ["secret"]}}, "parallel": {"safe": true}}',
      {
        'if-match': await etag(t, `/v1/tools/${TOOL}`),
      },
    );
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([expect.objectContaining({ pointer: '/redaction/__proto__' })]);
  });

  it('refuses constructor and constructor.prototype keys, which pollute prototypes in other code', async () => {
    for (const text of ['{"constructor": {"prototype": {"status": "active"}}}', '{"groups": ["default"], "budgets": {"prototype": {"maxRuntimeMs": 1}}}']) {
      const r = await rawRequest(t, 'PATCH', `/v1/tools/${TOOL}`, text, { 'if-match': await etag(t, `/v1/tools/${TOOL}`) });
      expect(r.status).toBe(400);
      expect(r.json.errors[0].pointer).toMatch(/^\/(constructor|budgets\/prototype)/);
    }
    expect(({} as Record<string, unknown>).status).toBeUndefined();
    expect(await status(TOOL)).toBe('quarantined');
  });
});

describe('PUT and PATCH never take a tool out of quarantine', () => {
  it('answers 409 to a plain PATCH or PUT that asks for another status, or drops it', async () => {
    const before = await t.request('GET', `/v1/tools/${TOOL}`);
    const { version: _v, createdAt: _c, updatedAt: _u, ...doc } = before.json;
    const attempts: Array<[string, unknown]> = [
      ['PATCH', { status: 'active', redaction: { allow: ['x'] } }],
      ['PATCH', { status: 'disabled' }],
      ['PATCH', { status: null }],
      ['PUT', { ...doc, status: 'active' }],
      ['PUT', { ...doc, status: undefined }],
    ];
    for (const [method, body] of attempts) {
      const r = await t.request(method, `/v1/tools/${TOOL}`, { body, headers: { 'if-match': await etag(t, `/v1/tools/${TOOL}`) } });
      expect(r.status, `${method} ${JSON.stringify(body)}`).toBe(409);
      expect(r.json.detail).toContain(`POST /v1/tools/${TOOL}/approve`);
    }
    expect(await status(TOOL)).toBe('quarantined');
    // The rest of a quarantined tool stays editable.
    const r = await t.request('PATCH', '/v1/tools/mcp__x__z', {
      body: { effect: 'state_change', redaction: { allow: ['id'] } },
      headers: { 'if-match': await etag(t, '/v1/tools/mcp__x__z') },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'quarantined', effect: 'state_change' });
  });

  it('does not let a core tool be put in a quarantine nothing can approve it out of', async () => {
    const r = await t.request('PATCH', '/v1/tools/core__knowledge-query', {
      body: { status: 'quarantined' },
      headers: { 'if-match': await etag(t, '/v1/tools/core__knowledge-query') },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/status');
  });
});

describe('the same trick cannot drop a required field', () => {
  it('keeps effect on a tool: PATCH {"effect": null, "__proto__": {"effect": …}} is refused and publish still works', async () => {
    const r = await rawRequest(t, 'PATCH', '/v1/tools/core__knowledge-query', '{"effect": null, "__proto__": {"effect": "read_only"}}', {
      'if-match': await etag(t, '/v1/tools/core__knowledge-query'),
    });
    expect(r.status).toBe(400);
    expect((await t.request('GET', '/v1/tools/core__knowledge-query')).json.effect).toBeDefined();
    expect(await publishedTool('core__knowledge-query')).toEqual(expect.objectContaining({ effect: expect.any(String) }));
  });

  it('keeps transport on an MCP server', async () => {
    const r = await rawRequest(
      t,
      'PATCH',
      '/v1/mcp-servers/x',
      '{"transport": null, "__proto__": {"transport": {"kind": "http", "url": "https://x.example.com/mcp"}}}',
      {
        'if-match': await etag(t, '/v1/mcp-servers/x'),
      },
    );
    expect(r.status).toBe(400);
    expect((await t.request('GET', '/v1/mcp-servers/x')).json.transport).toMatchObject({ kind: 'http' });
  });
});

describe('every JSON body is read the same way', () => {
  // Free-form places (input schemas, facts, names used as keys): a strict schema cannot refuse the key there.
  const cases: Array<[string, string, string, string]> = [
    [
      'POST',
      '/v1/tools',
      '{"id": "core__p1", "description": "d", "effect": "read_only", "inputSchema": {"type": "object", "properties": {"__proto__": {"type": "string"}}}}',
      '/inputSchema/properties/__proto__',
    ],
    [
      'POST',
      '/v1/tools',
      '{"id": "core__p2", "description": "d", "effect": "read_only", "inputSchema": {"type": "object", "properties": {"constructor": {"type": "string"}}}}',
      '/inputSchema/properties/constructor',
    ],
    ['POST', '/v1/tenants/acme-research/simulate', '{"subject": "agent:research-bot", "facts": {"__proto__": "ready"}}', '/facts/__proto__'],
    [
      'POST',
      '/v1/tenants/acme-research/simulate',
      '{"subject": "agent:research-bot", "policy": {"bindings": {"constructor": ["researcher"]}}}',
      '/policy/bindings/constructor',
    ],
  ];
  for (const [method, path, text, pointer] of cases) {
    it(`refuses ${pointer} in ${method} ${path} with 400 naming it`, async () => {
      const r = await rawRequest(t, method, path, text);
      expect(r.status).toBe(400);
      expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer }));
    });
  }

  it('refuses forbidden keys in a tenant policy, where keys are names (a role or subject called constructor)', async () => {
    const tag = await etag(t, '/v1/tenants/acme-research/policy');
    for (const text of ['{"bindings": {"constructor": ["researcher"]}}', '{"roles": {"prototype": {"allow": ["core__*"]}}}']) {
      const r = await rawRequest(t, 'PUT', '/v1/tenants/acme-research/policy', text, { 'if-match': tag });
      expect(r.status).toBe(400);
      expect(r.json.errors[0].pointer).toMatch(/^\/(bindings\/constructor|roles\/prototype)$/);
    }
  });
});

describe('merge patch itself', () => {
  it('defines every patched key as own data, never touching a prototype', () => {
    const patch = JSON.parse('{"__proto__": {"status": "quarantined"}, "a": {"__proto__": {"b": 1}}}');
    const out = mergePatch({ status: 'active' }, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(out.status).toBe('active');
    expect(Object.getPrototypeOf(out.a)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"status": "active", "__proto__": {"status": "quarantined"}, "a": {"__proto__": {"b": 1}}}'));
  });
});

describe('CLI input files', () => {
  it('toolgate evaluate refuses a request file carrying __proto__', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-proto-'));
    try {
      writeFileSync(join(dir, 'bundle.json'), '{}');
      writeFileSync(join(dir, 'request.json'), '{"subject": "a", "facts": {"__proto__": "ready"}}');
      const errors: string[] = [];
      const code = await evaluateCli(['--bundle', join(dir, 'bundle.json'), '--request', join(dir, 'request.json')], {
        log: () => {},
        error: (l) => errors.push(l),
      });
      expect(code).toBe(1);
      expect(errors.join('\n')).toContain('/facts/__proto__');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('toolgate verify refuses a --jwks or --root file carrying __proto__, naming the file and pointer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-proto-'));
    try {
      const key = '{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "k"}';
      writeFileSync(join(dir, 'jwks.json'), `{"keys": [${key}], "__proto__": {"keys": []}}`);
      await expect(readTrustedKeys({ jwks: join(dir, 'jwks.json') })).rejects.toThrow(/jwks\.json: \/__proto__ /);
      writeFileSync(join(dir, 'root.json'), `{"keys": [${key.replace('"kid"', '"constructor": {"prototype": {}}, "kid"')}]}`);
      writeFileSync(join(dir, 'keyset.json'), '{}');
      await expect(readTrustedKeys({ root: join(dir, 'root.json'), keyset: join(dir, 'keyset.json') })).rejects.toThrow(/root\.json: \/keys\/0\/constructor /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('toolgate audit verify --checkpoint refuses a checkpoint file carrying __proto__', () => {
    const cp = '{"format": "toolgate.audit-checkpoint/v1", "seq": 1, "hash": "sha256:00", "at": "2026-01-01T00:00:00.000Z", "signature": "a..b"}';
    expect(() => readCheckpoints(`{"items": [${cp}], "__proto__": {"items": []}}`, 'cp.json')).toThrow(/cp\.json: \/__proto__ /);
  });
});
