/**
 * MCP 2026-07-28's `x-mcp-header`: a tool's input schema may name arguments that travel in an
 * `Mcp-Param-{Name}` HTTP header as well, so that intermediaries can route on them. A client sends
 * them (towards a 2026-07-28 upstream the gateway is that client); a server checks them against
 * the body (towards clients the gateway is that server), since a proxy routing on the header and
 * a server acting on the body must never see different values.
 */

/** One annotated argument: its path of `properties` keys from the schema root, and the header name part. */
type Annotated = { path: string[]; name: string };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const annotations = new WeakMap<object, Annotated[]>();

/** The annotated arguments of a schema, reachable through `properties` only (as the spec allows); cached per schema object. */
function annotatedOf(schema: unknown): Annotated[] {
  if (schema === null || typeof schema !== 'object') return [];
  let found = annotations.get(schema);
  if (found) return found;
  found = [];
  const walk = (node: unknown, path: string[], depth: number) => {
    if (depth > 32 || node === null || typeof node !== 'object') return;
    const properties = (node as { properties?: unknown }).properties;
    if (properties === null || typeof properties !== 'object') return;
    for (const [key, child] of Object.entries(properties as Record<string, unknown>)) {
      if (child === null || typeof child !== 'object') continue;
      const name = (child as { 'x-mcp-header'?: unknown })['x-mcp-header'];
      if (typeof name === 'string' && TOKEN.test(name)) found!.push({ path: [...path, key], name });
      walk(child, [...path, key], depth + 1);
    }
  };
  walk(schema, [], 0);
  annotations.set(schema, found);
  return found;
}

function valueAt(args: Record<string, unknown>, path: string[]): unknown {
  let v: unknown = args;
  for (const key of path) {
    // An own member only (R14.7): a property named `constructor` is absent from `{}`, not its function.
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A primitive argument as its header carries it; undefined for a value that has no header (absent, null, not primitive). */
function headerForm(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/** Plain when visible ASCII without edge spaces (and not sentinel-shaped), else `=?base64?…?=`. */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** A header value in plain form, or its `=?base64?…?=` form decoded; null when missing or malformed. */
export function decodeHeaderValue(value: string | string[] | undefined): string | null {
  if (typeof value !== 'string') return null;
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  if (!m) return value;
  const decoded = Buffer.from(m[1], 'base64');
  // Round trip: a value that is not canonical base64 is malformed, not something to guess at.
  return decoded.toString('base64') === m[1] ? decoded.toString('utf8') : null;
}

/** The Mcp-Param headers a call with these arguments carries (lower-case names), for a tool with this input schema. */
export function paramHeaders(schema: unknown, args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of annotatedOf(schema)) {
    const value = headerForm(valueAt(args, a.path));
    if (value !== undefined) out[`mcp-param-${a.name.toLowerCase()}`] = encodeHeaderValue(value);
  }
  return out;
}

/** Why a request's Mcp-Param headers do not match its arguments, or null when they do (each annotated argument given, and only those). */
export function paramHeaderMismatch(schema: unknown, args: Record<string, unknown>, headers: Record<string, string | string[] | undefined>): string | null {
  for (const a of annotatedOf(schema)) {
    const header = headers[`mcp-param-${a.name.toLowerCase()}`];
    const value = valueAt(args, a.path);
    const expected = headerForm(value);
    if (expected === undefined) {
      if (value !== undefined && value !== null) return `the argument behind Mcp-Param-${a.name} cannot travel in a header`;
      // A header with no argument behind it did not come from this body: whoever routed on it saw a value the call does not carry.
      if (header !== undefined) return `the Mcp-Param-${a.name} header names an argument ${a.path.join('.')} the call does not give`;
      continue;
    }
    if (header === undefined) return `the Mcp-Param-${a.name} header is required (the argument ${a.path.join('.')} is given)`;
    const decoded = decodeHeaderValue(header);
    if (decoded === null) return `the Mcp-Param-${a.name} header is malformed`;
    const same = typeof value === 'number' ? Number(decoded) === value && decoded.trim() !== '' : decoded === expected;
    if (!same) return `the Mcp-Param-${a.name} header does not match the argument ${a.path.join('.')}`;
  }
  return null;
}
