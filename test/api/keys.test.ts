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

/** The ETag `GET /v1/keys` answers: the key-set version every key change must name. */
const keysEtag = async () => {
  const r = await t.request('GET', '/v1/keys');
  return r.headers.get('etag') as string;
};

/** A key change naming the key set it saw (`ifMatch`), or none when `ifMatch` is null. */
const keyChange = async (path: string, body: unknown, ifMatch: string | null, call: { token?: string; headers?: Record<string, string> } = {}) =>
  t.request('POST', path, { ...call, body, headers: { ...(call.headers ?? {}), ...(ifMatch === null ? {} : { 'If-Match': ifMatch }) } });

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
    expect(seen.headers.get('etag')).toBe('"1"');
    expect((await keyChange('/v1/keys/rotate', { reason: 'no' }, '"1"', { token: viewer })).status).toBe(403);
    expect((await t.request('GET', '/v1/keys', { token: await t.tokenFor('runtime', ['acme-research']) })).status).toBe(403);

    const noReason = await keyChange('/v1/keys/rotate', {}, '"1"');
    expect(noReason.status).toBe(400);
    expect(noReason.json.errors[0].pointer).toBe('/reason');
    const badBody = await keyChange('/v1/keys/rotate', { reason: 'x', promoteAfterSeconds: -5, extra: 1 }, '"1"');
    expect(badBody.status).toBe(400);
    expect(badBody.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/extra', '/promoteAfterSeconds']);
    expect((await keySetNow()).json.version).toBe(1);

    const rotated = await keyChange('/v1/keys/rotate', { reason: 'quarterly' }, '"1"');
    expect(rotated.status).toBe(201);
    expect(rotated.headers.get('etag')).toBe('"2"');
    const kid = rotated.json.kid;
    expect((await keySetNow()).json.keys.find((k: { kid: string }) => k.kid === kid).status).toBe('next');
    const jwks = (await t.request('GET', '/.well-known/jwks.json', { token: null })).json.keys.map((k: { kid: string }) => k.kid);
    expect(jwks).toContain(kid);

    const old = seen.json.keys[0].kid;
    expect((await keyChange(`/v1/keys/${old}/promote`, { reason: 'x' }, '"2"')).json.detail).toMatch(/is active, not next/);
    expect((await keyChange('/v1/keys/no-such-key/promote', { reason: 'x' }, '"2"')).status).toBe(404);
    const promoted = await keyChange(`/v1/keys/${kid}/promote`, undefined, '"2"', { headers: { 'Toolgate-Reason': 'quarterly' } });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.json).toMatchObject({ kid, previous: old, keySetVersion: 3 });
    expect(promoted.headers.get('etag')).toBe('"3"');

    // A publish after the promotion is signed by the new key, which the listing then names.
    expect((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'after promotion' } })).status).toBe(201);
    const list = await t.request('GET', '/v1/keys');
    expect(list.json.keys.find((k: { kid: string }) => k.kid === kid).latestBundleOf).toEqual(['acme-research']);
    expect(list.headers.get('etag')).toBe('"3"');
    expect((await keyChange(`/v1/keys/${kid}/retire`, { reason: 'x' }, '"3"')).json.detail).toMatch(/signs now/);
    const retired = await keyChange(`/v1/keys/${old}/retire`, { reason: 'done' }, '"3"');
    expect(retired.status, retired.text).toBe(200);
    expect(retired.json.keySetVersion).toBe(4);
    expect((await keySetNow()).json.keys.find((k: { kid: string }) => k.kid === old).status).toBe('retired');
    expect((await keyChange(`/v1/keys/${old}/retire`, { reason: 'again' }, '"4"')).status).toBe(409);

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
    const next = (await keyChange('/v1/keys/rotate', { reason: 'r' }, await keysEtag())).json.kid;
    expect((await keyChange(`/v1/keys/${next}/promote`, { reason: 'p' }, await keysEtag())).status).toBe(200);
    const refused = await keyChange(`/v1/keys/${signer}/retire`, { reason: 'too early' }, await keysEtag());
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toMatch(/latest bundle of acme-research, globex-eng/);
    const done = await keyChange(`/v1/keys/${signer}/retire`, { reason: 'with reissue', reissue: true }, await keysEtag());
    expect(done.status, done.text).toBe(200);
    expect(done.json.reissued.map((r: { tenant: string }) => r.tenant)).toEqual(['acme-research', 'globex-eng']);
  });

  it('says so, and changes nothing, when the root key is kept off the server', async () => {
    const keysDir = t.deps.config.keysDir;
    const rootFile = readdirSync(keysDir).find((n) => n.endsWith('.root.json'))!;
    renameSync(join(keysDir, rootFile), join(t.dir, 'offline-root.json'));
    try {
      const before = (await keySetNow()).json.version;
      const r = await keyChange('/v1/keys/rotate', { reason: 'no root here' }, await keysEtag());
      expect(r.status).toBe(409);
      expect(r.json.detail).toMatch(/root key .* is not on this server.*--root-key FILE/);
      expect((await t.request('GET', '/v1/keys')).json.rootOnServer).toBe(false);
      expect((await keySetNow()).json.version).toBe(before);
    } finally {
      renameSync(join(t.dir, 'offline-root.json'), join(keysDir, rootFile));
    }
  });
});

