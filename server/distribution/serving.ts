import type { ServedBundle } from './bundle-cache.ts';

/** Longest long-poll a pull may ask for, in seconds; larger `wait` values are capped to it. */
export const MAX_WAIT_SECONDS = 60;

// The puller's own cache may keep a pinned version forever; `latest` must be revalidated on every
// use. Never `public`: these answers need a token, and a shared cache must not serve them to
// whoever asks (the static mirror is the way to put bundles on a CDN).
const IMMUTABLE = 'private, max-age=31536000, immutable';
const REVALIDATE = 'private, no-cache';

type BundleHeaders = { ok: Record<string, string>; notModified: Record<string, string> };
/** How a bundle goes on the wire. */
export type BundleEncoding = 'identity' | 'gzip' | 'br';
type Variant = `${'latest' | 'pinned' | 'poll'}:${BundleEncoding}`;
const headerMemo = new WeakMap<ServedBundle, Partial<Record<Variant, BundleHeaders>>>();

/**
 * Headers of a 200 carrying a bundle, and of the 304 answering a matching If-None-Match; built
 * once per bundle and variant. A compressed variant's ETag is weak (`W/"<revision>"`): same
 * content, other bytes on the wire, as nginx does.
 */
export function bundleHeaders(b: ServedBundle, kind: 'latest' | 'pinned' | 'poll', encoding: BundleEncoding): BundleHeaders {
  const variant: Variant = `${kind}:${encoding}`;
  const compressed = encoding !== 'identity';
  let memo = headerMemo.get(b);
  if (!memo) headerMemo.set(b, (memo = {}));
  let h = memo[variant];
  if (!h) {
    const cacheControl = kind === 'poll' ? 'no-store' : kind === 'pinned' ? IMMUTABLE : REVALIDATE;
    const notModified: Record<string, string> = {
      etag: compressed ? `W/${b.etag}` : b.etag,
      'cache-control': cacheControl,
      vary: 'Authorization, Accept-Encoding',
      'toolgate-version': String(b.version),
    };
    const ok: Record<string, string> = { ...notModified, 'content-type': 'application/json', 'toolgate-signature': b.signature };
    if (compressed) ok['content-encoding'] = encoding;
    h = memo[variant] = { notModified, ok };
  }
  return h;
}

/**
 * The encoding a bundle goes out in: of brotli and gzip, the one the client's Accept-Encoding
 * weighs higher (brotli on a tie), else the bytes as signed.
 */
export function bundleEncoding(acceptEncoding: string | undefined): BundleEncoding {
  const br = weight(acceptEncoding, 'br');
  const gz = weight(acceptEncoding, 'gzip');
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

/**
 * A bundle's bytes in an encoding, asked for only when they are sent (a 200): brotli is
 * compressed on first use, and a 304 needs none of them.
 */
export function encodedBytes(b: ServedBundle, encoding: BundleEncoding): Uint8Array<ArrayBuffer> {
  return encoding === 'br' ? b.brotli : encoding === 'gzip' ? b.gzip : b.body;
}

/** True when an Accept-Encoding header accepts gzip (explicitly, with q above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  return weight(header, 'gzip') > 0;
}

/** The q an Accept-Encoding header gives `coding` when it names it (1 without a q), else 0. */
function weight(header: string | undefined, coding: string): number {
  if (!header) return 0;
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    if (name.trim().toLowerCase() !== coding) continue;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
    return q === undefined ? 1 : Number(q) || 0;
  }
  return 0;
}

/**
 * The entity tags an If-None-Match names (weak or strong, compared weakly as RFC 9110 asks),
 * or `*`. Unparseable members are ignored, which at worst sends the bundle again.
 */
export function parseIfNoneMatch(header: string | undefined): { any: boolean; etags: Set<string> } {
  const etags = new Set<string>();
  if (!header) return { any: false, etags };
  if (header.trim() === '*') return { any: true, etags };
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) etags.add(m[1]);
  return { any: false, etags };
}

/**
 * The version a `Toolgate-Version` header says the client holds: NaN without the header (the
 * ETag alone decides), else the whole number it holds. Any other value (signed, fractional, hex,
 * too large to be exact, several values) is read as 0, holding nothing: the client gets the bundle
 * rather than a 304 that could keep it on an older version of the same content.
 */
export function heldVersion(header: string | undefined): number {
  if (header === undefined) return Number.NaN;
  return /^\d{1,15}$/.test(header) ? Number(header) : 0;
}

/**
 * Whether a client already holds `b`, by its If-None-Match and the version it says it holds: the
 * same content re-issued as a newer version (a rollback to it) has the same ETag, yet is news to
 * a client holding an older version.
 */
export function clientHolds(b: ServedBundle, inm: { any: boolean; etags: Set<string> }, held: number): boolean {
  return inm.any || (inm.etags.has(b.etag) && !(held < b.version));
}

/** The `wait` query value in seconds, capped; undefined when it is not a whole number of seconds. */
export function parseWait(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,6}$/.test(value)) return undefined;
  return Math.min(Number(value), MAX_WAIT_SECONDS);
}
