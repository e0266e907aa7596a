import type { VerifyCode } from '../policy-schemas/types.gen.ts';

/** A detached compact JWS split into its parts, with the `kid` its protected header names. */
export type ParsedJws = { ok: true; protectedB64: string; signatureB64: string; kid: string };
export type JwsRefusal = { ok: false; code: VerifyCode; message: string };

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Parses a detached compact JWS (RFC 7515 appendix F, `<protected>..<signature>`) and checks its
 * protected header: EdDSA, exactly the expected `typ` (a bundle signature is no key-set signature),
 * a kid, and no crit/b64 parameters that would change what was signed. Nothing is verified yet.
 */
export function parseDetachedJws(signature: string | null | undefined, typ: string, malformed: VerifyCode = 'malformed'): ParsedJws | JwsRefusal {
  const refuse = (message: string): JwsRefusal => ({ ok: false, code: malformed, message });
  if (typeof signature !== 'string' || signature.length === 0) return refuse('no signature');
  const parts = signature.trim().split('.');
  if (parts.length !== 3 || parts[1] !== '' || !B64URL.test(parts[0]) || !B64URL.test(parts[2])) {
    return refuse('the signature is not a detached compact JWS (<protected>..<signature>)');
  }
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    return refuse('the JWS protected header is not JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return refuse('the JWS protected header is not an object');
  const h = header as Record<string, unknown>;
  if (h.alg !== 'EdDSA') return refuse(`unsupported JWS alg ${JSON.stringify(h.alg)}; expected EdDSA`);
  if (h.typ !== typ) return refuse(`unsupported JWS typ ${JSON.stringify(h.typ)}; expected ${typ}`);
  if (typeof h.kid !== 'string' || h.kid === '') return refuse('the JWS protected header names no kid');
  // An unencoded payload (b64: false) or any critical extension would change what was signed.
  if ('crit' in h || 'b64' in h) return refuse('the JWS protected header carries unsupported crit/b64 parameters');
  return { ok: true, protectedB64: parts[0], signatureB64: parts[2], kid: h.kid };
}

/**
 * Decodes verified bytes as strict UTF-8 JSON; null when they are not. A byte-order mark is kept
 * (TextDecoder would drop it silently): it is no JSON, so bytes starting with one are refused, as
 * anything but the exact RFC 8785 bytes must be (R5.7, R3.3.4).
 */
export function parseSignedJson(body: Uint8Array): { text: string; doc: unknown } | null {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
    return { text, doc: JSON.parse(text) };
  } catch {
    return null;
  }
}
