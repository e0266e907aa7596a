import { KeyObject, sign as nodeSign } from 'node:crypto';
import { FlattenedSign } from 'jose';
import type { CryptoKey } from 'jose';
import { BUNDLE_JWS_TYP } from '../../runtime/bundle-format.ts';
import { KEYSET_JWS_TYP } from '../../runtime/key-set-format.ts';
import { APPROVAL_JWS_TYP } from '../../runtime/approval-receipt.ts';

/** The `typ` of an audit checkpoint's signature (made by an active signing key). */
export const CHECKPOINT_JWS_TYP = 'toolgate-audit-checkpoint+jws';

type Signer = { readonly kid: string; readonly privateKey: CryptoKey | Uint8Array };

/**
 * A detached compact JWS (RFC 7515 appendix F), `<protected>..<signature>`, EdDSA over the exact
 * bytes, protected header `{"alg":"EdDSA","kid":…,"typ":…}`.
 */
async function signDetached(bytes: Uint8Array, key: Signer, typ: string): Promise<string> {
  const header = { alg: 'EdDSA', kid: key.kid, typ };
  const ed25519 = ed25519KeyObject(key.privateKey);
  if (ed25519) {
    // What jose's FlattenedSign computes, with node:crypto's base64url: jose encodes in JavaScript,
    // some 30 ms for a 2,000-tool bundle. Ed25519 is deterministic, so the signature is the same.
    const protectedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
    const payload = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
    const signature = nodeSign(null, Buffer.from(`${protectedHeader}.${payload}`, 'ascii'), ed25519);
    return `${protectedHeader}..${signature.toString('base64url')}`;
  }
  const jws = await new FlattenedSign(bytes).setProtectedHeader(header).sign(key.privateKey);
  return `${jws.protected}..${jws.signature}`;
}

const keyObjects = new WeakMap<object, KeyObject | null>();

/** The node:crypto key of an Ed25519 private CryptoKey, or null for any other key (jose signs with those). */
function ed25519KeyObject(key: CryptoKey | Uint8Array): KeyObject | null {
  if (key instanceof Uint8Array) return null;
  let found = keyObjects.get(key);
  if (found === undefined) {
    try {
      const k = KeyObject.from(key as Parameters<typeof KeyObject.from>[0]);
      found = k.type === 'private' && k.asymmetricKeyType === 'ed25519' ? k : null;
    } catch {
      found = null;
    }
    keyObjects.set(key, found);
  }
  return found;
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

/** Signs the RFC 8785 bytes of an approval receipt's payload with an active signing key. */
export function signApprovalReceipt(bytes: Uint8Array, key: Signer): Promise<string> {
  return signDetached(bytes, key, APPROVAL_JWS_TYP);
}
