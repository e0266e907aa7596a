import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CompactSign, FlattenedSign, generateKeyPair } from 'jose';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { signBundle } from '../../server/signing/sign.ts';
import { demoSnapshot } from './demo-snapshot.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'toolgate-keys-'));
  dirs.push(d);
  return join(d, 'keys');
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const now = new Date('2026-01-01T12:00:00Z');
const compiled = compileBundle(demoSnapshot('acme-research'), { version: 1, previousRevision: null, issuedAt: '2026-01-01T00:00:00Z' });
if (!compiled.ok) throw new Error('compile failed');
const bytes = compiled.bytes;

describe('key store', () => {
  it('creates the first key, a root key and key set v1 on first use, private keys in files only the owner can read', async () => {
    const dir = tempDir();
    const store = new KeyStore(dir);
    const key = await store.signer();
    const { keySet } = await store.keySet();
    const root = keySet.roots[0].kid;
    expect(readdirSync(dir).sort()).toEqual([`${key.kid}.json`, `${root}.root.json`, 'keyset'].sort());
    for (const f of [`${key.kid}.json`, `${root}.root.json`]) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    expect(keySet).toMatchObject({ format: 'toolgate.keyset/v1', version: 1, keys: [{ kid: key.kid, status: 'active' }] });
    expect((await store.jwks()).keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: key.kid, alg: 'EdDSA', use: 'sig' }]);
    expect(JSON.stringify(await store.jwks())).not.toContain('"d"');
  });

  it('publishes a rotated key as next before it signs, then signs with it once promoted, seen by a running store without restart', async () => {
    const dir = tempDir();
    const server = new KeyStore(dir);
    const first = await server.signer();
    const cli = new KeyStore(dir);
    const second = await cli.rotate();
    expect(second.kid).not.toBe(first.kid);
    expect((await server.signer()).kid).toBe(first.kid);
    expect((await server.keySet()).keySet).toMatchObject({
      version: 2,
      keys: [
        { kid: first.kid, status: 'active' },
        { kid: second.kid, status: 'next' },
      ],
    });
    await cli.promote();
    expect((await server.signer()).kid).toBe(second.kid);
    expect((await server.keySet()).keySet).toMatchObject({
      version: 3,
      keys: [
        { kid: first.kid, status: 'active' },
        { kid: second.kid, status: 'active' },
      ],
    });
    expect((await server.jwks()).keys.map((k) => k.kid).sort()).toEqual([first.kid, second.kid].sort());
    expect((await server.list()).map((k) => [k.kid, k.signing])).toEqual([
      [first.kid, false],
      [second.kid, true],
    ]);
    const jws = await signBundle(bytes, await server.signer());
    const r = await verifyBundle(bytes, jws, { trustedKeys: await server.jwks(), tenant: 'acme-research', now });
    expect(r.ok).toBe(true);
  });
});

describe('bundle signatures', () => {
  it('is a detached compact JWS with exactly the agreed protected header', async () => {
    const store = new KeyStore(tempDir());
    const key = await store.signer();
    const jws = await signBundle(bytes, key);
    const [header, payload, signature] = jws.split('.');
    expect(payload).toBe('');
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(Buffer.from(header, 'base64url').toString()).toBe(JSON.stringify({ alg: 'EdDSA', kid: key.kid, typ: 'toolgate-bundle+jws' }));
    // Appendix F: re-attaching the payload gives an ordinary compact JWS over the same bytes.
    const attached = await new CompactSign(bytes).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'toolgate-bundle+jws' }).sign(key.privateKey);
    expect(attached.split('.')[0]).toBe(header);
  });

  it('verifies, and refuses a tampered byte, an unknown kid and a wrong algorithm with their own reasons', async () => {
    const store = new KeyStore(tempDir());
    const key = await store.signer();
    const jwks = await store.jwks();
    const jws = await signBundle(bytes, key);
    const opts = { trustedKeys: jwks, tenant: 'acme-research', now };
    expect((await verifyBundle(bytes, jws, opts)).ok).toBe(true);

    const tampered = Buffer.from(bytes);
    const at = tampered.indexOf('"core__knowledge-query"') + 7;
    tampered[at] ^= 0x01;
    expect(await verifyBundle(tampered, jws, opts)).toMatchObject({ ok: false, code: 'bad_signature' });

    const stranger = await new KeyStore(tempDir()).signer();
    expect(await verifyBundle(bytes, await signBundle(bytes, stranger), opts)).toMatchObject({ ok: false, code: 'unknown_kid' });

    const { privateKey } = await generateKeyPair('ES256');
    const es = await new FlattenedSign(bytes).setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'toolgate-bundle+jws' }).sign(privateKey);
    const wrongAlg = await verifyBundle(bytes, `${es.protected}..${es.signature}`, opts);
    expect(wrongAlg.ok).toBe(false);
    if (!wrongAlg.ok) expect(wrongAlg.message).toMatch(/alg/);

    // alg "none" with the right kid must not pass either.
    const none = Buffer.from(JSON.stringify({ alg: 'none', kid: key.kid, typ: 'toolgate-bundle+jws' })).toString('base64url');
    expect((await verifyBundle(bytes, `${none}..`, opts)).ok).toBe(false);
  });
});
