import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyKeySet } from '../../runtime/verify-key-set.ts';
import { startTestApp } from '../support/harness.ts';
import type { TestApp } from '../support/harness.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const keySetNow = async () => {
  const r = await t.request('GET', '/.well-known/toolgate-keyset.json', { token: null });
  return { status: r.status, text: r.text, json: r.json, signature: r.headers.get('toolgate-signature'), headers: r.headers };
};

describe('GET /.well-known/toolgate-keyset.json', () => {
  it('answers RFC 8785 bytes signed by the root it names, public, with the version in a header', async () => {
    const ks = await keySetNow();
    expect(ks.status).toBe(200);
    expect(ks.json).toMatchObject({ format: 'toolgate.keyset/v1', version: 1, keys: [{ status: 'active', kty: 'OKP', crv: 'Ed25519' }] });
    expect(ks.headers.get('toolgate-version')).toBe('1');
    const header = JSON.parse(Buffer.from(ks.signature!.split('.')[0], 'base64url').toString());
    expect(header).toEqual({ alg: 'EdDSA', kid: ks.json.roots[0].kid, typ: 'toolgate-keyset+jws' });
    const r = await verifyKeySet(ks.text, ks.signature, { trustedRoots: ks.json.roots });
    expect(r.ok).toBe(true);
    // Not the signing key: a key set signed by a key it lists as signing key is not from a root.
    expect(ks.json.keys.map((k: { kid: string }) => k.kid)).not.toContain(ks.json.roots[0].kid);
  });

  it('answers earlier versions by number, 404 for one that does not exist and 400 for a malformed one', async () => {
    expect((await t.request('GET', '/.well-known/toolgate-keyset.json?version=1', { token: null })).json.version).toBe(1);
    const missing = await t.request('GET', '/.well-known/toolgate-keyset.json?version=999', { token: null });
    expect(missing.status).toBe(404);
    expect(missing.json.detail).toMatch(/no key-set version 999/);
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const r = await t.request('GET', `/.well-known/toolgate-keyset.json?version=${bad}`, { token: null });
      expect(r.status, bad).toBe(400);
      expect(r.json.errors[0].pointer).toBe('/version');
    }
  });
});

