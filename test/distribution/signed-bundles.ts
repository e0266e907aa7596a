// Hand-made signed bundles for distribution tests: a small valid tenant policy, signed with a
// throwaway Ed25519 key exactly as DESIGN.md's "Bundle" section describes.
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import type { Bundle, BundleTool } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { sha256Canonical } from '../../runtime/sha256.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';

export type TestKey = { kid: string; privateKey: CryptoKey; publicJwk: JWK };

export async function makeKey(kid = 'test-key-1'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' } };
}

export function jwksOf(...keys: TestKey[]): { keys: JWK[] } {
  return { keys: keys.map((k) => k.publicJwk) };
}

export type BundleSpec = {
  tenant: string;
  version: number;
  /** How many tools the catalog holds (default 3). */
  tools?: number;
  /** A marker that changes the content, hence the revision, without changing the tool count. */
  flavor?: string;
  issuedAt?: string;
  expiresAt?: string;
  previousRevision?: string | null;
};

/** A valid bundle document with its revision and conformance vectors filled in. */
export function makeBundle(spec: BundleSpec): Bundle {
  const n = spec.tools ?? 3;
  const ids = Array.from({ length: n }, (_, i) => `core__tool-${String(i).padStart(4, '0')}`);
  const tools: BundleTool[] = ids.map((id, i) => {
    const inputSchema = {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: { query: { type: 'string', maxLength: 200 }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
    };
    const description = `Test tool ${i}${spec.flavor ? ` (${spec.flavor})` : ''}: looks something up and returns matching records.`;
    return {
      id,
      description,
      inputSchema,
      effect: i % 3 === 2 ? 'state_change' : 'read_only',
      redaction: { allow: ['result', 'items[].id'] },
      groups: ['default'],
      requiresConnection: false,
      parallel: { safe: true },
      source: { kind: 'core' },
      definitionHash: definitionHash({ name: id, description, inputSchema }),
    };
  });
  const body: Omit<Bundle, 'version' | 'revision' | 'previousRevision' | 'issuedAt' | 'expiresAt'> = {
    format: 'toolgate.bundle/v2',
    tenant: spec.tenant,
    catalog: {
      tools,
      groups: [{ name: 'default', description: 'Every tool unless placed elsewhere', includes: [] }],
      states: [{ name: 'undefined', description: 'The initial state' }],
    },
    policy: {
      roles: {
        analyst: { groups: ['default'], allow: ['core__*'], deny: [ids[0]], requireApproval: ['state_change'] },
      },
      bindings: { 'agent:support-bot': ['analyst'] },
      profiles: {},
      bundleTtlSeconds: 86400,
      grants: [],
    },
    casbin: {
      model: '[request_definition]\nr = sub, dom, obj, act\n',
      policy: [['p', 'analyst', spec.tenant, 'core__*', 'call', 'allow']],
      request: ['subject', 'tenant', 'toolId', 'action'],
    },
    conformance: [],
  };
  const issuedAt = spec.issuedAt ?? new Date().toISOString();
  const draft: Bundle = {
    ...body,
    version: spec.version,
    revision: '',
    previousRevision: spec.previousRevision ?? null,
    issuedAt,
    expiresAt: spec.expiresAt ?? new Date(Date.parse(issuedAt) + 86400_000).toISOString(),
  };
  const loaded = loadBundle(draft);
  draft.conformance = [{ subject: 'agent:support-bot' }, { subject: 'agent:unknown' }].map((request) => {
    const got = evaluate(loaded, request);
    return {
      rules: ['R6.2'],
      request,
      expect: { roles: [...got.roles], rejected: false, ...(got.filtered.length > 0 ? { hidden: { [got.filtered[0].id]: got.filtered[0].reason } } : {}) },
    };
  });
  draft.revision = revisionOf(draft);
  return draft;
}

/** `revision` as DESIGN.md defines it: sha256 of the canonical bundle without its envelope fields. */
export function revisionOf(bundle: Bundle): string {
  const { version: _v, revision: _r, previousRevision: _p, issuedAt: _i, expiresAt: _e, ...content } = bundle;
  return sha256Canonical(content);
}

/** A detached compact JWS over the exact bytes; `header` overrides the protected header. */
export async function signBytes(text: string, key: TestKey, header: Record<string, unknown> = {}): Promise<string> {
  const jws = await new CompactSign(new TextEncoder().encode(text))
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'toolgate-bundle+jws', ...header } as never)
    .sign(key.privateKey);
  const [protectedPart, , signature] = jws.split('.');
  return `${protectedPart}..${signature}`;
}

export type SignedBundle = { bundle: Bundle; text: string; signature: string };

export async function makeSignedBundle(spec: BundleSpec, key: TestKey): Promise<SignedBundle> {
  const bundle = makeBundle(spec);
  const text = canonicalJson(bundle);
  return { bundle, text, signature: await signBytes(text, key) };
}

/** Re-signs an edited document as-is (revision untouched), to test checks after the signature. */
export async function signDocument(doc: unknown, key: TestKey): Promise<SignedBundle> {
  const text = canonicalJson(doc);
  return { bundle: doc as Bundle, text, signature: await signBytes(text, key) };
}
