import {
  BUNDLE_FORMAT,
  BUNDLE_JWS_TYP,
  READABLE_BUNDLE_FORMATS,
  bundleContentText,
  bundleMembers,
  revisionFromSha256Hex,
} from '../../../../../runtime/bundle-format.ts';
import { KEYSET_FORMAT, KEYSET_JWS_TYP } from '../../../../../runtime/key-set-format.ts';
import { apiRaw } from '../../../lib/api-client.ts';

/** Where the root key to check against comes from. */
export type RootSource = { kind: 'pasted'; text: string } | { kind: 'server' };

export type Verification =
  | { ok: true; kid: string; keyStatus: string; bytes: number; keySetVersion: number; root: string; source: RootSource['kind'] }
  | { ok: false; reason: string };

type RootJwk = { kid?: string; kty?: string; crv?: string; x?: string };
type KeySetDoc = { format?: string; version?: number; expiresAt?: string; keys?: { kid: string; x: string; status: string }[]; roots?: RootJwk[] };

function b64urlToBytes(s: string): Uint8Array<ArrayBuffer> {
  const b64 = s
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(s.length / 4) * 4, '=');
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function bytesToB64url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

class Refused extends Error {}

/** The signed bytes name the bundle format and a revision their content hashes to, as a runtime checks. */
async function checkFormatAndRevision(bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  const doc = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  if (typeof doc.format !== 'string' || !READABLE_BUNDLE_FORMATS.includes(doc.format)) {
    throw new Refused(`The bundle has format ${String(doc.format ?? '(none)')}, not ${BUNDLE_FORMAT}.`);
  }
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(bundleContentText(bundleMembers(doc)))));
  const revision = revisionFromSha256Hex(Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''));
  if (revision !== doc.revision) throw new Refused(`The bundle's content hashes to ${revision}, not its stated revision ${String(doc.revision)}.`);
}

/**
 * Root public keys from pasted text: a JWK, a JWKS (`{ "keys": [...] }`) or a key set's `roots`,
 * as `toolgate keys root` prints them. Throws a readable message for anything else.
 */
export function parseRoots(text: string): RootJwk[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('The root key is not JSON: paste the output of toolgate keys root (or one Ed25519 JWK).');
  }
  const d = doc as { keys?: unknown; roots?: unknown };
  const list = (Array.isArray(d?.keys) ? d.keys : Array.isArray(d?.roots) ? d.roots : [doc]) as RootJwk[];
  const roots = list.filter((k) => k && k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string');
  if (!roots.length) throw new Error('No Ed25519 public key (kty OKP, crv Ed25519, x) in what was pasted.');
  return roots;
}