type Overview = { keys: { kid: string; status: string; signing: boolean; latestBundleOf: string[] }[]; keySet: { version: number } };

/** The key events recorded with one of these reasons. */
const keyEventsFor = async (...reasons: string[]) =>
  (await t.request('GET', '/v1/audit?entityType=key&limit=500')).json.items.filter((e: { reason: string }) => reasons.includes(e.reason));

describe('/v1/keys changes name the key-set version they saw', () => {
  it('answers 428 to a change without If-Match, on every change route, and changes nothing', async () => {
    const before = await t.request('GET', '/v1/keys');
    const signer = (before.json as Overview).keys.find((k) => k.signing)!.kid;
    for (const path of ['/v1/keys/rotate', `/v1/keys/${signer}/promote`, `/v1/keys/${signer}/retire`]) {
      for (const ifMatch of [null, '', '  ']) {
        const r = await keyChange(path, { reason: 'no version named' }, ifMatch);
        expect(r.status, `${path} ${JSON.stringify(ifMatch)}`).toBe(428);
        expect(r.json).toMatchObject({ code: 'precondition_required', status: 428 });
        expect(r.json.detail).toMatch(/If-Match with the ETag you read/);
      }
    }
    expect((await t.request('GET', '/v1/keys')).json).toEqual(before.json);
    expect(await keyEventsFor('no version named')).toEqual([]);
  });

  it('answers 412 with the current key overview to a stale or unnamed version, re-signing and changing nothing', async () => {
    // A key that is active but no longer signs, and signed a tenant's latest bundle.
    // (200: the latest bundle is already signed by the key that signs now.)
    expect([200, 201]).toContain((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'signed by the old key' } })).status);
    const old = ((await t.request('GET', '/v1/keys')).json as Overview).keys.find((k) => k.signing)!.kid;
    const next = (await keyChange('/v1/keys/rotate', { reason: 'setup' }, await keysEtag())).json.kid;
    expect((await keyChange(`/v1/keys/${next}/promote`, { reason: 'setup' }, await keysEtag())).status).toBe(200);

    const seen = await t.request('GET', '/v1/keys');
    const stale = seen.headers.get('etag') as string;
    const version = (seen.json as Overview).keySet.version;
    expect(stale).toBe(`"${version}"`);
    expect((seen.json as Overview).keys.find((k) => k.kid === old)).toMatchObject({
      status: 'active',
      signing: false,
      latestBundleOf: expect.arrayContaining(['acme-research']),
    });
    // Someone else changes the keys first.
    const first = await keyChange('/v1/keys/rotate', { reason: 'someone else first' }, stale);
    expect(first.status, first.text).toBe(201);
    const now = await t.request('GET', '/v1/keys');
    expect(now.headers.get('etag')).toBe(`"${version + 1}"`);
    const bundleBefore = (await t.request('GET', '/v1/tenants/acme-research/bundles/latest')).headers.get('toolgate-version');

    const changes: [string, object][] = [
      ['/v1/keys/rotate', { reason: 'stale' }],
      [`/v1/keys/${first.json.kid}/promote`, { reason: 'stale' }],
      [`/v1/keys/${old}/retire`, { reason: 'stale', reissue: true }],
    ];
    for (const [path, body] of changes) {
      const r = await keyChange(path, body, stale);
      expect(r.status, path).toBe(412);
      expect(r.json.code).toBe('precondition_failed');
      expect(r.json.detail).toBe(`The key set is at version ${version + 1}, not ${version}; reload and re-apply your change`);
      expect(r.json.current).toEqual(now.json);
      // Unnamed versions: a wildcard, the public key-set document's ETag, a list.
      for (const unnamed of ['*', `"keyset-v${version + 1}"`, `"${version + 1}", "${version}"`]) {
        const u = await keyChange(path, body, unnamed);
        expect(u.status, `${path} ${unnamed}`).toBe(412);
        expect(u.json.detail).toMatch(new RegExp(`names no version.*the key set is at version ${version + 1}`));
        expect(u.json.current).toEqual(now.json);
      }
    }
    expect((await t.request('GET', '/v1/keys')).json).toEqual(now.json);
    expect((await t.request('GET', '/v1/tenants/acme-research/bundles/latest')).headers.get('toolgate-version')).toBe(bundleBefore);
    expect(await keyEventsFor('stale')).toEqual([]);

    // Reloaded, the same retirement goes through: re-signs, retires, answers the new version.
    const retired = await keyChange(`/v1/keys/${old}/retire`, { reason: 'after reloading', reissue: true }, now.headers.get('etag'));
    expect(retired.status, retired.text).toBe(200);
    expect(retired.json).toMatchObject({
      kid: old,
      keySetVersion: version + 2,
      reissued: expect.arrayContaining([expect.objectContaining({ tenant: 'acme-research' })]),
    });
    expect(retired.headers.get('etag')).toBe(`"${version + 2}"`);
    expect(await keysEtag()).toBe(`"${version + 2}"`);
  });

  it('makes exactly one of two concurrent changes based on the same key set', async () => {
    const etag = await keysEtag();
    const version = Number(JSON.parse(etag));
    const [a, b] = await Promise.all([keyChange('/v1/keys/rotate', { reason: 'race a' }, etag), keyChange('/v1/keys/rotate', { reason: 'race b' }, etag)]);
    expect([a.status, b.status].sort()).toEqual([201, 412]);
    const [won, lost] = a.status === 201 ? [a, b] : [b, a];
    expect(lost.json.current.keySet.version).toBe(version + 1);
    expect(lost.json.current.keys.map((k: { kid: string }) => k.kid)).toContain(won.json.kid);
    const after = (await t.request('GET', '/v1/keys')).json as Overview;
    expect(after.keySet.version).toBe(version + 1);
    expect(after.keys.filter((k) => k.status === 'next').map((k) => k.kid)).toEqual(expect.arrayContaining([won.json.kid]));
    expect((await keyEventsFor('race a', 'race b')).map((e: { entityId: string }) => e.entityId)).toEqual([won.json.kid]);

    // Different changes race the same way: promoting the new key or adding another, not both.
    const etag2 = `"${version + 1}"`;
    const [promote, rotate] = await Promise.all([
      keyChange(`/v1/keys/${won.json.kid}/promote`, { reason: 'race promote' }, etag2),
      keyChange('/v1/keys/rotate', { reason: 'race rotate' }, etag2),
    ]);
    expect([promote.status, rotate.status].filter((s) => s === 412)).toHaveLength(1);
    expect([promote.status, rotate.status].filter((s) => s === 200 || s === 201)).toHaveLength(1);
    expect((await keySetNow()).json.version).toBe(version + 2);
    expect(await keyEventsFor('race promote', 'race rotate')).toHaveLength(1);
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
