import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { toProblems, validatorFor } from '../policy-schemas/index.ts';
import type { Bundle, BundleV1, VerifyCode } from '../policy-schemas/types.gen.ts';
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V1,
  BUNDLE_JWS_TYP,
  READABLE_BUNDLE_FORMATS,
  canonicalBundleContentParts,
  revisionFromSha256Hex,
} from './bundle-format.ts';
import { parseDetachedJws, parseSignedJson } from './detached-jws.ts';
import { loadBundle } from './load-bundle.ts';
import type { LoadedBundle } from './load-bundle.ts';
import { conformanceFailures, runtimeSubject } from './conformance.ts';

export { BUNDLE_FORMAT, BUNDLE_JWS_TYP } from './bundle-format.ts';

/**
 * The keys a runtime trusts: a JWKS as served by `GET /.well-known/jwks.json`, or the keys of a
 * verified key set (trustedKeysOf), where a key may carry `status: "retired"`.
 */
export type TrustedKeys = { keys: (JWK & { status?: string })[] };

export type VerifyOptions = {
  trustedKeys: TrustedKeys;
  /** The tenant this runtime serves; a bundle for any other tenant is refused. */
  tenant: string;
  /** The highest version accepted before; a lower one is a rollback. */
  highestVersionSeen?: number;
  now?: Date;
  /** Accept a bundle this many seconds past `expiresAt` (the runtime's explicit grace period; default 0). */
  expiryGraceSeconds?: number;
  /** How far `issuedAt` may lie ahead of `now` (clocks differ a little); default CLOCK_SKEW_SECONDS. */
  clockSkewSeconds?: number;
};

/** The default allowance for a signer's clock running ahead of the runtime's. */
export const CLOCK_SKEW_SECONDS = 300;

export type VerifyResult = { ok: true; bundle: Bundle | BundleV1; loaded: LoadedBundle } | { ok: false; code: VerifyCode; message: string };

const importedKeys = new WeakMap<JWK, KeyObject | Error>();

/**
 * Decides whether a runtime may use a bundle: the detached JWS over the exact bytes is checked
 * before anything in the JSON is believed, then format, tenant, rollback, expiry, revision and
 * the bundle's own conformance vectors. Every refusal names one reason code.
 *
 * @example
 *   const r = await verifyBundle(bytes, res.headers.get('toolgate-signature'), { trustedKeys, tenant: 'acme' });
 *   if (!r.ok) log.warn(r.code, r.message);
 */
export async function verifyBundle(bytes: Uint8Array | string, signature: string | null | undefined, options: VerifyOptions): Promise<VerifyResult> {
  const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

  const header = parseDetachedJws(signature, BUNDLE_JWS_TYP);
  if (!header.ok) return header;
  const { protectedB64, signatureB64, kid } = header;

  const jwk = options.trustedKeys.keys.find((k) => k.kid === kid);
  if (!jwk) return refuse('unknown_kid', `no trusted key has kid ${JSON.stringify(kid)}`);
  if (jwk.status === 'retired') return refuse('retired_key', `the key ${JSON.stringify(kid)} that signed the bundle is retired`);
  const key = importTrustedKey(jwk);
  if (key instanceof Error) return refuse('unknown_kid', `the trusted key ${JSON.stringify(kid)} is not a usable Ed25519 public key`);
  // RFC 7515 signing input: ASCII(protected) '.' base64url(payload), verified in one pass by
  // node:crypto (a JOSE library would also decode the payload back, twice the work on megabytes).
  const signingInput = Buffer.from(`${protectedB64}.${body.toString('base64url')}`, 'latin1');
  if (!verifiesEd25519(signingInput, key, signatureB64)) {
    return refuse('bad_signature', `the signature does not verify under key ${JSON.stringify(kid)}`);
  }

  // From here on the bytes are the signer's; what they say can be believed, and checked.
  const parsed = parseSignedJson(body);
  if (!parsed) return refuse('malformed', 'the bundle is not UTF-8 JSON');
  const { text, doc } = parsed;
  if (!isRecord(doc)) return refuse('malformed', 'the bundle is not a JSON object');
  if (typeof doc.format !== 'string' || !READABLE_BUNDLE_FORMATS.includes(doc.format)) {
    return refuse('malformed', `unsupported bundle format ${JSON.stringify(doc.format)}; expected ${BUNDLE_FORMAT} (or ${BUNDLE_FORMAT_V1})`);
  }
  const content = canonicalBundleContentParts(doc, text);
  if (content === null) return refuse('malformed', 'the bundle is not RFC 8785 canonical JSON');
  const validateBundle = validatorFor(doc.format === BUNDLE_FORMAT_V1 ? 'bundle-v1' : 'bundle');
  if (!validateBundle(doc)) {
    const first = toProblems(validateBundle.errors ?? [])[0];
    return refuse('malformed', `the bundle does not match the bundle schema: ${first ? `${first.pointer || '/'} ${first.message}` : 'invalid'}`);
  }
  const bundle = doc as unknown as Bundle | BundleV1;

  if (bundle.tenant !== options.tenant) {
    return refuse('tenant_mismatch', `the bundle is for tenant ${JSON.stringify(bundle.tenant)}, not ${JSON.stringify(options.tenant)}`);
  }
  const highest = options.highestVersionSeen ?? 0;
  if (bundle.version < highest) {
    return refuse('rollback', `version ${bundle.version} is below version ${highest}, already accepted`);
  }
  const now = options.now ?? new Date();
  if (Date.parse(bundle.expiresAt) + (options.expiryGraceSeconds ?? 0) * 1000 <= now.getTime()) {
    return refuse('expired', `the bundle expired at ${bundle.expiresAt}`);
  }
  // A bundle from the future was signed by a wrong clock or made to outlive its lifetime.
  if (Date.parse(bundle.issuedAt) > now.getTime() + (options.clockSkewSeconds ?? CLOCK_SKEW_SECONDS) * 1000) {
    return refuse('issued_in_future', `the bundle was issued at ${bundle.issuedAt}, later than now (${now.toISOString()}) by more than the allowed clock skew`);
  }
  const hash = createHash('sha256');
  for (const part of content) hash.update(part);
  const revision = revisionFromSha256Hex(hash.digest('hex'));
  if (revision !== bundle.revision) {
    return refuse('revision_mismatch', `the content hashes to ${revision}, not the stated revision ${bundle.revision}`);
  }

  let loaded: LoadedBundle;
  try {
    loaded = loadBundle(bundle);
  } catch (err) {
    return refuse('malformed', `the bundle cannot be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
  const [failed] = conformanceFailures(bundle.conformance, runtimeSubject(loaded), 1);
  if (failed) {
    return refuse('conformance_failed', `conformance vector ${failed.index} (${failed.rules.join(', ')}) fails: ${failed.problem}`);
  }
  return { ok: true, bundle, loaded };
}

function importTrustedKey(jwk: JWK): KeyObject | Error {
  let key = importedKeys.get(jwk);
  if (key === undefined) {
    try {
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 public key');
      key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    } catch (err) {
      key = err instanceof Error ? err : new Error(String(err));
    }
    importedKeys.set(jwk, key);
  }
  return key;
}

/** Whether the Ed25519 signature verifies; a signature of the wrong length simply does not. */
function verifiesEd25519(signingInput: Buffer, key: KeyObject, signatureB64: string): boolean {
  try {
    return verifySignature(null, signingInput, key, Buffer.from(signatureB64, 'base64url'));
  } catch {
    return false;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function refuse(code: VerifyCode, message: string): { ok: false; code: VerifyCode; message: string } {
  return { ok: false, code, message };
}
