import type {
  Bundle,
  BundleApprovals,
  BundleConstraint,
  BundleGrant,
  BundleGroup,
  BundlePolicy,
  BundleRole,
  BundleState,
  BundleTool,
  ConnectionGrant,
  ExcludedTool,
  Group,
  State,
  TenantPolicy,
  Tool,
} from '../../policy-schemas/types.gen.ts';
import { escapePointer, validate } from '../../policy-schemas/index.ts';
import { BUNDLE_FORMAT, type BundleMember, bundleMember, bundleMembers, bundleRevision, joinBundleMembers } from '../../runtime/bundle-format.ts';
import { sha256Hex } from '../../runtime/sha256.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { DEFAULT_APPROVALS } from '../../runtime/bundle-content.ts';
import { casbinPolicy } from '../policy-engine/casbin-policy.ts';
import { type DraftNames, draftNames, judgeGroups, judgeTenant, judgeTool } from '../validation/draft-rules.ts';
import type { DraftSnapshot } from '../store/snapshot.ts';
import { SchemaFindings, conformanceVectors } from './conformance.ts';

const DEFAULT_TTL_SECONDS = 86400;

/** Everything one tenant's bundle is compiled from: what `loadDraftSnapshot` reads. */
export type Snapshot = DraftSnapshot;

export type CompileOptions = { version: number; previousRevision: string | null; issuedAt: string };

export type CompileError = { pointer: string; message: string; code: string };

export type CompileResult =
  | {
      ok: true;
      bundle: Bundle;
      bytes: Buffer;
      text: string;
      revision: string;
      /** The serialised top-level members `text` is made of: a new envelope replaces four and joins them again. */
      members: BundleMember[];
    }
  | { ok: false; errors: CompileError[] };

let compiles = 0;

/** How many drafts this process has compiled: the start-up warm-up has nothing left to do after one. */
export function compilesSoFar(): number {
  return compiles;
}

/**
 * Compiles a tenant snapshot into a bundle: validates and normalises every entity, collects
 * every error with its location (pointers name entities: `/tools/<id>/groups/0`,
 * `/policy/roles/<role>/allow/2`, `/grants/<connectionId>/subjects/0`), sorts everything, and
 * serialises with RFC 8785 so the same data always gives the same bytes and revision.
 */
