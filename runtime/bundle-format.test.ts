import { describe, expect, it } from 'vitest';
import { bundleContentText, bundleMembers, bundleRevision, canonicalBundleContent, joinBundleMembers } from './bundle-format.ts';
import { canonicalJson } from './canonical-json.ts';
import { sha256Hex } from './sha256.ts';

const doc = {
  format: 'toolgate.bundle/v1',
  tenant: 'acme',
  version: 3,
  revision: 'sha256:old',
  previousRevision: null,
  issuedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-02T00:00:00.000Z',
  catalog: { tools: [{ id: 'é', b: 1, a: 2 }] },
  policy: { 'z-last': true, Zfirst: false },
};

describe('bundle format', () => {
  it('joins the members into the canonical JSON of the whole bundle', () => {
    expect(joinBundleMembers(bundleMembers(doc))).toBe(canonicalJson(doc));
  });

  it('hashes only the content: the envelope fields leave the revision unchanged', () => {
    const before = bundleRevision(bundleMembers(doc), sha256Hex);
    const reissued = {
      ...doc,
      version: 9,
      revision: 'sha256:other',
      previousRevision: before,
      issuedAt: '2027-01-01T00:00:00.000Z',
      expiresAt: '2027-01-02T00:00:00.000Z',
    };
    expect(bundleRevision(bundleMembers(reissued), sha256Hex)).toBe(before);
    expect(bundleRevision(bundleMembers({ ...doc, tenant: 'globex' }), sha256Hex)).not.toBe(before);
  });

  it('is sha256 of the canonical bundle without its envelope, as DESIGN defines the revision', () => {
    const { version: _v, revision: _r, previousRevision: _p, issuedAt: _i, expiresAt: _e, ...content } = doc;
    expect(bundleContentText(bundleMembers(doc))).toBe(canonicalJson(content));
    expect(bundleRevision(bundleMembers(doc), sha256Hex)).toBe(`sha256:${sha256Hex(canonicalJson(content))}`);
  });

  it('leaves out members whose value is undefined, as canonical JSON does', () => {
    expect(joinBundleMembers(bundleMembers({ ...doc, extra: undefined }))).toBe(canonicalJson(doc));
  });

  it('finds the revision content of exactly the canonical texts, by the quick road or the long one', () => {
    const text = canonicalJson(doc);
    const parse = (t: string) => JSON.parse(t) as Record<string, unknown>;
    expect(canonicalBundleContent(parse(text), text)).toBe(bundleContentText(bundleMembers(doc)));
    // Names an engine orders as integers ("10" before "9" in canonical order) take the long road.
    const numeric = { ...doc, policy: { 9: 'nine', 10: 'ten', a: [{ 2: true, 11: false }] } };
    const numericText = canonicalJson(numeric);
    expect(numericText).toContain('{"10":"ten","9":"nine"');
    expect(canonicalBundleContent(parse(numericText), numericText)).toBe(bundleContentText(bundleMembers(numeric)));
    // Not canonical: spaces, members out of order, a number or a string written otherwise, an escaped lone surrogate.
    const refused = [
      JSON.stringify(doc, null, 1),
      text.replace('"a":2,"b":1', '"b":1,"a":2'),
      text.replace('"version":3', '"version":3.0'),
      text.replace('"acme"', '"\\u0061cme"'),
      text.replace('"acme"', '"\\udc00"'),
    ];
    for (const t of refused) expect(canonicalBundleContent(parse(t), t), t.slice(0, 60)).toBeNull();
  });
});
