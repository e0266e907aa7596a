import { beforeAll, describe, expect, it } from 'vitest';
import type { BundleTool } from '../policy-schemas/types.gen.ts';
import { canonicalJson } from './canonical-json.ts';
import { verifyBundle } from './verify-bundle.ts';
import type { TrustedKeys } from './verify-bundle.ts';
import { jwksOf, makeBundle, makeKey, makeSignedBundle, revisionOf, signBytes, signDocument } from '../test/distribution/signed-bundles.ts';
import type { TestKey } from '../test/distribution/signed-bundles.ts';

let key: TestKey;
let other: TestKey;
let trustedKeys: TrustedKeys;
const tenant = 'acme';

beforeAll(async () => {
  key = await makeKey('k1');
  other = await makeKey('k2');
  trustedKeys = jwksOf(key);
});

async function refusal(text: string, signature: string | null, opts: { highestVersionSeen?: number; now?: Date; tenant?: string } = {}) {
  const r = await verifyBundle(text, signature, { trustedKeys, tenant: opts.tenant ?? tenant, ...opts });
  return r.ok ? 'accepted' : r.code;
}

describe('verifyBundle', () => {
  it('accepts a correctly signed bundle and returns it loaded', async () => {
    const s = await makeSignedBundle({ tenant, version: 3 }, key);
    const r = await verifyBundle(Buffer.from(s.text), s.signature, { trustedKeys, tenant, highestVersionSeen: 3 });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.bundle.version).toBe(3);
      expect(r.loaded.revision).toBe(s.bundle.revision);
    }
  });

  it('accepts a key rotated in: any trusted kid verifies', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, other);
    const r = await verifyBundle(s.text, s.signature, { trustedKeys: jwksOf(key, other), tenant });
    expect(r.ok).toBe(true);
  });

  it('refuses bytes changed after signing with bad_signature', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, key);
    expect(await refusal(s.text.replace('Test tool 1', 'Test tool X'), s.signature)).toBe('bad_signature');
  });

  it('checks the signature before reading anything: garbage with a bad signature is bad_signature, not malformed', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, key);
    expect(await refusal('not json at all', s.signature)).toBe('bad_signature');
  });

  it('refuses a signature made by another key under a trusted kid with bad_signature', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, { ...other, kid: 'k1' });
    expect(await refusal(s.text, s.signature)).toBe('bad_signature');
  });

  it('refuses a kid that is not trusted with unknown_kid', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, other);
    expect(await refusal(s.text, s.signature)).toBe('unknown_kid');
  });

  it("refuses another tenant's bundle with tenant_mismatch", async () => {
    const s = await makeSignedBundle({ tenant: 'globex', version: 1 }, key);
    expect(await refusal(s.text, s.signature)).toBe('tenant_mismatch');
  });

  it('refuses a version below the highest seen with rollback, and accepts the same version again', async () => {
    const s = await makeSignedBundle({ tenant, version: 4 }, key);
    expect(await refusal(s.text, s.signature, { highestVersionSeen: 5 })).toBe('rollback');
    expect(await refusal(s.text, s.signature, { highestVersionSeen: 4 })).toBe('accepted');
  });

  it('refuses a bundle past its expiresAt with expired', async () => {
    const s = await makeSignedBundle({ tenant, version: 1, issuedAt: '2020-01-01T00:00:00.000Z', expiresAt: '2020-01-02T00:00:00.000Z' }, key);
    expect(await refusal(s.text, s.signature)).toBe('expired');
    expect(await refusal(s.text, s.signature, { now: new Date('2020-01-01T12:00:00Z') })).toBe('accepted');
  });

  it('refuses signed content that does not hash to its revision with revision_mismatch', async () => {
    const doc = makeBundle({ tenant, version: 1 });
    doc.catalog.groups[0].description = 'edited after the revision was computed';
    const s = await signDocument(doc, key);
    expect(await refusal(s.text, s.signature)).toBe('revision_mismatch');
  });

  it('refuses a bundle whose conformance vectors do not reproduce with conformance_failed', async () => {
    const doc = makeBundle({ tenant, version: 1 });
    doc.conformance[0].expect = { ...doc.conformance[0].expect, roles: ['nobody'] };
    doc.revision = revisionOf(doc);
    const s = await signDocument(doc, key);
    expect(await refusal(s.text, s.signature)).toBe('conformance_failed');
  });

  it('refuses signed bytes that are not canonical JSON, not a bundle or another format with malformed', async () => {
    const doc = makeBundle({ tenant, version: 1 });
    const pretty = JSON.stringify(JSON.parse(canonicalJson(doc)), null, 2);
    expect(await refusal(pretty, await signBytes(pretty, key))).toBe('malformed');
    expect(await refusal('{"format":', await signBytes('{"format":', key))).toBe('malformed');
    const v3 = canonicalJson({ ...doc, format: 'toolgate.bundle/v3' });
    expect(await refusal(v3, await signBytes(v3, key))).toBe('malformed');
    // A v2 document labelled v1 lacks v1's index: refused by the v1 schema.
    const asV1 = canonicalJson({ ...doc, format: 'toolgate.bundle/v1' });
    expect(await refusal(asV1, await signBytes(asV1, key))).toBe('malformed');
    // v2 has no index: a bundle carrying one is not a v2 bundle.
    const withIndex = canonicalJson({ ...doc, index: { tools: [] } });
    expect(await refusal(withIndex, await signBytes(withIndex, key))).toBe('malformed');
  });

  it('refuses a bundle the loader cannot load (a tool naming a shared schema the table lacks) with malformed', async () => {
    const doc = makeBundle({ tenant, version: 1 });
    const { inputSchema: _inline, ...rest } = doc.catalog.tools[1] as BundleTool;
    doc.catalog.tools[1] = { ...rest, inputSchemaRef: 0 };
    doc.revision = revisionOf(doc);
    const s = await signDocument(doc, key);
    const r = await verifyBundle(s.text, s.signature, { trustedKeys, tenant });
    expect(r.ok ? 'accepted' : [r.code, r.message]).toEqual(['malformed', expect.stringContaining('catalog.schemas')]);
  });

  it('refuses a bundle whose tools are out of id order with malformed', async () => {
    const doc = makeBundle({ tenant, version: 1 });
    doc.catalog.tools = [...doc.catalog.tools].reverse();
    doc.revision = revisionOf(doc);
    const s = await signDocument(doc, key);
    expect(await refusal(s.text, s.signature)).toBe('malformed');
  });

  it('refuses signatures of the wrong shape, alg or typ with malformed', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, key);
    expect(await refusal(s.text, null)).toBe('malformed');
    expect(await refusal(s.text, '')).toBe('malformed');
    expect(await refusal(s.text, 'a.b.c')).toBe('malformed');
    const [p, , sig] = s.signature.split('.');
    const attached = `${p}.${Buffer.from(s.text).toString('base64url')}.${sig}`;
    expect(await refusal(s.text, attached)).toBe('malformed');
    expect(await refusal(s.text, await signBytes(s.text, key, { typ: 'JWT' }))).toBe('malformed');
    const hs = Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'k1', typ: 'toolgate-bundle+jws' })).toString('base64url');
    expect(await refusal(s.text, `${hs}..${sig}`)).toBe('malformed');
    const noKid = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'toolgate-bundle+jws' })).toString('base64url');
    expect(await refusal(s.text, `${noKid}..${sig}`)).toBe('malformed');
  });

  it('treats a trusted JWKS entry that is not an Ed25519 public key as unknown_kid', async () => {
    const s = await makeSignedBundle({ tenant, version: 1 }, key);
    const r = await verifyBundle(s.text, s.signature, { trustedKeys: { keys: [{ kty: 'oct', kid: 'k1', k: 'AAAA' }] }, tenant });
    expect(r.ok ? 'accepted' : r.code).toBe('unknown_kid');
  });
});
