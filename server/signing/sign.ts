import { FlattenedSign } from 'jose';
import type { CryptoKey } from 'jose';
import { BUNDLE_JWS_TYP } from '../../runtime/bundle-format.ts';
import { KEYSET_JWS_TYP } from '../../runtime/key-set-format.ts';

/** The `typ` of an audit checkpoint's signature (made by an active signing key). */
export const CHECKPOINT_JWS_TYP = 'toolgate-audit-checkpoint+jws';

type Signer = { readonly kid: string; readonly privateKey: CryptoKey | Uint8Array };

/**
 * A detached compact JWS (RFC 7515 appendix F), `<protected>..<signature>`, EdDSA over the exact
 * bytes, protected header `{"alg":"EdDSA","kid":…,"typ":…}`.
 */
async function signDetached(bytes: Uint8Array, key: Signer, typ: string): Promise<string> {
  const jws = await new FlattenedSign(bytes).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ }).sign(key.privateKey);
  return `${jws.protected}..${jws.signature}`;
}

/** Signs the exact bytes of bundle.json with a signing key. */
export function signBundle(bytes: Uint8Array, key: Signer): Promise<string> {
  return signDetached(bytes, key, BUNDLE_JWS_TYP);
}

/** Signs the exact bytes of a key set with a root key. */
export function signKeySet(bytes: Uint8Array, root: Signer): Promise<string> {
  return signDetached(bytes, root, KEYSET_JWS_TYP);
}

/** Signs the RFC 8785 bytes of an audit checkpoint with an active signing key. */
export function signCheckpoint(bytes: Uint8Array, key: Signer): Promise<string> {
  return signDetached(bytes, key, CHECKPOINT_JWS_TYP);
}
