import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Overview, Tool, ToolList } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { toolStore } from '../../server/store/inventory.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/harness.ts';

let h: TestApp;
let webDir: string;

/** A quarantined imported tool as an MCP sync leaves it: no redaction, in `default`, effect guessed. */
async function importTool(name: string): Promise<Tool & { version: number }> {
  const def = { name, description: `Imported ${name}`, inputSchema: { type: 'object', properties: { q: { type: 'string' } } } };
  const hash = definitionHash(def);
  const tool: Tool = {
    id: `mcp__fixture__${name}`,
    description: def.description,
    inputSchema: def.inputSchema,
    effect: 'external_side_effect',
    groups: ['default'],
    status: 'quarantined',
    source: { kind: 'mcp', server: 'fixture', originalName: name },
    definitionHash: hash,
    review: { current: { ...def, definitionHash: hash }, detectedAt: new Date().toISOString() },
  };
  return toolStore.insert(h.deps.database.db, tool.id, tool, new Date().toISOString());
}

beforeAll(async () => {
  webDir = mkdtempSync(join(tmpdir(), 'toolgate-web-'));
  mkdirSync(join(webDir, 'assets'));
  writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>Toolgate</title><script type="module" src="/assets/index-abc123.js"></script>');
  const js = `console.log(${JSON.stringify('x'.repeat(5000))});`;
  writeFileSync(join(webDir, 'assets', 'index-abc123.js'), js);
  writeFileSync(join(webDir, 'assets', 'index-abc123.js.br'), brotliCompressSync(js));
  h = await startTestApp({ webDir });
});

afterAll(async () => {
  await h.close();
  rmSync(webDir, { recursive: true, force: true });
});

