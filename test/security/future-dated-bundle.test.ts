import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { run as verifyCli } from '../../server/cli/commands/verify.ts';
import { jwksOf, makeBundle, makeKey, signBytes } from '../distribution/signed-bundles.ts';

// A bundle issued in the future (a signer with a wrong clock, or one made to outlive its
// lifetime) used to be accepted.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-future-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = new Date('2030-06-01T12:00:00Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();

async function signed(issuedAt: string) {
  const key = await makeKey('k1');
  const text = canonicalJson(makeBundle({ tenant: 'acme', version: 3, issuedAt, expiresAt: later(30 * 86400) }));
  return { text, signature: await signBytes(text, key), jwks: jwksOf(key) };
}

describe('verify refuses a bundle issued in the future', () => {
  for (const [what, seconds] of [
    ['a day', 86400],
    ['an hour', 3600],
    ['ten minutes', 600],
    ['a year', 365 * 86400],
  ] as const) {
    it(`refuses one issued ${what} ahead, with its own reason code`, async () => {
      const b = await signed(later(seconds));
      const r = await verifyBundle(b.text, b.signature, { trustedKeys: b.jwks, tenant: 'acme', now: NOW });
      expect(r).toMatchObject({ ok: false, code: 'issued_in_future' });
    });
  }

  it('allows a small clock skew', async () => {
    for (const seconds of [0, 30, 299]) {
      const b = await signed(later(seconds));
      const r = await verifyBundle(b.text, b.signature, { trustedKeys: b.jwks, tenant: 'acme', now: NOW });
      expect(r.ok, `${seconds} s ahead`).toBe(true);
    }
  });

  it('takes a stricter allowance when asked', async () => {
    const b = await signed(later(30));
    expect(await verifyBundle(b.text, b.signature, { trustedKeys: b.jwks, tenant: 'acme', now: NOW, clockSkewSeconds: 10 })).toMatchObject({
      code: 'issued_in_future',
    });
  });

  it('makes `toolgate verify` exit 1 naming the reason', async () => {
    const b = await signed(new Date(Date.now() + 7 * 86400_000).toISOString());
    writeFileSync(join(dir, 'bundle.json'), b.text);
    writeFileSync(join(dir, 'bundle.jws'), b.signature);
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify(b.jwks));
    const errors: string[] = [];
    const code = await verifyCli(['--bundle', join(dir, 'bundle.json'), '--signature', join(dir, 'bundle.jws'), '--jwks', join(dir, 'jwks.json')], {
      log: () => undefined,
      error: (l) => errors.push(l),
    });
    expect(code).toBe(1);
    expect(errors[0]).toMatch(/^refused: issued_in_future: the bundle was issued at /);
  });
});
