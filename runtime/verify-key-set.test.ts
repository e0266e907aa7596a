import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore, loadRoot } from '../server/signing/key-store.ts';
import { signKeySet } from '../server/signing/sign.ts';
import { canonicalJson } from './canonical-json.ts';
import { verifyKeySet } from './verify-key-set.ts';
import type { KeySet } from '../policy-schemas/types.gen.ts';

let dir: string;
let store: KeyStore;
let bytes: Buffer;
let signature: string;
let keySet: KeySet;
let root: { kid: string; privateKey: CryptoKey | Uint8Array };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-keyset-'));
  store = new KeyStore(join(dir, 'keys'));
  ({ bytes, signature, keySet } = await store.keySet());
  root = await loadRoot(join(dir, 'keys', readdirSync(join(dir, 'keys')).find((n) => n.endsWith('.root.json'))!));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const roots = () => keySet.roots;
const resign = async (doc: unknown, text = canonicalJson(doc)) => ({ bytes: Buffer.from(text), signature: await signKeySet(Buffer.from(text), root) });

describe('verifyKeySet', () => {
  it('accepts the key set signed by a trusted root and gives its keys, status included, to verifyBundle', async () => {
    const r = await verifyKeySet(bytes, signature, { trustedRoots: roots() });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.trustedKeys.keys).toEqual([expect.objectContaining({ kid: keySet.keys[0].kid, status: 'active' })]);
    // A root given without kid is matched by its thumbprint.
    const { kid: _kid, ...anonymous } = roots()[0];
    expect((await verifyKeySet(bytes, signature, { trustedRoots: [anonymous] })).ok).toBe(true);
  });

  it('refuses each problem with its own reason code', async () => {
    const other = await new KeyStore(join(dir, 'other')).keySet();
    const cases: [string, Promise<unknown>, string][] = [
      ['no signature', verifyKeySet(bytes, null, { trustedRoots: roots() }), 'keyset_malformed'],
      [
        'a bundle typ',
        verifyKeySet(
          bytes,
          `${Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: root.kid, typ: 'toolgate-bundle+jws' })).toString('base64url')}..${signature.split('..')[1]}`,
          { trustedRoots: roots() },
        ),
        'keyset_malformed',
      ],
      ['another root', verifyKeySet(bytes, signature, { trustedRoots: other.keySet.roots }), 'keyset_untrusted_root'],
      [
        'a flipped byte',
        verifyKeySet(Buffer.from(bytes.toString().replace('"active"', '"activf"')), signature, { trustedRoots: roots() }),
        'keyset_bad_signature',
      ],
      ['an older version', verifyKeySet(bytes, signature, { trustedRoots: roots(), highestVersionSeen: keySet.version + 1 }), 'keyset_rollback'],
      ['past expiresAt', verifyKeySet(bytes, signature, { trustedRoots: roots(), now: new Date(Date.parse(keySet.expiresAt) + 1) }), 'keyset_expired'],
    ];
    for (const [what, p, code] of cases) expect(await p, what).toMatchObject({ ok: false, code });

    const pretty = await resign(keySet, JSON.stringify(keySet, null, 2));
    expect(await verifyKeySet(pretty.bytes, pretty.signature, { trustedRoots: roots() })).toMatchObject({
      ok: false,
      code: 'keyset_malformed',
      message: expect.stringMatching(/canonical/),
    });
    const wrongFormat = await resign({ ...keySet, format: 'toolgate.keyset/v9' });
    expect(await verifyKeySet(wrongFormat.bytes, wrongFormat.signature, { trustedRoots: roots() })).toMatchObject({
      code: 'keyset_malformed',
      message: expect.stringMatching(/format/),
    });
    const badStatus = await resign({ ...keySet, keys: [{ ...keySet.keys[0], status: 'sometimes' }] });
    expect(await verifyKeySet(badStatus.bytes, badStatus.signature, { trustedRoots: roots() })).toMatchObject({
      code: 'keyset_malformed',
      message: expect.stringMatching(/\/keys\/0\/status/),
    });
    const noRoots = await resign({ ...keySet, roots: [] });
    expect(await verifyKeySet(noRoots.bytes, noRoots.signature, { trustedRoots: roots() })).toMatchObject({ code: 'keyset_malformed' });
  });
});
