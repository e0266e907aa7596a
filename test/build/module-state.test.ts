import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What a server holds between requests is made with its application context (server/app-state.ts,
// AppDeps) and handed down, so two servers in one process share none of it. This guard reads every
// server source (tests aside) for state kept in a module instead: a top-level `let`/`var`, a
// top-level `const` holding a `new` instance (Map, Set, WeakMap, a class), what a function call
// returned (a getter such as `perDatabase(...)` hides a map in a closure) or an empty `{}`/`[]`, and
// a class's static field holding one. A constant table (a Set or Map filled from a list where it is
// declared and never added to, set or cleared in its file) passes on its own. Each other that
// remains is named below with why it may stay; anything else fails the test, so a new singleton
// cannot slip in unnoticed.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Instances of these classes may be module constants wherever they are: they hold no state. */
const STATELESS_CLASSES: Record<string, string> = {
  Hono: 'a route table: built at import from the handlers, holds no request state',
};

/** Calls whose results may be module constants wherever they are: they make no state. */
const STATELESS_CALLS: Record<string, string> = {
  join: 'a path',
  dirname: 'a path',
  'Date.parse': 'a number',
  promisify: 'a function of node:zlib',
  'import.meta.url.endsWith': 'a boolean',
  createMiddleware: 'a Hono middleware: a function, it keeps nothing between requests',
  documentRoutes: 'a route table of a document collection (Hono)',
  documentStore: 'SQL helpers of a document table, holding nothing',
};

const ALLOWED: Record<string, string> = {
  // Constants that are instances.
  'server/compiler/compile-thread.ts#WORKER_ENTRY': 'constant URL of the worker module',
  'server/compiler/conformance.ts#localeOrder': 'an Intl.Collator: stateless',

  // Pure memos keyed weakly by an immutable object: the value follows from the key alone, and a key
  // object belongs to the server that made it, so nothing crosses servers or outlives its key.
  'server/auth/authenticate.ts#bearerChecks': 'pure memo: the actor of a token row object (its id, label, role and tenants never change)',
  'server/compiler/conformance.ts#validatorsRun': 'pure memo keyed by a loaded tool object',
  'server/compiler/conformance.ts#validArgumentsOf': 'pure memo keyed by a loaded tool object',
  'server/compiler/constraint-vectors.ts#byBundle': 'pure memo keyed by a loaded bundle object',
  'server/compiler/snapshot-fingerprint.ts#toolListHashes': 'pure memo: the hash of a frozen tool list object',
  'server/store/snapshot-text.ts#toolListTexts': 'pure memo: the JSON text of a frozen tool list object',
  'server/compiler/compile-bundle.ts#toolListWorks': 'memo of what a compile works out from a frozen tool list object, keyed weakly by that list',
  'server/decisions/decision-store.ts#insertStatements': 'prepared statements keyed by a server’s own SQLite connection',
  'server/distribution/conditional-pull.ts#connections': 'per-connection memo keyed by a socket of the server that accepted it',
  'server/distribution/conditional-pull.ts#wireOrders': 'pure memo keyed by a header record object',
  'server/distribution/serving.ts#headerMemo': 'pure memo keyed by a served bundle object (immutable)',
  'server/signing/sign.ts#keyObjects': 'pure memo: the node:crypto key of a key object',
  'server/store/inventory.ts#parsedTools': 'the parsed tools of a server’s own database handle, read again when the table’s fingerprint changes',
  'server/auth/sso/oidc-client.ts#discovered': 'discovery keyed by a server’s own SSO settings object (failures are forgotten)',

  // Pure memos keyed by content, bounded: the same key gives the same value on any server.
  'server/api/openapi.ts#cached': 'pure memo of constant data: the OpenAPI document built from the schemas in the source',
  'server/audit/held-checkpoints.ts#verifiedSignatures': 'pure memo of (public key, bytes, signature) that verified; bounded (100,000)',
  'server/policy-engine/enforcer.ts#tenantEnforcers': 'pure memo of enforcers by (tenant, revision), a revision naming the content; LRU of 64',
  'server/validation/judged-schemas.ts#judged': 'pure memo of schema judgements keyed by the schema text; bounded (20,000)',
  'server/validation/input-schema.ts#metaAjvInstance': 'one ajv for meta-schema checks, made on first use: compiles only the constant meta-schemas',

  // Process facts, not a server's state.
  'server/compiler/compile-bundle.ts#compiles':
    'a count of the compiles this process ran (a test of compile-once reads it); each server’s Compiler counts its own',
  'server/compiler/compile-worker.ts#loadedByRevision': 'lives in a compiler worker thread (one per server’s Compiler); keyed by revision, bounded (4)',
  'server/compiler/compile-worker.ts#snapshots': 'lives in a compiler worker thread (one per server’s Compiler): the last tool list it read',
};

type Found = { key: string; line: number; text: string };

function sources(): string[] {
  return readdirSync(join(root, 'server'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|tsx)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The initializer of a declaration (what follows its `=`, the type annotation skipped), or null without one. */
function initializerOf(declaration: string): string | null {
  let depth = 0;
  for (let i = 0; i < declaration.length; i++) {
    const ch = declaration[i];
    if ('([{<'.includes(ch)) depth++;
    else if (')]}'.includes(ch) || (ch === '>' && declaration[i - 1] !== '=')) depth = Math.max(0, depth - 1);
    else if (ch === ';' && depth === 0) return null;
    else if (ch === '=' && depth === 0 && !'=>'.includes(declaration[i + 1] ?? '') && !'=!<>'.includes(declaration[i - 1] ?? '')) {
      return declaration.slice(i + 1).trimStart();
    }
  }
  return null;
}

/**
 * Whether an initializer makes state a module would hold: an instance (unless of a stateless class),
 * what a call returns (unless a stateless call), or an empty object or array.
 */
function holdsState(init: string): boolean {
  const made = /^new\s+([A-Za-z_$][\w$.]*)/.exec(init);
  if (made) return !(made[1] in STATELESS_CLASSES);
  const called = /^(?:await\s+)?([A-Za-z_$][\w$.]*)\s*(?:<[^(]*>)?\(/.exec(init);
  // `async (…) => …` is a function, not a call.
  if (called) return called[1] !== 'async' && !(called[1] in STATELESS_CALLS);
  return /^(\{\s*\}|\[\s*\])\s*(;|$|as\b)/.test(init);
}

/** A Set or Map filled from a list where it is declared, and never changed in its file after. */
function constantTable(name: string, init: string, text: string): boolean {
  if (!/^new\s+(Set|Map)\s*(<[^(]*>)?\(\s*[^)\s]/.test(init)) return false;
  return !new RegExp(`\\b${name}\\.(add|set|delete|clear)\\(`).test(text);
}

/** Module-level state in one source's text, as `file#name` keys. */
function moduleState(file: string, text: string): Found[] {
  const lines = text.split('\n');
  const found: Found[] = [];
  lines.forEach((line, i) => {
    const top = /^(?:export\s+)?(let|var|const)\s+([A-Za-z_$][\w$]*)/.exec(line);
    const field = /^\s+(?:(?:private|public|protected|readonly|declare)\s+)*static\s+(?:readonly\s+)?([A-Za-z_$][\w$]*)/.exec(line);
    if (!top && !field) return;
    const name = top ? top[2] : field![1];
    const declaration = lines
      .slice(i, i + 6)
      .join('\n')
      .slice(line.indexOf(name) + name.length);
    const init = initializerOf(declaration);
    const mutable = top !== null && top[1] !== 'const';
    const state = mutable || (init !== null && holdsState(init) && !constantTable(name, init, text));
    if (state) found.push({ key: `${file}#${name}`, line: i + 1, text: line.trim() });
  });
  return found;
}

describe('module-level state in server/', () => {
  const found = sources().flatMap((f) => moduleState(relative(root, f).split('\\').join('/'), readFileSync(f, 'utf8')));

  it('is only what the allow-list names, each with why it may stay', () => {
    const unexplained = found.filter((f) => !(f.key in ALLOWED)).map((f) => `${f.key} (line ${f.line}: ${f.text})`);
    expect(unexplained, 'make it with the application context (server/app-state.ts), or allow it here with a reason').toEqual([]);
  });

  it('names nothing that no longer exists (the list stays true)', () => {
    const keys = new Set(found.map((f) => f.key));
    expect(Object.keys(ALLOWED).filter((k) => !keys.has(k))).toEqual([]);
  });

  it('catches a module-level map, set, counter, instance and empty table, and lets route tables and constants pass', () => {
    const sample = [
      'const cache = new Map<string, number>();',
      'export const seen: WeakMap<object, boolean> = new WeakMap();',
      'let calls = 0;',
      'export const registry = new Registry();',
      'const pending: Record<string, string> = {};',
      'export const cacheFor = perDatabase((database) => new Cache(database));',
      'const handlers: ((e: string) => void)[] = [];',
      'class Store {',
      '  private static readonly all = new Set<string>();',
      '}',
      'export const routes = new Hono<AppEnv>();',
      'const LIMIT = 10;',
      "const NAMES = ['a', 'b'];",
      "const METHODS = new Set(['GET', 'HEAD']);",
      "const grown = new Set(['a']);",
      "grown.add('b');",
      'const check = (x: number): boolean => x > 1;',
      "const here = dirname('/a/b');",
      'const handle = async (c: Context) => c.json({});',
      'function f() {',
      '  const local = new Map();',
      '}',
    ].join('\n');
    expect(moduleState('x.ts', sample).map((f) => f.key)).toEqual([
      'x.ts#cache',
      'x.ts#seen',
      'x.ts#calls',
      'x.ts#registry',
      'x.ts#pending',
      'x.ts#cacheFor',
      'x.ts#handlers',
      'x.ts#all',
      'x.ts#grown',
    ]);
  });
});
