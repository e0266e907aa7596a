// What makes a document a Toolgate bundle: its format name, the `typ` of its signature, which
// fields are envelope and how the revision is derived. The compiler writes by these rules, the
// SDK and the console check by them. Browser-safe: no `node:` modules, so the hash function is
// passed in (node:crypto on the server and in the Node SDK).
import { canonicalJson, isCanonicalText } from './canonical-json.ts';

/** The bundle format the compiler writes. */
export const BUNDLE_FORMAT = 'toolgate.bundle/v2';
/**
 * The previous format, which runtimes still read for one release so that a fleet keeps its last
 * good bundle across the upgrade (docs/spec.md R2.6).
 */
export const BUNDLE_FORMAT_V1 = 'toolgate.bundle/v1';
/** Every format a runtime of this release accepts. */
export const READABLE_BUNDLE_FORMATS: readonly string[] = [BUNDLE_FORMAT, BUNDLE_FORMAT_V1];
/** The `typ` of a bundle signature's protected header. */
export const BUNDLE_JWS_TYP = 'toolgate-bundle+jws';
/**
 * Fields outside the content hash: `revision` names the content, whatever version it ships as,
 * whenever it was issued and whatever came before it.
 */
export const BUNDLE_ENVELOPE_FIELDS = ['version', 'revision', 'previousRevision', 'issuedAt', 'expiresAt'] as const;

const envelope = new Set<string>(BUNDLE_ENVELOPE_FIELDS);

/** One top-level member of a bundle as RFC 8785 writes it: `"key":<canonical value>`. */
export type BundleMember = { readonly key: string; readonly text: string };

/** A top-level member's canonical text. */
export function bundleMember(key: string, value: unknown): BundleMember {
  return { key, text: `${canonicalJson(key)}:${canonicalJson(value)}` };
}

/**
 * A bundle's top-level members, sorted as RFC 8785 sorts them. Canonical JSON of an object is its
 * sorted members joined, so the whole bundle and the content hashed for the revision share one
 * serialization of each top-level value. `canonicalTexts` may give the canonical JSON of some
 * values, already written (the compiler reuses its catalog entries' texts).
 */
export function bundleMembers(doc: object, canonicalTexts: Readonly<Record<string, string>> = {}): BundleMember[] {
  const fields = doc as Readonly<Record<string, unknown>>;
  return Object.keys(fields)
    .filter((k) => fields[k] !== undefined)
    .sort(compareUtf16)
    .map((k) => (Object.hasOwn(canonicalTexts, k) ? { key: k, text: `${canonicalJson(k)}:${canonicalTexts[k]}` } : bundleMember(k, fields[k])));
}

/** The canonical JSON text of the object made of these (sorted) members. */
export function joinBundleMembers(members: readonly BundleMember[]): string {
  return `{${members.map((m) => m.text).join(',')}}`;
}

/** The text the revision hashes: the canonical JSON of the bundle without its envelope fields. */
export function bundleContentText(members: readonly BundleMember[]): string {
  return joinBundleMembers(members.filter((m) => !envelope.has(m.key)));
}

/**
 * When `text` is exactly the RFC 8785 form of `doc` (the signed bytes, parsed), the text the
 * revision hashes; else null. A runtime checks every bundle it loads: this takes the engine's
 * own JSON writer where RFC 8785 writes the same (canonical-json.ts), and the full serialisation
 * only for the rare document that needs it.
 */
export function canonicalBundleContent(doc: Readonly<Record<string, unknown>>, text: string): string | null {
  return canonicalBundleContentParts(doc, text)?.join('') ?? null;
}

/**
 * canonicalBundleContent in parts whose concatenation is the content text, so that a large
 * bundle's content can be hashed part by part rather than copied into one more string.
 */
export function canonicalBundleContentParts(doc: Readonly<Record<string, unknown>>, text: string): string[] | null {
  // Each top-level member written once by the engine and compared where it stands in the text:
  // the whole is never joined, and the content is made of the same parts.
  const names = Object.keys(doc);
  let written: string[] | null = [];
  try {
    for (const name of names) written.push(`${JSON.stringify(name)}:${JSON.stringify(doc[name])}`);
  } catch {
    written = null;
  }
  // Members written as the text has them means the engine writes the text: what remains to see is
  // member order and names (isCanonicalText, given that the engine's text is `text`).
  if (written !== null && membersWrittenAs(written, text) && isCanonicalText(doc, text, text)) {
    const parts: string[] = ['{'];
    for (let i = 0; i < names.length; i++) {
      if (envelope.has(names[i])) continue;
      if (parts.length > 1) parts.push(',');
      parts.push(written[i]);
    }
    parts.push('}');
    return parts;
  }
  // The long road; a value with no canonical form (a lone surrogate) is not canonical either.
  try {
    const members = bundleMembers(doc);
    return joinBundleMembers(members) === text ? [bundleContentText(members)] : null;
  } catch {
    return null;
  }
}

/** Whether `text` is exactly `{` + the members joined by `,` + `}`. */
function membersWrittenAs(members: readonly string[], text: string): boolean {
  let at = 1;
  if (text[0] !== '{') return false;
  for (let i = 0; i < members.length; i++) {
    if (i > 0) {
      if (text[at] !== ',') return false;
      at++;
    }
    if (!text.startsWith(members[i], at)) return false;
    at += members[i].length;
  }
  return at + 1 === text.length && text[at] === '}';
}

/** A revision from the lowercase hex SHA-256 of bundleContentText. */
export function revisionFromSha256Hex(hex: string): string {
  return `sha256:${hex}`;
}

/**
 * The revision of a bundle: `sha256:` and the hex SHA-256 of its canonical content (everything but
 * the envelope fields). `sha256Hex` hashes a text's UTF-8 bytes.
 */
export function bundleRevision(members: readonly BundleMember[], sha256Hex: (text: string) => string): string {
  return revisionFromSha256Hex(sha256Hex(bundleContentText(members)));
}

// RFC 8785 orders member names by UTF-16 code units, which is what the default sort compares.
function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
