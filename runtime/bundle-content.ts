// The console also runs this in the browser: no node: modules here.
//
// What a bundle says, whichever format wrote it (docs/spec.md §2): tools with their defaults filled
// in and shared input schemas resolved, the policy with every absent collection empty, and the
// lookups the evaluator needs (glob expansions, group closures, profile scoping) derived from
// catalog and policy by this runtime itself. A v2 bundle carries no index, so nothing in it can
// contradict the policy; a v1 bundle's index is compared with what this module derives and the
// bundle is refused when they differ (R5.14).
import type { Bundle, BundleApprovals, BundleConstraint, BundleGrant, BundleTool, BundleV1, ExcludedTool } from '../policy-schemas/types.gen.ts';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_V1 } from './bundle-format.ts';
import { setOwnMember } from './own-member.ts';

/** A catalog tool as v1 wrote it and as every reader uses it: every default filled in, its input schema inline. */
export type ToolDefinition = Omit<BundleTool, 'description' | 'inputSchema' | 'inputSchemaRef' | 'groups' | 'requiresConnection'> & {
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly groups: readonly string[];
  readonly requiresConnection: boolean;
};

/**
 * A catalog entry: a full tool, or one excluded from every view (R2.2). A full tool's `tool` is the
 * entry as the bundle has it (defaults left out in v2) and `inputSchema` its schema resolved;
 * `def`, the definition every reader uses, is made on first use: a runtime loads thousands of tools
 * and reads the definitions of few.
 */
export type CatalogEntry = { readonly id: string; readonly definitionHash: string } & (
  | { readonly def: ToolDefinition; readonly excluded: null; readonly tool: BundleTool; readonly inputSchema: Record<string, unknown> }
  | { readonly def: null; readonly excluded: ExcludedTool['excluded']; readonly tool: null; readonly inputSchema: null }
);

/** A full catalog tool whose definition is made when first read. */
class ToolContent {
  readonly excluded = null;
  private made: ToolDefinition | undefined;

  constructor(
    readonly id: string,
    readonly definitionHash: string,
    readonly tool: BundleTool,
    readonly inputSchema: Record<string, unknown>,
  ) {}

  get def(): ToolDefinition {
    this.made ??= toolDefinition(this.tool, this.inputSchema);
    return this.made;
  }
}

/** A role with every list present and what it reaches derived: groups closed under includes, tool ids its globs match. */
export type RoleContent = {
  readonly name: string;
  readonly groups: readonly string[];
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly requireApproval: readonly BundleTool['effect'][];
  readonly constraints: readonly BundleConstraint[];
  readonly approvals: Required<BundleApprovals>;
  /** The role's groups replaced by the union of their closures, sorted; ["*"] when the role lists "*". */
  readonly expandedGroups: readonly string[];
  /** Catalog positions an allow (resp. deny) glob matches. */
  readonly allowPositions: readonly number[];
  readonly denyPositions: readonly number[];
};

export type GrantContent = BundleGrant & { readonly positions: readonly number[] };

/** A bundle's content, read and derived; the same shape from a v1 and a v2 bundle. */
export type BundleContent = {
  readonly format: typeof BUNDLE_FORMAT | typeof BUNDLE_FORMAT_V1;
  readonly tools: readonly CatalogEntry[];
  /** The catalog's ids, in its order (sorted). */
  readonly ids: readonly string[];
  /** Group name → itself and every group it includes, transitively, sorted. */
  readonly groupClosure: ReadonlyMap<string, readonly string[]>;
  readonly roles: ReadonlyMap<string, RoleContent>;
  readonly bindings: ReadonlyMap<string, readonly string[]>;
  readonly profiles: ReadonlyMap<string, { readonly enable: readonly string[]; readonly disable: readonly string[] }>;
  /** Catalog positions of tools some profile enables. */
  readonly profileScoped: readonly number[];
  readonly grants: readonly GrantContent[];
};