export function compileBundle(snapshot: Snapshot, options: CompileOptions): CompileResult {
  compiles++;
  const errors: CompileError[] = [];
  const err = (pointer: string, message: string, code: string) => errors.push({ pointer, message, code });
  const tenant = snapshot.tenant.id;

  // 1. Each entity against its schema (on copies: validation fills defaults in place). What comes
  // of the tools alone is worked out once per frozen tool list (toolListWork).
  const work = toolListWork(snapshot.tools);
  errors.push(...work.errors);
  const groups = checked<Group>('group', snapshot.groups, (g, i) => `/groups/${key(g, 'name', i)}`, errors);
  const states = checked<State>('state', snapshot.states, (s, i) => `/states/${key(s, 'name', i)}`, errors);
  const grants = checked<ConnectionGrant>('connection-grant', snapshot.grants, (g, i) => `/grants/${key(g, 'connectionId', i)}`, errors);
  const policyCheck = validate<TenantPolicy>('tenant-policy', structuredClone(snapshot.policy ?? {}), '/policy');
  if (!policyCheck.ok) for (const e of policyCheck.errors) err(e.pointer, e.message, e.code ?? 'validation');
  const policy: TenantPolicy = policyCheck.ok ? policyCheck.value : { roles: {}, bindings: {}, profiles: {} };
  if (options.version < 1 || !Number.isInteger(options.version)) err('/version', 'must be a positive integer', 'validation');
  if (Number.isNaN(Date.parse(options.issuedAt))) err('/issuedAt', 'must be a timestamp', 'validation');

  // 2. Names: duplicates, and the group and state that always exist.
  const live = work.live;
  const groupList = dedupe(groups, (g) => g.name, '/groups', errors);
  if (!groupList.some((g) => g.name === 'default')) groupList.push({ name: 'default', description: '', includes: [] });
  groupList.sort(byKey((g) => g.name));
  const stateList = dedupe(states, (s) => s.name, '/states', errors);
  if (!stateList.some((s) => s.name === 'undefined')) stateList.push({ name: 'undefined', description: '' });
  stateList.sort(byKey((s) => s.name));
  const grantList = dedupe(grants, (g) => g.connectionId, '/grants', errors).sort(byKey((g) => g.connectionId));

  // 3. References and rules: the same judge every save runs (names: every inventory id, see toolListWork).
  const names = draftNames(
    groupList.map((g) => g.name),
    stateList.map((s) => s.name),
    work.inventoryIds,
  );
  errors.push(...judgedTools(work, names));
  const includes = new Map(groupList.map((g) => [g.name, [...new Set(g.includes ?? [])].sort()]));
  const judgedGroups = judgeGroups(new Map(groupList.map((g) => [g.name, g.includes ?? []])));
  errors.push(...judgedGroups.problems);
  errors.push(...judgeTenant(policy, grantList, names, policyCheck.ok));
  const roles = policy.roles ?? {};
  const bindings = policy.bindings ?? {};
  const profiles = policy.profiles ?? {};

  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };

  // 4. Assemble, sorted everywhere order carries no meaning, each fact once: no index (runtimes
  // derive it), shared input schemas written once, members equal to their default left out.
  const catalogTools = work.catalog ?? catalogEntries(live, work.kept);
  if (work.kept) work.catalog = catalogTools;
  const toolIds = catalogTools.tools.map((t) => t.id);
  const fullRoles: Record<string, { allow: string[]; deny: string[] }> = {};
  const bundleRoles: Record<string, BundleRole> = {};
  for (const name of Object.keys(roles).sort()) {
    const role = roles[name];
    const full = {
      groups: sortedUnique(role.groups ?? []),
      allow: sortedUnique(role.allow ?? []),
      deny: sortedUnique(role.deny ?? []),
      requireApproval: sortedUnique(role.requireApproval ?? []),
    };
    fullRoles[name] = full;
    const out: BundleRole = withoutEmpty(full);
    // Constraints keep the order written: a constraint is named by its role and position.
    const constraints = (role as { constraints?: BundleConstraint[] }).constraints ?? [];
    if (constraints.length > 0) {
      out.constraints = constraints.map(
        (c): BundleConstraint => ({ tools: sortedUnique(c.tools), otherwise: c.otherwise, arguments: c.arguments, reason: c.reason }),
      );
    }
    const approvals: BundleApprovals = withoutDefaults<Record<string, unknown>>({ ...(role as { approvals?: BundleApprovals }).approvals }, DEFAULT_APPROVALS);
    if (Object.keys(approvals).length > 0) out.approvals = approvals;
    bundleRoles[name] = out;
  }
  // fromEntries defines own properties, so even a subject called "__proto__" stays a binding.
  const bundleBindings: Record<string, string[]> = Object.fromEntries(
    Object.keys(bindings)
      .sort()
      .map((subject) => [subject, sortedUnique(bindings[subject])]),
  );
  const bundleProfiles: NonNullable<BundlePolicy['profiles']> = {};
  for (const name of Object.keys(profiles).sort()) {
    bundleProfiles[name] = withoutEmpty({ enable: sortedUnique(profiles[name].enable ?? []), disable: sortedUnique(profiles[name].disable ?? []) });
  }
  const bundleGrants: BundleGrant[] = grantList.map((g) => ({
    connectionId: g.connectionId,
    subjects: sortedUnique(g.subjects),
    tools: sortedUnique(g.tools),
    ...(g.expiresAt !== undefined ? { expiresAt: new Date(g.expiresAt).toISOString() } : {}),
  }));
  const bundlePolicy: BundlePolicy = {
    ...withoutEmpty({ roles: bundleRoles, bindings: bundleBindings, profiles: bundleProfiles }),
    ...(policy.budgets ? { budgets: policy.budgets } : {}),
    bundleTtlSeconds: policy.bundleTtlSeconds ?? DEFAULT_TTL_SECONDS,
    ...(bundleGrants.length > 0 ? { grants: bundleGrants } : {}),
  };
  const catalog: Bundle['catalog'] = {
    tools: catalogTools.tools,
    groups: groupList.map((g): BundleGroup => {
      const out: BundleGroup = { name: g.name };
      if (g.description) out.description = g.description;
      const inc = includes.get(g.name) ?? [];
      if (inc.length > 0) out.includes = inc;
      return out;
    }),
    states: stateList.map((s): BundleState => (s.description ? { name: s.name, description: s.description } : { name: s.name })),
    ...(catalogTools.schemas.length > 0 ? { schemas: catalogTools.schemas } : {}),
  };
  const casbin = casbinPolicy({ tenant, roles: fullRoles, bindings: bundleBindings, toolIds });

  const issuedAt = new Date(options.issuedAt).toISOString();
  const expiresAt = new Date(Date.parse(issuedAt) + bundlePolicy.bundleTtlSeconds * 1000).toISOString();
  const draft: Bundle = {
    format: BUNDLE_FORMAT,
    tenant,
    version: options.version,
    revision: '',
    previousRevision: options.previousRevision,
    issuedAt,
    expiresAt,
    catalog,
    policy: bundlePolicy,
    casbin,
    conformance: [],
  };
  const conformance = conformanceVectors(draft, work.findings);
  const bundle: Bundle = { ...draft, conformance };
  // Each top-level member is serialised once; the content (for the revision) and the whole bundle
  // are assembled from the same parts. The catalog is written from its input schemas' texts,
  // written once already to find the shared ones.
  const members = bundleMembers(bundle, { catalog: catalogText(catalog, catalogTools) });
  const revision = bundleRevision(members, sha256Hex);
  bundle.revision = revision;
  const final = members.map((m) => (m.key === 'revision' ? bundleMember('revision', revision) : m));
  // The whole text and its bytes are written when first read: the compile worker and the draft
  // cache keep the members only (the publish re-envelopes them), and a 2,000-tool bundle is megabytes.
  let text: string | undefined;
  let bytes: Buffer | undefined;
  return {
    ok: true,
    bundle,
    get bytes() {
      bytes ??= Buffer.from(this.text, 'utf8');
      return bytes;
    },
    get text() {
      text ??= joinBundleMembers(final);
      return text;
    },
    revision,
    members: final,
  };
}