describe('approving an imported tool with the admin decisions', () => {
  it('sets effect, redaction and groups with the approval, in one audited change', async () => {
    const tool = await importTool('lookup');
    const res = await h.request('POST', `/v1/tools/${tool.id}/approve`, {
      body: {
        definitionHash: tool.definitionHash,
        effect: 'read_only',
        redaction: { allow: ['title', 'items[].id'] },
        groups: ['knowledge', 'default'],
        reason: 'reviewed the lookup tool',
      },
      headers: { 'if-match': `"${tool.version}"` },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'active', effect: 'read_only', redaction: { allow: ['title', 'items[].id'] }, groups: ['knowledge', 'default'] });
    const events = await listAuditEvents(h.deps.database.db, { action: 'approve', entityId: tool.id }, 0, 10);
    expect(events).toHaveLength(1);
    expect(events[0]!.reason).toBe('reviewed the lookup tool');
    expect(events[0]!.after).toMatchObject({ effect: 'read_only', redaction: { allow: ['title', 'items[].id'] }, status: 'active' });
  });

  it('keeps what the admin did not send', async () => {
    const tool = await importTool('keep');
    const res = await h.request('POST', `/v1/tools/${tool.id}/approve`, {
      body: { definitionHash: tool.definitionHash },
      headers: { 'if-match': `"${tool.version}"` },
    });
    expect(res.status).toBe(200);
    expect(res.json.effect).toBe('external_side_effect');
    expect(res.json.groups).toEqual(['default']);
    expect(res.json.redaction).toBeUndefined();
  });

  it('refuses an unknown group or a bad redaction path and changes nothing', async () => {
    const tool = await importTool('refused');
    const ifMatch = { 'if-match': `"${tool.version}"` };
    const unknown = await h.request('POST', `/v1/tools/${tool.id}/approve`, {
      body: { definitionHash: tool.definitionHash, groups: ['no-such-group'] },
      headers: ifMatch,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors).toEqual([expect.objectContaining({ pointer: '/groups/0' })]);
    const badPath = await h.request('POST', `/v1/tools/${tool.id}/approve`, {
      body: { definitionHash: tool.definitionHash, redaction: { allow: ['a b'] }, effect: 'sometimes' },
      headers: ifMatch,
    });
    expect(badPath.status).toBe(400);
    expect(badPath.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/effect', '/redaction/allow/0']);
    const after = await h.request('GET', `/v1/tools/${tool.id}`);
    expect(after.json).toMatchObject({ status: 'quarantined', version: tool.version });
  });
});

describe('GET /v1/tools with paging, search, filters and sorting', () => {
  it('answers every tool in one list when no limit is asked, as before', async () => {
    const res = await h.request('GET', '/v1/tools');
    const list = res.json as ToolList;
    expect(list.items.length).toBe(list.total);
    expect(list.nextCursor).toBeNull();
    expect(list.items.map((t) => t.id)).toEqual([...list.items.map((t) => t.id)].sort());
  });

  it('walks every matching tool exactly once, page by page, with the total on each page', async () => {
    const all = (await h.request('GET', '/v1/tools?sort=effect&order=desc')).json as ToolList;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await h.request('GET', `/v1/tools?sort=effect&order=desc&limit=4${cursor ? `&cursor=${cursor}` : ''}`)).json as ToolList;
      expect(page.total).toBe(all.total);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.items.map((t) => t.id));
    const effects = all.items.map((t) => t.effect);
    expect(effects).toEqual([...effects].sort().reverse());
  });

  it('keeps the cursor valid when a tool before it is deleted', async () => {
    const first = (await h.request('GET', '/v1/tools?limit=3')).json as ToolList;
    const victim = first.items[0]!;
    const del = await h.request('DELETE', `/v1/tools/${victim.id}`, { headers: { 'if-match': `"${(victim as { version: number }).version}"` } });
    expect([204, 409]).toContain(del.status);
    const next = (await h.request('GET', `/v1/tools?limit=3&cursor=${first.nextCursor}`)).json as ToolList;
    const all = (await h.request('GET', '/v1/tools')).json as ToolList;
    const ids = all.items.map((t) => t.id);
    expect(next.items[0]!.id).toBe(ids[ids.indexOf(first.items[2]!.id) + 1]);
  });

  it('filters tools without redaction and counts them', async () => {
    const none = (await h.request('GET', '/v1/tools?redaction=none')).json as ToolList;
    expect(none.total).toBeGreaterThan(0);
    expect(none.items.every((t) => !t.redaction)).toBe(true);
    expect(none.counts.noRedaction).toBe(none.total);
    const set = (await h.request('GET', '/v1/tools?redaction=set&q=HOST_FS')).json as ToolList;
    expect(set.items.length).toBeGreaterThan(0);
    expect(set.items.every((t) => t.redaction && t.id.includes('host_fs'))).toBe(true);
  });

  it('refuses a cursor it did not give out and bad paging parameters', async () => {
    expect((await h.request('GET', '/v1/tools?limit=5&cursor=bm9wZQ')).json.errors[0].pointer).toBe('/cursor');
    for (const q of ['limit=0', 'limit=1001', 'sort=name', 'order=up', 'redaction=maybe']) {
      const res = await h.request('GET', `/v1/tools?${q}`);
      expect(res.status, q).toBe(400);
    }
  });
});

describe('served like a product', () => {
  it('compresses JSON answers for clients that accept gzip', async () => {
    const res = await h.app.request('/v1/tools', { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-encoding': 'gzip' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    const list = JSON.parse(gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8')) as ToolList;
    expect(list.total).toBeGreaterThan(0);
  });

  it('leaves bundle bytes to the distribution code: its own precompressed brotli, not the JSON compressor', async () => {
    expect((await h.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'first' } })).status).toBe(201);
    const res = await h.app.request('/v1/tenants/acme-research/bundles/latest', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'accept-encoding': 'br' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('br');
    // A compressed variant's ETag is the weak form of the revision (same content, other bytes).
    const etag = res.headers.get('etag') ?? '';
    expect(etag).toMatch(/^W\/"sha256:/);
    // Compressed once: one brotli decode gives the bundle whose revision the ETag names.
    const bundle = JSON.parse(brotliDecompressSync(Buffer.from(await res.arrayBuffer())).toString('utf8'));
    expect(`W/"${bundle.revision}"`).toBe(etag);
  });

  it('sends the console HTML with strict security headers and hashed assets as immutable, precompressed', async () => {
    const html = await h.app.request('/tools');
    expect(html.status).toBe(200);
    const csp = html.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('referrer-policy')).toBe('no-referrer');
    const asset = await h.app.request('/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(asset.headers.get('content-encoding')).toBe('br');
    expect(asset.headers.get('cache-control')).toContain('immutable');
  });
});