describe('/v1/keys', () => {
  it('lets every reader see the keys and only admins change them, each change needing a reason and audited', async () => {
    const viewer = await t.tokenFor('viewer', ['acme-research']);
    const seen = await t.request('GET', '/v1/keys', { token: viewer });
    expect(seen.status).toBe(200);
    expect(seen.json).toMatchObject({ keySet: { version: 1 }, rootOnServer: true, keys: [{ status: 'active', signing: true }] });
    expect((await t.request('POST', '/v1/keys/rotate', { token: viewer, body: { reason: 'no' } })).status).toBe(403);
    expect((await t.request('GET', '/v1/keys', { token: await t.tokenFor('runtime', ['acme-research']) })).status).toBe(403);

    const noReason = await t.request('POST', '/v1/keys/rotate', { body: {} });
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    const badBody = await t.request('POST', '/v1/keys/rotate', { body: { reason: 'x', promoteAfterSeconds: -5, extra: 1 } });
    expect(badBody.status).toBe(400);
    expect(badBody.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/extra', '/promoteAfterSeconds']);
    expect((await keySetNow()).json.version).toBe(1);

    const rotated = await t.request('POST', '/v1/keys/rotate', { body: { reason: 'quarterly' } });
    expect(rotated.status).toBe(201);
    const kid = rotated.json.kid;
    expect((await keySetNow()).json.keys.find((k: { kid: string }) => k.kid === kid).status).toBe('next');
    const jwks = (await t.request('GET', '/.well-known/jwks.json', { token: null })).json.keys.map((k: { kid: string }) => k.kid);
    expect(jwks).toContain(kid);

    const old = seen.json.keys[0].kid;
    expect((await t.request('POST', `/v1/keys/${old}/promote`, { body: { reason: 'x' } })).json.detail).toMatch(/is active, not next/);
    expect((await t.request('POST', '/v1/keys/no-such-key/promote', { body: { reason: 'x' } })).status).toBe(404);
    const promoted = await t.request('POST', `/v1/keys/${kid}/promote`, { headers: { 'Toolgate-Reason': 'quarterly' } });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.json).toMatchObject({ kid, previous: old, keySetVersion: 3 });

    // A publish after the promotion is signed by the new key, which the listing then names.
    expect((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'after promotion' } })).status).toBe(201);
    const list = await t.request('GET', '/v1/keys');
    expect(list.json.keys.find((k: { kid: string }) => k.kid === kid).latestBundleOf).toEqual(['acme-research']);
    expect((await t.request('POST', `/v1/keys/${kid}/retire`, { body: { reason: 'x' } })).json.detail).toMatch(/signs now/);
    const retired = await t.request('POST', `/v1/keys/${old}/retire`, { body: { reason: 'done' } });
    expect(retired.status, retired.text).toBe(200);
    expect((await keySetNow()).json.keys.find((k: { kid: string }) => k.kid === old).status).toBe('retired');
    expect((await t.request('POST', `/v1/keys/${old}/retire`, { body: { reason: 'again' } })).status).toBe(409);

    const events = await t.request('GET', '/v1/audit?entityType=key');
    expect(events.json.items.map((e: { action: string; entityId: string; reason: string }) => [e.action, e.entityId, e.reason])).toEqual([
      ['rotate', kid, 'quarterly'],
      ['promote', kid, 'quarterly'],
      ['retire', old, 'done'],
    ]);
  });

  it("refuses to retire a key that signed a tenant's latest bundle unless asked to re-issue", async () => {
    const signer = (await t.request('GET', '/v1/keys')).json.keys.find((k: { signing: boolean }) => k.signing).kid;
    expect((await t.request('POST', '/v1/tenants/globex-eng/bundles', { body: { reason: 'signed by the current key' } })).status).toBe(201);
    const next = (await t.request('POST', '/v1/keys/rotate', { body: { reason: 'r' } })).json.kid;
    expect((await t.request('POST', `/v1/keys/${next}/promote`, { body: { reason: 'p' } })).status).toBe(200);
    const refused = await t.request('POST', `/v1/keys/${signer}/retire`, { body: { reason: 'too early' } });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toMatch(/latest bundle of acme-research, globex-eng/);
    const done = await t.request('POST', `/v1/keys/${signer}/retire`, { body: { reason: 'with reissue', reissue: true } });
    expect(done.status, done.text).toBe(200);
    expect(done.json.reissued.map((r: { tenant: string }) => r.tenant)).toEqual(['acme-research', 'globex-eng']);
  });

  it('says so, and changes nothing, when the root key is kept off the server', async () => {
    const keysDir = t.deps.config.keysDir;
    const rootFile = readdirSync(keysDir).find((n) => n.endsWith('.root.json'))!;
    renameSync(join(keysDir, rootFile), join(t.dir, 'offline-root.json'));
    try {
      const before = (await keySetNow()).json.version;
      const r = await t.request('POST', '/v1/keys/rotate', { body: { reason: 'no root here' } });
      expect(r.status).toBe(409);
      expect(r.json.detail).toMatch(/root key .* is not on this server.*--root-key FILE/);
      expect((await t.request('GET', '/v1/keys')).json.rootOnServer).toBe(false);
      expect((await keySetNow()).json.version).toBe(before);
    } finally {
      renameSync(join(t.dir, 'offline-root.json'), join(keysDir, rootFile));
    }
  });
});

describe('/v1/audit/checkpoints', () => {
  it('signs a checkpoint on export and lists it to auditors, not to viewers', async () => {
    const exported = await t.request('GET', '/v1/audit/export');
    const seq = Number(exported.headers.get('toolgate-checkpoint'));
    expect(seq).toBeGreaterThan(0);
    const auditor = await t.tokenFor('auditor');
    const list = await t.request('GET', '/v1/audit/checkpoints', { token: auditor });
    expect(list.status).toBe(200);
    expect(list.json.items[0]).toMatchObject({ format: 'toolgate.audit-checkpoint/v1', seq, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const header = JSON.parse(Buffer.from(list.json.items[0].signature.split('.')[0], 'base64url').toString());
    expect(header.typ).toBe('toolgate-audit-checkpoint+jws');
    const latest = await t.request('GET', '/v1/audit/checkpoints/latest', { token: auditor });
    expect(latest.json).toEqual(list.json.items[0]);
    expect(latest.headers.get('content-disposition')).toContain(`toolgate-audit-checkpoint-${seq}.json`);
    expect((await t.request('GET', '/v1/audit/checkpoints', { token: await t.tokenFor('viewer', ['acme-research']) })).status).toBe(403);
    const bad = await t.request('GET', '/v1/audit/checkpoints?limit=0&other=1', { token: auditor });
    expect(bad.status).toBe(400);
    // An export with nothing changed since reuses the same checkpoint.
    await t.request('GET', '/v1/audit/export');
    expect((await t.request('GET', '/v1/audit/checkpoints', { token: auditor })).json.items.filter((c: { seq: number }) => c.seq === seq)).toHaveLength(1);
  });
});