/** The hash naming a bundle's content: everything but its envelope fields (runtime/bundle-format.ts). */
export function contentRevision(bundle: Bundle): string {
  return bundleRevision(bundleMembers(bundle), sha256Hex);
}

/**
 * What compileBundle works out from the tool list alone: the tools checked against their schema
 * (copies, defaults filled), the live ones deduplicated and sorted, every inventory id, the judge's
 * problems with them (for the group and state names judged against), their catalog entries, what
 * the conformance searches found of their input schemas. Kept for a frozen list (the inventory's
 * cached one, store/inventory.ts: it cannot change), so a compile of a draft whose tools did not
 * change (a policy edit) redoes none of it; any other list is worked on afresh.
 */
type ToolListWork = {
  /** Whether this work is kept for the next compile of the same list. */
  kept: boolean;
  errors: CompileError[];
  live: Tool[];
  inventoryIds: string[];
  judged?: { names: string; errors: CompileError[] };
  catalog?: CatalogEntries;
  /** What the conformance searches found running the input schemas' validators. */
  findings?: SchemaFindings;
};

const toolListWorks = new WeakMap<readonly Tool[], ToolListWork>();

function toolListWork(list: readonly Tool[] | undefined): ToolListWork {
  const frozen = Array.isArray(list) && Object.isFrozen(list);
  const known = frozen ? toolListWorks.get(list) : undefined;
  if (known) return known;
  const errors: CompileError[] = [];
  const tools = checked<Tool>('tool', list, (t, i) => `/tools/${key(t, 'id', i)}`, errors);
  const live = dedupe(
    tools.filter((t) => t.status !== 'removed'),
    (t) => t.id,
    '/tools',
    errors,
  ).sort(byKey((t) => t.id));
  // Removed tools may still be named by a policy written before they vanished; they match nothing.
  // Ids as given, so a tool that fails its schema is reported once, not again where it is named.
  const inventoryIds = (list ?? []).flatMap((t) => (typeof t?.id === 'string' ? [t.id] : []));
  const work: ToolListWork = { kept: frozen, errors, live, inventoryIds, ...(frozen ? { findings: new SchemaFindings() } : {}) };
  if (frozen) toolListWorks.set(list, work);
  return work;
}