describe('token expiry', () => {
  it('refuses an expiry in the past', async () => {
    const res = await h.request('POST', '/v1/tokens', { body: { label: 'old', role: 'auditor', expiresAt: '2001-01-01T00:00:00Z' } });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].pointer).toBe('/expiresAt');
  });

  it('lists the expiry and stops accepting the token once it has passed', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const created = await h.request('POST', '/v1/tokens', { body: { label: 'short-lived', role: 'auditor', expiresAt: at } });
    expect(created.status).toBe(201);
    expect(created.json.expiresAt).toBe(at);
    expect((await h.request('GET', '/v1/tokens')).json.items.find((t: { id: string }) => t.id === created.json.id).expiresAt).toBe(at);
    // Move the expiry into the past before the token is first used (nothing cached yet).
    await h.deps.database.db
      .updateTable('tokens')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', created.json.id)
      .execute();
    const res = await h.request('GET', '/v1/audit', { token: created.json.token });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/expired/);
    expect((await h.request('POST', '/v1/session', { token: null, body: { token: created.json.token } })).status).toBe(401);
  });
});

describe('GET /v1/overview', () => {
  it('lists roles and subjects, whether the draft differs and in what, and what needs attention', async () => {
    const before = (await h.request('GET', '/v1/overview')).json as Overview;
    const globex = before.tenants.find((t) => t.id === 'globex-eng')!;
    expect(globex.roles.length).toBeGreaterThan(0);
    expect(globex.subjects.length).toBeGreaterThan(0);
    expect(globex.published).toBeNull();
    expect(globex.draft).toMatchObject({ differs: true });
    expect(before.attention.unpublished).toContain('globex-eng');
    expect(before.attention.quarantined.total).toBeGreaterThan(0);

    expect((await h.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'baseline' } })).status).toBe(201);
    const published = ((await h.request('GET', '/v1/overview')).json as Overview).tenants.find((t) => t.id === 'globex-eng')!;
    expect(published.published?.version).toBe(1);
    expect(published.draft).toEqual({ differs: false, changes: [] });

    const policy = (await h.request('GET', '/v1/tenants/globex-eng/policy')).json;
    const { version, tenant: _t, createdAt: _c, updatedAt: _u, ...body } = policy;
    expect(
      (await h.request('PUT', '/v1/tenants/globex-eng/policy', { body: { ...body, bundleTtlSeconds: 7200 }, headers: { 'if-match': `"${version}"` } })).status,
    ).toBe(200);
    const edited = ((await h.request('GET', '/v1/overview')).json as Overview).tenants.find((t) => t.id === 'globex-eng')!;
    expect(edited.draft).toEqual({ differs: true, changes: ['policy'] });
  });

  it('names grants and inventory as what differs when only they changed since the publish', async () => {
    const draftOf = async () => ((await h.request('GET', '/v1/overview')).json as Overview).tenants.find((t) => t.id === 'globex-eng')!.draft;
    expect((await h.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'baseline for grants' } })).status).toBe(201);
    expect(await draftOf()).toEqual({ differs: false, changes: [] });

    const role = Object.keys((await h.request('GET', '/v1/tenants/globex-eng/policy')).json.roles)[0];
    const grant = await h.request('POST', '/v1/tenants/globex-eng/grants', {
      body: { connectionId: 'conn-overview', subjects: [role], tools: ['core__*'] },
    });
    expect(grant.status).toBe(201);
    expect(await draftOf()).toEqual({ differs: true, changes: ['grants'] });
    expect((await h.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'ship the grant' } })).status).toBe(201);

    const tool = await h.request('GET', '/v1/tools/core__knowledge-query');
    const patched = await h.request('PATCH', '/v1/tools/core__knowledge-query', {
      body: { description: `${tool.json.description} (reworded)` },
      headers: { 'if-match': tool.headers.get('etag')! },
    });
    expect(patched.status).toBe(200);
    expect(await draftOf()).toEqual({ differs: true, changes: ['inventory'] });
  });

  it('shows a viewer only its own tenants and no review queue', async () => {
    const viewer = await h.tokenFor('viewer', ['acme-research']);
    const res = await h.request('GET', '/v1/overview', { token: viewer });
    expect(res.status).toBe(200);
    const o = res.json as Overview;
    expect(o.tenants.map((t) => t.id)).toEqual(['acme-research']);
  });

  it('refuses runtime tokens', async () => {
    const runtime = await h.tokenFor('runtime', ['acme-research']);
    expect((await h.request('GET', '/v1/overview', { token: runtime })).status).toBe(403);
  });
});