/** RFC 7638 thumbprint of an Ed25519 key: the kid Toolgate gives it. */
async function thumbprint(x: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`));
  return bytesToB64url(new Uint8Array(digest));
}

/** Checks a detached JWS over `bytes` with an Ed25519 key, expecting `typ`; returns the kid it names. */
function headerOf(jws: string, typ: string, what: string): { kid: string; protectedB64: string; sigB64: string } {
  const [protectedB64, empty, sigB64, ...more] = jws.trim().split('.');
  if (!protectedB64 || empty !== '' || !sigB64 || more.length) throw new Refused(`The ${what} signature is not a detached compact JWS.`);
  const header = JSON.parse(new TextDecoder().decode(b64urlToBytes(protectedB64))) as { alg?: string; kid?: string; typ?: string };
  if (header.alg !== 'EdDSA') throw new Refused(`The ${what} signature uses ${header.alg ?? 'no algorithm'}, not EdDSA.`);
  if (header.typ !== typ) throw new Refused(`The ${what} signature has typ ${header.typ ?? '(none)'}, not ${typ}.`);
  if (!header.kid) throw new Refused(`The ${what} signature names no key.`);
  return { kid: header.kid, protectedB64, sigB64 };
}

async function verifies(x: string, protectedB64: string, sigB64: string, bytes: Uint8Array): Promise<boolean> {
  const key = await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x, key_ops: ['verify'] } as JsonWebKey, { name: 'Ed25519' }, false, [
    'verify',
  ]);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, b64urlToBytes(sigB64), new TextEncoder().encode(`${protectedB64}.${bytesToB64url(bytes)}`));
}

/**
 * Checks a published bundle in the browser as a root-configured runtime does: the key set's
 * signature under a root key, its format and expiry; then the bundle's signature under a key the
 * key set lists as next or active (a retired key is refused). Ed25519 through WebCrypto.
 *
 * Only a pasted root adds trust: checked against the root this server's own key set names, the
 * result shows the server is consistent, not that it is the one your runtimes trust.
 */
export async function verifyBundle(tenant: string, version: number, source: RootSource): Promise<Verification> {
  try {
    const pasted = source.kind === 'pasted' ? parseRoots(source.text) : undefined;
    const base = `/v1/tenants/${encodeURIComponent(tenant)}/bundles/${version}`;
    const [bundleRes, sigRes, keySetRes] = await Promise.all([apiRaw(base), apiRaw(`${base}/signature`), apiRaw('/.well-known/toolgate-keyset.json')]);
    const bytes = new Uint8Array(await bundleRes.arrayBuffer());
    const jws = (await sigRes.text()).trim();
    const keySetBytes = new Uint8Array(await keySetRes.arrayBuffer());
    const keySetSig = keySetRes.headers.get('toolgate-signature');
    if (!keySetSig) throw new Refused('The server sent its key set without a Toolgate-Signature.');
    const keySet = JSON.parse(new TextDecoder().decode(keySetBytes)) as KeySetDoc;

    // 1. The key set, under a root.
    const ks = headerOf(keySetSig, KEYSET_JWS_TYP, 'key set');
    const roots = pasted ?? keySet.roots ?? [];
    let root: RootJwk | undefined;
    for (const r of roots) if ((r.kid ?? (await thumbprint(r.x!))) === ks.kid) root = r;
    if (!root) {
      throw new Refused(
        pasted
          ? `The key set is signed by ${ks.kid}, which is not the root key you pasted: this server is not vouched for by your root.`
          : `The key set is signed by ${ks.kid}, which is not a root it names.`,
      );
    }
    if (!(await verifies(root.x!, ks.protectedB64, ks.sigB64, keySetBytes))) throw new Refused(`The key set's signature does not verify under root ${ks.kid}.`);
    if (keySet.format !== KEYSET_FORMAT) throw new Refused(`The key set has format ${keySet.format ?? '(none)'}, not ${KEYSET_FORMAT}.`);
    if (!keySet.expiresAt || Date.parse(keySet.expiresAt) <= Date.now()) throw new Refused(`The key set expired at ${keySet.expiresAt ?? '(unknown)'}.`);
    // Like a runtime, this browser remembers the highest key-set version it verified under a root.
    const seenKey = 'toolgate.keySetVersion';
    const highest = Number(localStorage.getItem(seenKey) ?? 0);
    const keySetVersion = keySet.version ?? 0;
    if (keySetVersion < highest)
      throw new Refused(`The server sent key set v${keySetVersion}, older than v${highest} already verified in this browser: a rollback.`);
    localStorage.setItem(seenKey, String(keySetVersion));

    // 2. The bundle, under a key of the key set.
    const b = headerOf(jws, BUNDLE_JWS_TYP, 'bundle');
    const key = keySet.keys?.find((k) => k.kid === b.kid);
    if (!key) throw new Refused(`The bundle is signed by ${b.kid}, which the key set does not list.`);
    if (key.status === 'retired') throw new Refused(`The bundle is signed by ${b.kid}, which the key set lists as retired.`);
    if (!(await verifies(key.x, b.protectedB64, b.sigB64, bytes))) throw new Refused('The signature does not match the bundle bytes.');
    await checkFormatAndRevision(bytes);
    return { ok: true, kid: b.kid, keyStatus: key.status, bytes: bytes.length, keySetVersion: keySet.version ?? 0, root: ks.kid, source: source.kind };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, reason: err.message };
    if (err instanceof Error && /Ed25519|not supported|algorithm/i.test(err.message))
      return { ok: false, reason: `This browser could not check Ed25519 signatures (${err.message}).` };
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
