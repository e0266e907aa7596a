import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const tool = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  description: `The ${id} tool`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  effect: 'read_only',
  redaction: { allow: ['result'] },
  ...extra,
});

const auditCount = async () =>
  (
    await t.deps.database.db
      .selectFrom('audit_events')
      .select((e) => e.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n;

describe('tools API', () => {
  it('creates a tool with defaults, an ETag, a definition hash and source core', async () => {
    const r = await t.request('POST', '/v1/tools', { body: tool('core__search') });
    expect(r.status).toBe(201);
    expect(r.headers.get('etag')).toBe('"1"');
    expect(r.headers.get('location')).toBe('/v1/tools/core__search');
    expect(r.json).toMatchObject({ id: 'core__search', groups: ['default'], status: 'active', source: { kind: 'core' }, version: 1 });
    expect(r.json.definitionHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const g = await t.request('GET', '/v1/tools/core__search');
    expect(g.status).toBe(200);
    expect(g.json.description).toBe('The core__search tool');
  });

  it('answers a duplicate id with 409 and leaves the original untouched', async () => {
    const before = await auditCount();
    const r = await t.request('POST', '/v1/tools', { body: tool('core__search', { description: 'overwrite attempt' }) });
    expect(r.status).toBe(409);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.json.code).toBe('conflict');
    expect((await t.request('GET', '/v1/tools/core__search')).json.description).toBe('The core__search tool');
    expect(await auditCount()).toBe(before);
  });

  it('treats ids case-sensitively', async () => {
    expect((await t.request('POST', '/v1/tools', { body: tool('core__Search') })).status).toBe(201);
  });

  it.each([
    ['no namespace separator', 'coresearch'],
    ['a bad character', 'core__sea rch'],
    ['a dot', 'core__a.b'],
    ['65 characters', `core__${'x'.repeat(59)}`],
  ])('rejects an id with %s', async (_label, id) => {
    const r = await t.request('POST', '/v1/tools', { body: tool(id) });
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/id');
  });

  it('accepts an id of exactly 64 characters', async () => {
    const id = `core__${'y'.repeat(58)}`;
    expect(id.length).toBe(64);
    expect((await t.request('POST', '/v1/tools', { body: tool(id) })).status).toBe(201);
  });

  it.each(['oneOf', 'anyOf', 'allOf', 'not', 'if', 'patternProperties'])('accepts %s in an input schema (the 2020-12 vocabulary)', async (kw) => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'object', [kw]: kw === 'patternProperties' ? { x: {} } : kw === 'not' || kw === 'if' ? {} : [{}] } },
    };
    const r = await t.request('POST', '/v1/tools', { body: tool(`core__kw-${kw.toLowerCase()}`, { inputSchema: schema }) });
    expect(r.status).toBe(201);
  });

  it.each(['$dynamicRef', '$recursiveRef', '$anchor'])('rejects %s in an input schema with its pointer', async (kw) => {
    const schema = { type: 'object', properties: { a: { type: 'object', [kw]: kw === '$anchor' ? 'x' : '#' } } };
    const r = await t.request('POST', '/v1/tools', { body: tool(`core__kw-${kw.slice(1).toLowerCase()}`, { inputSchema: schema }) });
    expect(r.status).toBe(400);
    expect(r.json.errors).toContainEqual(expect.objectContaining({ pointer: `/inputSchema/properties/a/${kw}` }));
  });

  it('holds an output schema to the same dialect, pointing into /outputSchema', async () => {
    const ok = await t.request('POST', '/v1/tools', {
      body: tool('core__out-ok', { outputSchema: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }),
    });
    expect(ok.status).toBe(201);
    const bad = await t.request('POST', '/v1/tools', {
      body: tool('core__out-bad', { outputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(?<=x)a' } } } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/outputSchema/properties/a/pattern');
  });

  it('rejects a non-local $ref but accepts a local one', async () => {
    const bad = await t.request('POST', '/v1/tools', {
      body: tool('core__ref-remote', { inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe('/inputSchema/properties/a/$ref');
    const good = await t.request('POST', '/v1/tools', {
      body: tool('core__ref-local', { inputSchema: { type: 'object', $defs: { s: { type: 'string' } }, properties: { a: { $ref: '#/$defs/s' } } } }),
    });
    expect(good.status).toBe(201);
  });

  it('rejects a connectionId property at any depth', async () => {
    const r = await t.request('POST', '/v1/tools', {
      body: tool('core__deep', {
        inputSchema: { type: 'object', properties: { opts: { type: 'array', items: { type: 'object', properties: { connectionId: { type: 'string' } } } } } },
      }),
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/inputSchema/properties/opts/items/properties/connectionId');
  });

  it('rejects a schema that is not valid JSON Schema', async () => {
    const r = await t.request('POST', '/v1/tools', {
      body: tool('core__invalid-schema', { inputSchema: { type: 'object', properties: { a: { type: 'strin' } } } }),
    });
    expect(r.status).toBe(400);
    expect(r.json.errors.some((e: { message: string }) => e.message.includes('not valid JSON Schema'))).toBe(true);
  });

  it('names unknown groups and states', async () => {
    const r = await t.request('POST', '/v1/tools', {
      body: tool('core__refs', { groups: ['default', 'ghosts'], state: 'nowhere', availableInStates: ['*', 'limbo'] }),
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('unknown_reference');
    expect(r.json.errors).toEqual([
      expect.objectContaining({ pointer: '/groups/1', message: 'unknown group "ghosts"' }),
      expect.objectContaining({ pointer: '/state', message: 'unknown state "nowhere"' }),
      expect.objectContaining({ pointer: '/availableInStates/1', message: 'unknown state "limbo"' }),
    ]);
  });

  it('lists every schema problem at once, with pointers', async () => {
    const r = await t.request('POST', '/v1/tools', { body: { id: 'core__x', effect: 'explode', extra: true } });
    expect(r.status).toBe(400);
    const pointers = r.json.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/description', '/inputSchema', '/effect', '/extra']));
  });

  it('answers malformed JSON, a wrong content type and an oversized body with 400, 415 and 413', async () => {
    expect((await t.request('POST', '/v1/tools', { raw: '{"id": ' })).json.code).toBe('invalid_json');
    const wrongType = await t.request('POST', '/v1/tools', { raw: JSON.stringify(tool('core__t')), headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(415);
    const big = await t.request('POST', '/v1/tools', { body: tool('core__big', { description: 'x'.repeat(1024 * 1024 + 10) }) });
    expect(big.status).toBe(413);
    expect(big.json.code).toBe('payload_too_large');
  });

  it('requires If-Match to replace, and refuses a stale one with the current version', async () => {
    const created = await t.request('POST', '/v1/tools', { body: tool('core__edit') });
    const noMatch = await t.request('PUT', '/v1/tools/core__edit', { body: tool('core__edit', { description: 'v2' }) });
    expect(noMatch.status).toBe(428);
    const ok = await t.request('PUT', '/v1/tools/core__edit', { body: { ...created.json, description: 'v2' }, headers: { 'if-match': '"1"' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('etag')).toBe('"2"');
    const stale = await t.request('PUT', '/v1/tools/core__edit', { body: tool('core__edit', { description: 'v3' }), headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect(stale.json.current).toMatchObject({ version: 2, description: 'v2' });
  });

  it('merge-patches a tool and keeps what the patch does not name', async () => {
    await t.request('POST', '/v1/tools', { body: tool('core__patchme', { budgets: { maxRuntimeMs: 100 } }) });
    const r = await t.request('PATCH', '/v1/tools/core__patchme', {
      body: { effect: 'state_change', budgets: { maxResultBytes: 10 } },
      headers: { 'if-match': '"1"' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ effect: 'state_change', budgets: { maxRuntimeMs: 100, maxResultBytes: 10 }, description: 'The core__patchme tool' });
    const bad = await t.request('PATCH', '/v1/tools/core__patchme', { body: { effect: 'nope' }, headers: { 'if-match': '"2"' } });
    expect(bad.status).toBe(400);
    expect((await t.request('GET', '/v1/tools/core__patchme')).json.effect).toBe('state_change');
  });

  it('refuses to rename through the URL', async () => {
    await t.request('POST', '/v1/tools', { body: tool('core__named') });
    const r = await t.request('PUT', '/v1/tools/core__named', { body: tool('core__renamed'), headers: { 'if-match': '"1"' } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/id');
  });

  it('deletes with If-Match and 404s afterwards', async () => {
    await t.request('POST', '/v1/tools', { body: tool('core__gone') });
    expect((await t.request('DELETE', '/v1/tools/core__gone')).status).toBe(428);
    expect((await t.request('DELETE', '/v1/tools/core__gone', { headers: { 'if-match': '"1"' } })).status).toBe(204);
    const r = await t.request('GET', '/v1/tools/core__gone');
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('not_found');
  });

  it('refuses to delete a tool a policy names exactly, naming the policy', async () => {
    const r = await t.request('DELETE', '/v1/tools/core__knowledge-query', { headers: { 'if-match': '"1"' } });
    expect(r.status).toBe(409);
    expect(r.json.errors.some((e: { message: string }) => e.message.includes('acme-research'))).toBe(true);
  });

  it('filters the list by search text, group, effect, status and source', async () => {
    const all = (await t.request('GET', '/v1/tools')).json.items as { id: string }[];
    expect(all.length).toBeGreaterThan(10);
    const byGroup = (await t.request('GET', '/v1/tools?group=compute')).json.items as { id: string; groups: string[] }[];
    expect(byGroup.length).toBeGreaterThan(0);
    expect(byGroup.every((x) => x.groups.includes('compute'))).toBe(true);
    const q = (await t.request('GET', '/v1/tools?q=host_fs_read')).json.items as { id: string }[];
    expect(q.map((x) => x.id)).toEqual(['core__host_fs_read_file']);
    const effect = (await t.request('GET', '/v1/tools?effect=external_side_effect')).json.items as { effect: string }[];
    expect(effect.every((x) => x.effect === 'external_side_effect')).toBe(true);
    expect((await t.request('GET', '/v1/tools?source=mcp')).json.items).toEqual([]);
    expect((await t.request('GET', '/v1/tools?status=quarantined')).json.items).toEqual([]);
  });

  it('refuses status removed set by hand', async () => {
    const r = await t.request('POST', '/v1/tools', { body: tool('core__removed', { status: 'removed' }) });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toBe('/status');
  });
});

describe('tool list filters', () => {
  it('rejects unknown filters and bad values with pointers', async () => {
    const r = await t.request('GET', '/v1/tools?effect=loud&colour=blue');
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/colour', '/effect']);
  });
});

describe('input schemas that would not compile', () => {
  it.each([
    ['a broken regular expression', { type: 'object', properties: { a: { type: 'string', pattern: '(' } } }],
    ['a dangling local $ref', { type: 'object', properties: { a: { $ref: '#/$defs/nowhere' } } }],
    ['a remote $dynamicRef', { type: 'object', properties: { a: { $dynamicRef: 'http://example.com/s.json#meta' } } }],
  ])('rejects %s at save time, so no tenant is left unable to publish', async (_l, inputSchema) => {
    const r = await t.request('POST', '/v1/tools', { body: tool(`core__nc-${_l.length}`, { inputSchema }) });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].pointer).toMatch(/^\/inputSchema/);
  });

  it('accepts ids with underscores at either end of a part, as DESIGN allows', async () => {
    expect((await t.request('POST', '/v1/tools', { body: tool('core__trail_') })).status).toBe(201);
    expect((await t.request('POST', '/v1/tools', { body: tool('_x__y') })).status).toBe(201);
  });
});