/** The judge's problems with the live tools; kept while the group and state names are the same (the tools' rules read no others). */
function judgedTools(work: ToolListWork, names: DraftNames): CompileError[] {
  const key = JSON.stringify([[...names.groups].sort(), [...names.states].sort()]);
  if (work.judged?.names === key) return work.judged.errors;
  const errors: CompileError[] = [];
  for (const t of work.live) {
    for (const p of judgeTool(t, names)) errors.push({ pointer: `/tools/${escapePointer(t.id)}${p.pointer}`, message: p.message, code: p.code });
  }
  work.judged = { names: key, errors };
  return errors;
}

/** The catalog's tool entries and shared schemas (shareInputSchemas), with the canonical JSON of the entries' list. */
type CatalogEntries = ReturnType<typeof shareInputSchemas> & { toolsText: string };

function catalogEntries(live: readonly Tool[], kept: boolean): CatalogEntries {
  const shared = shareInputSchemas(live.map(bundleTool));
  const entryTexts = shared.tools.map((t, i) => {
    const schema = shared.texts.tools[i];
    return schema === null ? canonicalJson(t) : canonicalMembers(t as unknown as Record<string, unknown>, 'inputSchema', schema);
  });
  const toolsText = `[${entryTexts.join(',')}]`;
  if (!kept) return { ...shared, toolsText };
  // Shared by every compile of the same tool list (each entry as well): frozen, so no caller can
  // change the next one's bundle.
  for (const t of shared.tools) Object.freeze(t);
  return { ...shared, tools: Object.freeze(shared.tools) as (BundleTool | ExcludedTool)[], schemas: Object.freeze(shared.schemas) as object[], toolsText };
}

function bundleTool(t: Tool): BundleTool | ExcludedTool {
  // The server sets definitionHash whenever a definition changes; compute it only when absent.
  const hash =
    t.definitionHash ??
    definitionHash({
      name: t.source?.kind === 'mcp' ? (t.source.originalName ?? t.id) : t.id,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
    });
  if (t.status === 'quarantined' || t.status === 'disabled') return { id: t.id, excluded: t.status, definitionHash: hash };
  if (!t.redaction) return { id: t.id, excluded: 'no_redaction', definitionHash: hash };
  // Members equal to their default (bundle.schema.json says each) are left out.
  const out: BundleTool = {
    id: t.id,
    inputSchema: t.inputSchema,
    effect: t.effect,
    redaction: { allow: sortedUnique(t.redaction.allow) },
    definitionHash: hash,
  };
  if (t.description) out.description = t.description;
  const groups = sortedUnique(t.groups ?? ['default']);
  if (!(groups.length === 1 && groups[0] === 'default')) out.groups = groups;
  if (t.requiresConnection === true) out.requiresConnection = true;
  if (t.outputSchema !== undefined) out.outputSchema = t.outputSchema;
  if (t.state !== undefined) out.state = t.state;
  // Absent and containing "*" both mean every state.
  if (t.availableInStates !== undefined && !t.availableInStates.includes('*')) out.availableInStates = sortedUnique(t.availableInStates);
  if (t.requires !== undefined && t.requires.length > 0) out.requires = t.requires.map((r) => ({ fact: r.fact, in: r.in }));
  if (t.parallel !== undefined && (t.parallel.safe || t.parallel.resourceKey !== undefined)) out.parallel = { ...t.parallel };
  if (t.budgets !== undefined && Object.keys(t.budgets).length > 0) out.budgets = { ...t.budgets };
  if (t.source !== undefined) {
    out.source = { kind: t.source.kind };
    if (t.source.server !== undefined) out.source.server = t.source.server;
    if (t.source.originalName !== undefined) out.source.originalName = t.source.originalName;
  }
  return out;
}

/**
 * Input schemas that more than one tool uses move to a table written once (catalog.schemas, in
 * order of first use), and those tools name their schema by its position; a schema only one tool
 * uses stays inline. Equal schemas are found by their canonical JSON, kept (`texts`, by tool
 * position; null for a tool without an inline schema) for writing the catalog.
 */
