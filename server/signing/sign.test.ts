import { FlattenedSign, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { rng } from '../../test/support/seeded-random.ts';
import { signBundle, signCheckpoint, signKeySet } from './sign.ts';

describe('detached EdDSA signatures', () => {
  it('are exactly what jose writes, for any bytes and each kind', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const signer = { kid: 'k-1', privateKey };
    const r = rng(7);
    const payloads = [
      new Uint8Array(0),
      new TextEncoder().encode('{"a":1}'),
      ...Array.from({ length: 20 }, () => Uint8Array.from({ length: r.int(5000) }, () => r.int(256))),
    ];
    // A view into a larger buffer: only its own bytes are signed.
    payloads.push(new Uint8Array(Uint8Array.from({ length: 64 }, (_, i) => i).buffer, 10, 20));
    for (const [sign, typ] of [
      [signBundle, 'toolgate-bundle+jws'],
      [signKeySet, 'toolgate-keyset+jws'],
      [signCheckpoint, 'toolgate-audit-checkpoint+jws'],
    ] as const) {
      for (const bytes of payloads) {
        const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg: 'EdDSA', kid: 'k-1', typ }).sign(privateKey);
        expect(await sign(bytes, signer)).toBe(`${jws.protected}..${jws.signature}`);
      }
    }
  });
});