/** The approval settings of a role that states none (DESIGN "Entities", tenant policy). */
export const DEFAULT_APPROVALS: Required<BundleApprovals> = Object.freeze({ by: 'person', validForSeconds: 900 });
/** The groups of a tool that names none. */
export const DEFAULT_TOOL_GROUPS: readonly string[] = Object.freeze(['default']);

const NONE: readonly never[] = Object.freeze([]);

/**
 * Reads a bundle of either format. Throws a TypeError naming the first thing that does not hold
 * together: an unknown format, catalog ids out of order, a tool naming a schema the table does not
 * have, an include naming no group, or (v1) an index that disagrees with catalog and policy.
 */
export function readBundleContent(bundle: Bundle | BundleV1): BundleContent {
  if (!bundle || typeof bundle !== 'object') throw new TypeError('bundle is not an object');
  const format = bundle.format;
  if (format !== BUNDLE_FORMAT && format !== BUNDLE_FORMAT_V1) throw new TypeError(`unsupported bundle format ${JSON.stringify(format)}`);
  const { catalog, policy } = bundle;
  if (!catalog || !Array.isArray(catalog.tools) || !policy) throw new TypeError('bundle lacks catalog or policy');
  const schemas = format === BUNDLE_FORMAT ? ((bundle as Bundle).catalog.schemas ?? NONE) : NONE;

  // One pass, few allocations: right after JSON.parse the whole bundle is young, and every
  // collection a load's garbage sets off copies it.
  const n = catalog.tools.length;
  const tools: CatalogEntry[] = new Array(n);
  const ids: string[] = new Array(n);
  for (let pos = 0; pos < n; pos++) {
    const entry = catalog.tools[pos];
    if (pos > 0 && !(ids[pos - 1] < entry.id)) throw new TypeError('catalog tools are not sorted by id');
    ids[pos] = entry.id;
    tools[pos] =
      'excluded' in entry
        ? { id: entry.id, definitionHash: entry.definitionHash, def: null, excluded: entry.excluded, tool: null, inputSchema: null }
        : new ToolContent(entry.id, entry.definitionHash, entry as BundleTool, inputSchemaOf(entry as BundleTool, schemas));
  }
  // Ids are sorted (checked above): a lookup is a binary search, no map of the whole catalog.
  const positionOf = (id: string): number => {
    const at = firstAtLeast(ids, id);
    return at < n && ids[at] === id ? at : -1;
  };

  const includes = new Map<string, readonly string[]>();
  for (const g of catalog.groups ?? NONE) includes.set(g.name, g.includes ?? NONE);
  for (const [name, inc] of includes) {
    for (const other of inc) if (!includes.has(other)) throw new TypeError(`group ${name} includes ${other}, which is not in catalog.groups`);
  }
  const groupClosure = new Map<string, readonly string[]>();
  for (const name of [...includes.keys()].sort()) groupClosure.set(name, closureOf(name, includes));

  const matching = (globs: readonly string[]): number[] => globPositions(ids, globs);
  const roles = new Map<string, RoleContent>();
  for (const [name, role] of Object.entries(policy.roles ?? {})) {
    const groups: readonly string[] = role.groups ?? NONE;
    const allow: readonly string[] = role.allow ?? NONE;
    const deny: readonly string[] = role.deny ?? NONE;
    const v2Role = role as { constraints?: BundleConstraint[]; approvals?: BundleApprovals };
    roles.set(name, {
      name,
      groups,
      allow,
      deny,
      requireApproval: role.requireApproval ?? NONE,
      constraints: v2Role.constraints ?? NONE,
      approvals: { ...DEFAULT_APPROVALS, ...v2Role.approvals },
      expandedGroups: groups.includes('*') ? ['*'] : sortedUnique(groups.flatMap((g) => groupClosure.get(g) ?? [g])),
      allowPositions: matching(allow),
      denyPositions: matching(deny),
    });
  }
  const bindings = new Map<string, readonly string[]>(Object.entries(policy.bindings ?? {}));
  // R2.3: a role is defined in policy.roles or nowhere; a binding to an undefined role would grant
  // whatever a reader guessed.
  for (const [subject, names] of bindings) {
    for (const name of names) if (!roles.has(name)) throw new TypeError(`policy.bindings binds ${subject} to role ${name}, which policy.roles does not define`);
  }
  const profiles = new Map(Object.entries(policy.profiles ?? {}).map(([name, p]) => [name, { enable: p.enable ?? NONE, disable: p.disable ?? NONE }]));
  const scoped = new Set<number>();
  for (const p of profiles.values()) {
    for (const id of p.enable) {
      const at = positionOf(id);
      if (at >= 0) scoped.add(at);
    }
  }
  const profileScoped = [...scoped].sort((a, b) => a - b);
  const grants = (policy.grants ?? NONE).map((g): GrantContent => ({ ...g, positions: matching(g.tools) }));

  const content: BundleContent = { format, tools, ids, groupClosure, roles, bindings, profiles, profileScoped, grants };
  if (format === BUNDLE_FORMAT_V1) checkV1Index(bundle as BundleV1, content);
  return content;
}

