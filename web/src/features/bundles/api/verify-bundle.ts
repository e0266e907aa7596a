import { apiRaw } from '../../../lib/api-client.ts';

export type Verification = { ok: true; kid: string; bytes: number } | { ok: false; reason: string };

function b64urlToBytes(s: string): Uint8Array<ArrayBuffer> {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=');
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

/**
 * Checks a published bundle in the browser as a runtime would check its signature: the detached JWS
 * over the exact bytes of bundle.json, under a key from the JWKS (Ed25519 through WebCrypto).
 */
export async function verifyBundle(tenant: string, version: number): Promise<Verification> {
  const base = `/v1/tenants/${encodeURIComponent(tenant)}/bundles/${version}`;
  const [bundleRes, sigRes, jwksRes] = await Promise.all([apiRaw(base), apiRaw(`${base}/signature`), apiRaw('/.well-known/jwks.json')]);
  const bytes = new Uint8Array(await bundleRes.arrayBuffer());
  const jws = (await sigRes.text()).trim();
  const jwks = (await jwksRes.json()) as { keys: (JsonWebKey & { kid?: string })[] };
  const [protectedB64, empty, sigB64] = jws.split('.');
  if (!protectedB64 || empty !== '' || !sigB64) return { ok: false, reason: 'The signature is not a detached compact JWS.' };
  const header = JSON.parse(new TextDecoder().decode(b64urlToBytes(protectedB64))) as { alg?: string; kid?: string };
  if (header.alg !== 'EdDSA') return { ok: false, reason: `Unexpected algorithm ${header.alg ?? '(none)'}.` };
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return { ok: false, reason: `Unknown key ${header.kid ?? '(no kid)'}.` };
  const { kid: _kid, ...keyData } = jwk;
  try {
    const key = await crypto.subtle.importKey('jwk', { ...keyData, key_ops: ['verify'] } as JsonWebKey, { name: 'Ed25519' }, false, ['verify']);
    const input = new TextEncoder().encode(`${protectedB64}.${bytesToB64url(bytes)}`);
    const ok = await crypto.subtle.verify({ name: 'Ed25519' }, key, b64urlToBytes(sigB64), input);
    return ok ? { ok: true, kid: header.kid!, bytes: bytes.length } : { ok: false, reason: 'The signature does not match the bundle bytes.' };
  } catch (err) {
    return { ok: false, reason: `This browser could not check Ed25519 signatures (${err instanceof Error ? err.message : 'unknown error'}).` };
  }
}