function shareInputSchemas(tools: (BundleTool | ExcludedTool)[]): {
  tools: (BundleTool | ExcludedTool)[];
  schemas: NonNullable<Bundle['catalog']['schemas']>;
  texts: { tools: (string | null)[]; schemas: string[] };
} {
  const texts = tools.map((t) => ('excluded' in t || t.inputSchema === undefined ? null : canonicalJson(t.inputSchema)));
  const uses = new Map<string, number>();
  for (const text of texts) if (text !== null) uses.set(text, (uses.get(text) ?? 0) + 1);
  const positions = new Map<string, number>();
  const schemas: NonNullable<Bundle['catalog']['schemas']> = [];
  const schemaTexts: string[] = [];
  const inline: (string | null)[] = [];
  const out = tools.map((t, i) => {
    const text = texts[i];
    if (text === null || (uses.get(text) ?? 0) < 2 || 'excluded' in t) {
      inline.push(text);
      return t;
    }
    let at = positions.get(text);
    if (at === undefined) {
      at = schemas.length;
      positions.set(text, at);
      schemas.push(t.inputSchema as object);
      schemaTexts.push(text);
    }
    inline.push(null);
    const { inputSchema: _inline, ...rest } = t;
    return { ...rest, inputSchemaRef: at };
  });
  return { tools: out, schemas, texts: { tools: inline, schemas: schemaTexts } };
}

/**
 * The catalog's canonical JSON (RFC 8785: members sorted, each value canonical), with its tool
 * entries and shared schemas as catalogEntries wrote them (an entry's input schema as
 * shareInputSchemas wrote it, not written again).
 */
function catalogText(catalog: Bundle['catalog'], entries: CatalogEntries): string {
  const members = [`"groups":${canonicalJson(catalog.groups)}`];
  if (catalog.schemas !== undefined) members.push(`"schemas":[${entries.texts.schemas.join(',')}]`);
  members.push(`"states":${canonicalJson(catalog.states)}`, `"tools":${entries.toolsText}`);
  // Every member of the catalog is written above, and no other: else the catalog is written whole.
  const names = Object.keys(catalog).filter((k) => (catalog as Record<string, unknown>)[k] !== undefined);
  return names.length === members.length ? `{${members.join(',')}}` : canonicalJson(catalog);
}

/** The canonical JSON of an object whose member `key` is given as canonical text already. */
function canonicalMembers(value: Record<string, unknown>, key: string, text: string): string {
  const names = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort();
  return `{${names.map((k) => `${canonicalJson(k)}:${k === key ? text : canonicalJson(value[k])}`).join(',')}}`;
}

/** The object without its members that are empty arrays or empty objects (their stated default). */
function withoutEmpty<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (Array.isArray(v) ? v.length === 0 : v !== null && typeof v === 'object' && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

/** The object without its members equal to the given defaults. */
function withoutDefaults<T extends Record<string, unknown>>(value: T, defaults: Readonly<Partial<T>>): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value) as [keyof T, T[keyof T]][]) if (v !== undefined && v !== defaults[k]) out[k] = v;
  return out;
}

// Validation fills defaults in place; a shallow copy is enough where defaults sit at the top level.
function checked<T>(kind: string, items: readonly unknown[] | undefined, pointerOf: (item: unknown, i: number) => string, errors: CompileError[]): T[] {
  const out: T[] = [];
  (items ?? []).forEach((item, i) => {
    const copy = item !== null && typeof item === 'object' && !Array.isArray(item) ? { ...(item as object) } : item;
    const r = validate<T>(kind, copy, pointerOf(item, i));
    if (r.ok) out.push(r.value);
    else for (const e of r.errors) errors.push({ pointer: e.pointer, message: e.message, code: e.code ?? 'validation' });
  });
  return out;
}

function key(item: unknown, field: string, i: number): string {
  const v = item && typeof item === 'object' ? (item as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' && v !== '' ? escapePointer(v) : String(i);
}

function dedupe<T>(items: T[], keyOf: (t: T) => string, at: string, errors: CompileError[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items) {
    const k = keyOf(item);
    if (seen.has(k)) {
      errors.push({ pointer: `${at}/${escapePointer(k)}`, message: `"${k}" appears more than once`, code: 'conflict' });
      continue;
    }
    seen.add(k);
    out.push(item);
  }
  return out;
}

function sortedUnique<T extends string>(items: readonly T[]): T[] {
  return [...new Set(items)].sort();
}

function byKey<T>(keyOf: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = keyOf(a);
    const y = keyOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

function sortErrors(errors: CompileError[]): CompileError[] {
  return errors.sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
}