/**
 * The positions of the ids, sorted in UTF-16 order (as a catalog is), that one of the globs
 * matches, ascending: the same answers as glob.ts's globMatcher (a test compares them). The ids a
 * glob can match all start with its text before the first `*`, and in sorted ids those are one
 * run, found by binary search: a role's `mcp__github__*` looks at the tools of that namespace, not
 * at the whole catalog, and `core__read_0001` at one id. The match is written out in the loop, not
 * a matcher called per id: a load runs it cold, thousands of times.
 */
export function globPositions(ids: readonly string[], globs: readonly string[]): number[] {
  if (globs.length === 0) return [];
  const n = ids.length;
  const hit = new Uint8Array(n);
  for (const glob of globs) {
    const parts = glob.split('*');
    const first = parts[0];
    if (parts.length === 1) {
      const at = firstAtLeast(ids, glob);
      if (at < n && ids[at] === glob) hit[at] = 1;
      continue;
    }
    // Linear, as globMatcher: prefix, suffix, then each middle part at its leftmost place.
    const last = parts[parts.length - 1];
    const middle = parts.slice(1, -1).filter((p) => p !== '');
    const fixed = first.length + last.length;
    for (let i = firstAtLeast(ids, first); i < n; i++) {
      const id = ids[i];
      if (!id.startsWith(first)) break;
      if (id.length < fixed || !id.endsWith(last)) continue;
      let at = first.length;
      const end = id.length - last.length;
      let matches = true;
      for (let k = 0; k < middle.length; k++) {
        const found = id.indexOf(middle[k], at);
        if (found < 0 || found + middle[k].length > end) {
          matches = false;
          break;
        }
        at = found + middle[k].length;
      }
      if (matches) hit[i] = 1;
    }
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (hit[i] === 1) out.push(i);
  return out;
}

/** The first position whose id is not below `key` in sorted ids. */
function firstAtLeast(ids: readonly string[], key: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A tool's input schema, inline or from the shared table; throws when it names none or both. */
function inputSchemaOf(entry: BundleTool, schemas: readonly Record<string, unknown>[]): Record<string, unknown> {
  let inputSchema = entry.inputSchema;
  if (entry.inputSchemaRef !== undefined) {
    if (inputSchema !== undefined) throw new TypeError(`tool ${entry.id} has both inputSchema and inputSchemaRef`);
    inputSchema = schemas[entry.inputSchemaRef];
    if (inputSchema === undefined) throw new TypeError(`tool ${entry.id} names input schema ${entry.inputSchemaRef}, which catalog.schemas does not have`);
  }
  if (inputSchema === undefined) throw new TypeError(`tool ${entry.id} has no input schema`);
  return inputSchema;
}

/** The groups of a catalog tool as the bundle has it (none written: the default group). */
export function toolGroups(tool: BundleTool): readonly string[] {
  return tool.groups ?? DEFAULT_TOOL_GROUPS;
}

/** The states a tool is limited to, or undefined for every state (absent, or `*` among them). */
export function toolStates(tool: BundleTool): readonly string[] | undefined {
  const states = tool.availableInStates;
  return states !== undefined && !states.includes('*') ? states : undefined;
}

function toolDefinition(entry: BundleTool, inputSchema: Record<string, unknown>): ToolDefinition {
  const { parallel } = entry;
  const availableInStates = toolStates(entry);
  // The entry's members copied one by one, in its order: object rest and spread took most of a
  // 2,000-tool load (a runtime-call copy per tool, and objects the collector had to chase).
  const def: Record<string, unknown> = {};
  const fields = entry as unknown as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key === 'inputSchemaRef' || key === 'availableInStates' || key === 'parallel') continue;
    // A hostile or buggy signer's `__proto__` member stays a member; assigned, it would set def's prototype.
    setOwnMember(def, key, fields[key]);
  }
  // One form per meaning, so the same tool reads the same from a v1 and a v2 bundle:
  // "*" among the states is every state (as absent), and a tool that is not parallel-safe has no key.
  def.description = entry.description ?? '';
  def.inputSchema = inputSchema;
  def.groups = toolGroups(entry);
  def.requiresConnection = entry.requiresConnection === true;
  if (availableInStates !== undefined) def.availableInStates = availableInStates;
  if (parallel !== undefined && (parallel.safe || parallel.resourceKey !== undefined)) def.parallel = parallel;
  return def as ToolDefinition;
}

