import { FlattenedSign } from 'jose';
import type { SigningKey } from './key-store.ts';

/** The `typ` of every bundle signature. */
export const BUNDLE_JWS_TYP = 'toolgate-bundle+jws';

/**
 * Signs the exact bytes of bundle.json: a detached compact JWS (RFC 7515 appendix F),
 * `<protected>..<signature>`, header `{"alg":"EdDSA","kid":…,"typ":"toolgate-bundle+jws"}`.
 */
export async function signBundle(bytes: Uint8Array, key: SigningKey): Promise<string> {
  const jws = await new FlattenedSign(bytes)
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: BUNDLE_JWS_TYP })
    .sign(key.privateKey);
  return `${jws.protected}..${jws.signature}`;
}
