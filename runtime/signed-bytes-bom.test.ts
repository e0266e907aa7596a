import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore, loadRoot } from '../server/signing/key-store.ts';
import { signKeySet } from '../server/signing/sign.ts';
import { jwksOf, makeKey, makeSignedBundle, signBytes } from '../test/distribution/signed-bundles.ts';
import { verifyBundle } from './verify-bundle.ts';
import { verifyKeySet } from './verify-key-set.ts';

// R5.7 and R3.3.4: signed bytes are exactly the RFC 8785 form. A UTF-8 byte-order mark before
// them is not part of that form, even when the signature covers it.
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-bom-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('signed bytes starting with a UTF-8 byte-order mark', () => {
  it('a bundle signed with the mark is refused as malformed, the same bytes without it accepted', async () => {
    const key = await makeKey('k1');
    const s = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
    const withMark = Buffer.concat([BOM, Buffer.from(s.text)]);
    const signature = await signBytes(`\uFEFF${s.text}`, key);
    const refused = await verifyBundle(withMark, signature, { trustedKeys: jwksOf(key), tenant: 'acme' });
    expect(refused).toMatchObject({ ok: false, code: 'malformed' });
    expect((await verifyBundle(Buffer.from(s.text), s.signature, { trustedKeys: jwksOf(key), tenant: 'acme' })).ok).toBe(true);
  });

  it('a key set signed with the mark is refused as keyset_malformed', async () => {
    const store = new KeyStore(join(dir, 'keys'));
    const { bytes, keySet } = await store.keySet();
    const root = await loadRoot(join(dir, 'keys', readdirSync(join(dir, 'keys')).find((n) => n.endsWith('.root.json'))!));
    const withMark = Buffer.concat([BOM, bytes]);
    const refused = await verifyKeySet(withMark, await signKeySet(withMark, root), { trustedRoots: keySet.roots });
    expect(refused).toMatchObject({ ok: false, code: 'keyset_malformed' });
  });
});