describe('resetting the draft to a published version', () => {
  it('makes the policy and grants what the version carried, so publishing again changes nothing', async () => {
    const t = 'acme-research';
    const v1 = (await h.request('POST', `/v1/tenants/${t}/bundles`, { body: { reason: 'v1' } })).json.version as number;
    const policy = (await h.request('GET', `/v1/tenants/${t}/policy`)).json;
    const { version, tenant: _t, createdAt: _c, updatedAt: _u, ...body } = policy;
    expect(
      (await h.request('PUT', `/v1/tenants/${t}/policy`, { body: { ...body, bundleTtlSeconds: 4000 }, headers: { 'if-match': `"${version}"` } })).status,
    ).toBe(200);
    expect(
      (
        await h.request('POST', `/v1/tenants/${t}/grants`, {
          body: { connectionId: 'conn-later', subjects: [Object.keys(policy.roles)[0]], tools: ['core__*'] },
        })
      ).status,
    ).toBe(201);
    const v2 = await h.request('POST', `/v1/tenants/${t}/bundles`, { body: { reason: 'v2' } });
    expect(v2.status, v2.text).toBe(201);
    expect((await h.request('POST', `/v1/tenants/${t}/bundles`, { body: { reason: 'undo', rollbackTo: v1 } })).status).toBe(201);

    const current = (await h.request('GET', `/v1/tenants/${t}/policy`)).json;
    expect((await h.request('POST', `/v1/tenants/${t}/policy/reset`, { body: { version: v1 } })).status).toBe(428);
    const reset = await h.request('POST', `/v1/tenants/${t}/policy/reset`, {
      body: { version: v1, reason: 'keep the rollback' },
      headers: { 'if-match': `"${current.version}"` },
    });
    expect(reset.status).toBe(200);
    expect(reset.json.bundleTtlSeconds).not.toBe(4000);
    expect((await h.request('GET', `/v1/tenants/${t}/grants/conn-later`)).status).toBe(404);
    const overview = (await h.request('GET', '/v1/overview')).json as Overview;
    expect(overview.tenants.find((x) => x.id === t)!.draft).toEqual({ differs: false, changes: [] });
    const again = await h.request('POST', `/v1/tenants/${t}/bundles`, { body: { reason: 'nothing to ship' } });
    expect(again.status).toBe(200);
  });

  it('answers 404 for a version that was never published', async () => {
    const current = (await h.request('GET', '/v1/tenants/acme-research/policy')).json;
    const res = await h.request('POST', '/v1/tenants/acme-research/policy/reset', { body: { version: 999 }, headers: { 'if-match': `"${current.version}"` } });
    expect(res.status).toBe(404);
  });
});
