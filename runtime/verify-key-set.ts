import { calculateJwkThumbprint, flattenedVerify, importJWK } from 'jose';
import { toProblems, validatorFor } from '../policy-schemas/index.ts';
import type { KeySet, RootPublicKey, VerifyCode } from '../policy-schemas/types.gen.ts';
import { canonicalJson } from './canonical-json.ts';
import { parseDetachedJws, parseSignedJson } from './detached-jws.ts';
import { KEYSET_FORMAT, KEYSET_JWS_TYP } from './key-set-format.ts';
import type { TrustedKeys } from './verify-bundle.ts';

export { KEYSET_FORMAT, KEYSET_JWS_TYP } from './key-set-format.ts';

/** A root public key as an operator configures it (an Ed25519 JWK; `kid` defaults to its RFC 7638 thumbprint). */
export type RootKey = { kid?: string; kty: string; crv?: string; x?: string };

export type KeySetVerifyOptions = {
  /** The root keys trusted to sign key sets. */
  trustedRoots: readonly RootKey[];
  /** The highest key-set version verified before; a lower one is a rollback. */
  highestVersionSeen?: number;
  now?: Date;
};

export type KeySetVerifyResult = { ok: true; keySet: KeySet; trustedKeys: TrustedKeys } | { ok: false; code: VerifyCode; message: string };

/**
 * Decides whether a key set may tell a runtime which signing keys to trust: signed (detached JWS,
 * `typ: toolgate-keyset+jws`) by one of the trusted roots over its exact bytes, RFC 8785
 * canonical, in the key-set format, not older than the newest one already verified, not expired.
 * Every refusal names one `keyset_*` reason code.
 *
 * @example
 *   const r = await verifyKeySet(bytes, res.headers.get('toolgate-signature'), { trustedRoots: [rootJwk] });
 *   if (r.ok) await verifyBundle(bundleBytes, bundleSig, { trustedKeys: r.trustedKeys, tenant });
 */
export async function verifyKeySet(
  bytes: Uint8Array | string,
  signature: string | null | undefined,
  options: KeySetVerifyOptions,
): Promise<KeySetVerifyResult> {
  const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = parseDetachedJws(signature, KEYSET_JWS_TYP, 'keyset_malformed');
  if (!header.ok) return header;

  const root = await findRoot(options.trustedRoots, header.kid);
  if (!root) return refuse('keyset_untrusted_root', `the key set is signed by ${JSON.stringify(header.kid)}, which is not a trusted root key`);
  try {
    const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: root.x }, 'EdDSA');
    await flattenedVerify({ protected: header.protectedB64, payload: body.toString('base64url'), signature: header.signatureB64 }, key, {
      algorithms: ['EdDSA'],
    });
  } catch {
    return refuse('keyset_bad_signature', `the key-set signature does not verify under root ${JSON.stringify(header.kid)}`);
  }

  const parsed = parseSignedJson(body);
  if (!parsed) return refuse('keyset_malformed', 'the key set is not UTF-8 JSON');
  const { text, doc } = parsed;
  if (typeof doc !== 'object' || doc === null || (doc as { format?: unknown }).format !== KEYSET_FORMAT) {
    return refuse('keyset_malformed', `unsupported key-set format ${JSON.stringify((doc as { format?: unknown } | null)?.format)}; expected ${KEYSET_FORMAT}`);
  }
  if (canonicalJson(doc) !== text) return refuse('keyset_malformed', 'the key set is not RFC 8785 canonical JSON');
  const validate = validatorFor('key-set');
  if (!validate(doc)) {
    const first = toProblems(validate.errors ?? [])[0];
    return refuse('keyset_malformed', `the key set does not match the key-set schema: ${first ? `${first.pointer || '/'} ${first.message}` : 'invalid'}`);
  }
  const keySet = doc as KeySet;
  const highest = options.highestVersionSeen ?? 0;
  if (keySet.version < highest) return refuse('keyset_rollback', `key-set version ${keySet.version} is below version ${highest}, already verified`);
  const now = options.now ?? new Date();
  if (Date.parse(keySet.expiresAt) <= now.getTime()) return refuse('keyset_expired', `the key set expired at ${keySet.expiresAt}`);
  return { ok: true, keySet, trustedKeys: trustedKeysOf(keySet) };
}

/** The keys of a verified key set as verifyBundle takes them (retired keys kept, so a bundle they signed is refused by name). */
export function trustedKeysOf(keySet: KeySet): TrustedKeys {
  return { keys: keySet.keys.map((k) => ({ kid: k.kid, kty: k.kty, crv: k.crv, x: k.x, status: k.status })) };
}

/** The roots a key set announces, as RootKeys. */
export function rootsOf(keySet: KeySet): RootKey[] {
  return keySet.roots.map((r: RootPublicKey) => ({ kid: r.kid, kty: r.kty, crv: r.crv, x: r.x }));
}

async function findRoot(roots: readonly RootKey[], kid: string): Promise<{ x: string } | undefined> {
  for (const r of roots) {
    if (r.kty !== 'OKP' || r.crv !== 'Ed25519' || typeof r.x !== 'string') continue;
    const id = r.kid ?? (await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: r.x }));
    if (id === kid) return { x: r.x };
  }
  return undefined;
}

function refuse(code: VerifyCode, message: string): { ok: false; code: VerifyCode; message: string } {
  return { ok: false, code, message };
}