/** A group and every group it includes, transitively (a cycle ends where it meets itself), sorted. */
function closureOf(name: string, includes: ReadonlyMap<string, readonly string[]>): string[] {
  const seen = new Set<string>([name]);
  const todo = [name];
  while (todo.length > 0) {
    for (const next of includes.get(todo.pop() as string) ?? NONE) {
      if (!seen.has(next)) {
        seen.add(next);
        todo.push(next);
      }
    }
  }
  return [...seen].sort();
}

/** v1 carried its index; it must say exactly what catalog and policy say, or the bundle is refused. */
function checkV1Index(bundle: BundleV1, content: BundleContent): void {
  const index = bundle.index;
  if (!index || typeof index !== 'object') throw new TypeError('bundle lacks its index');
  const ids = content.tools.map((t) => t.id);
  const idsAt = (positions: readonly number[]) => positions.map((p) => ids[p]);
  const differs = (what: string) => new TypeError(`${what} disagrees with catalog and policy`);
  if (!sameList(index.tools, ids)) throw differs('index.tools');
  const indexGroups = Object.entries(index.groups ?? {});
  if (indexGroups.length !== content.groupClosure.size) throw differs('index.groups');
  for (const [name, closure] of indexGroups) if (!sameList(closure, content.groupClosure.get(name))) throw differs(`index.groups.${name}`);
  const indexRoles = Object.entries(index.roles ?? {});
  if (indexRoles.length !== content.roles.size) throw differs('index.roles');
  for (const [name, ix] of indexRoles) {
    const role = content.roles.get(name);
    if (!role) throw differs(`index.roles.${name}`);
    if (!sameList(ix.groups, role.expandedGroups)) throw differs(`index.roles.${name}.groups`);
    if (!sameList(ix.allow, idsAt(role.allowPositions))) throw differs(`index.roles.${name}.allow`);
    if (!sameList(ix.deny, idsAt(role.denyPositions))) throw differs(`index.roles.${name}.deny`);
  }
  if (!Array.isArray(index.grants) || index.grants.length !== content.grants.length) throw differs('index.grants');
  content.grants.forEach((g, i) => {
    const ix = index.grants[i];
    if (ix.connectionId !== g.connectionId || !sameList(ix.tools, idsAt(g.positions))) throw differs(`index.grants.${i}`);
  });
  if (!sameList(index.profileScoped, idsAt(content.profileScoped))) throw differs('index.profileScoped');
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sortedUnique(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}
