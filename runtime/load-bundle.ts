// The console also runs this in the browser: no node: modules here.
import type { ValidateFunction } from 'ajv';
import { compileDialectSchema } from './json-schema-dialect.ts';
import { EvaluationCache, cachedResultsLimit } from './evaluation-cache.ts';
import type {
  Bundle,
  BundleApprovals,
  BundleConstraint,
  BundleTool,
  BundleV1,
  ConstraintRef,
  EvaluationResult,
  FilterReason,
  RuntimeGate,
} from '../policy-schemas/types.gen.ts';
import { globPositions, readBundleContent, toolGroups, toolStates } from './bundle-content.ts';
import type { CatalogEntry, ToolDefinition } from './bundle-content.ts';

export type { ToolDefinition } from './bundle-content.ts';

export type Effect = BundleTool['effect'];
type Decision = 'allow' | 'require_approval';
type ToolEntry = EvaluationResult['tools'][number];
type FilteredEntry = EvaluationResult['filtered'][number];

/**
 * One catalog tool, ready for evaluation. `def` is null for a tool that can never be visible.
 * Its fields are declared once, on CatalogTool below (the one kind of tool loadBundle makes).
 */
export type LoadedTool = { readonly [K in keyof CatalogTool]: CatalogTool[K] };

export type LoadedRole = {
  readonly name: string;
  readonly permitsAnyGroup: boolean;
  readonly groups: ReadonlySet<string>;
  /** Per tool position: 1 when an allow glob matches. */
  readonly allow: Uint8Array;
  /** Per tool position: 1 when a deny glob matches. */
  readonly deny: Uint8Array;
  readonly requireApproval: ReadonlySet<Effect>;
  /** The role's argument constraints, in the order written (a constraint is named by role and index). */
  readonly constraints: readonly LoadedConstraint[];
  readonly approvals: Required<BundleApprovals>;
};

/** One argument constraint of a role, with the tools it names and its schema's validator (compiled on first use). */
export type LoadedConstraint = {
  readonly index: number;
  /** Per tool position: 1 when one of the constraint's tool globs matches. */
  readonly tools: Uint8Array;
  readonly otherwise: BundleConstraint['otherwise'];
  readonly reason: string;
  readonly arguments: Record<string, unknown>;
  readonly validate: ValidateFunction;
  /** How evaluate and decide name it (R6.16), frozen once: its role, index, outcome and reason. */
  readonly ref: ConstraintRef;
};

export type LoadedProfile = { readonly enable: ReadonlySet<string>; readonly disable: ReadonlySet<string> };

export type LoadedGrant = {
  readonly connectionId: string;
  readonly subjects: ReadonlySet<string>;
  /** Per tool position: 1 when the grant covers the tool. */
  readonly tools: Uint8Array;
  /** Epoch ms; Infinity when the grant does not expire. */
  readonly expiresMs: number;
};

/** A redaction allowlist as a trie of path segments (`[]` = every array element, `*` = every key). */
export type RedactNode = { leaf: boolean; children: Map<string, RedactNode> };

/** A bundle prepared once for fast, allocation-light evaluation. Treat as opaque and immutable. */
export type LoadedBundle = {
  /** The bundle as parsed, in its own format: read tools from `tools[i].def`, not from here. */
  readonly bundle: Bundle | BundleV1;
  readonly tenant: string;
  readonly version: number;
  readonly revision: string;
  readonly tools: readonly LoadedTool[];
  readonly byId: ReadonlyMap<string, LoadedTool>;
  readonly groupClosure: ReadonlyMap<string, readonly string[]>;
  readonly roles: ReadonlyMap<string, LoadedRole>;
  readonly bindings: ReadonlyMap<string, readonly string[]>;
  /** Per profile name: the tool ids it enables and the ones it disables. */
  readonly profiles: ReadonlyMap<string, LoadedProfile>;
  /** Per tool position: 1 when some profile enables the tool, so only such a profile shows it. */
  readonly profileScoped: Uint8Array;
  readonly grants: readonly LoadedGrant[];
  /** Per group name: 1 at each position of a tool in that group. */
  readonly groupBits: ReadonlyMap<string, Uint8Array>;
  /** Per state name: 1 at each position of a tool available in it (tools available in every state included). */
  readonly stateBits: ReadonlyMap<string, Uint8Array>;
  /** 1 at each position of a tool available in every state. */
  readonly allStateBits: Uint8Array;
  /** Sorted grant expiry instants: a cached answer computed at `now` stays right until the next one. */
  readonly expiryInstants: readonly number[];
  /** Memoised per-subject, per-group-set and per-state work, and recent answers. */
  readonly memo: EvaluationMemo;
};

export type SubjectInfo = {
  readonly roles: readonly string[];
  readonly permitsAnyGroup: boolean;
  readonly permittedGroups: ReadonlySet<string>;
  /** Per tool position: 0 passes the policy, 1 denied, 2 not allowed. */
  readonly policy: Uint8Array;
  readonly requireApproval: ReadonlySet<Effect>;
  readonly grants: readonly LoadedGrant[];
};

export type EvaluationMemo = {
  subjects: Map<string, SubjectInfo>;
  groupMasks: Map<string, { expanded: string[]; mask: Uint8Array }>;
  stateMasks: Map<string, Uint8Array>;
  results: EvaluationCache;
};

/** Compiles (once per distinct schema) a tool input schema; throws when the schema is invalid. */
export function compileInputSchema(schema: Record<string, unknown>): ValidateFunction {
  return compileDialectSchema(schema);
}

/**
 * Like compileInputSchema, for a schema its caller has just found valid against its meta-schema
 * (draft 2020-12 or draft-07, as ajv reads `$schema`): ajv does not check it again.
 */
export function compileMetaCheckedInputSchema(schema: Record<string, unknown>): ValidateFunction {
  return compileDialectSchema(schema, true);
}

/**
 * Prepares a verified bundle of either format for evaluation: reads its content (bundle-content.ts:
 * defaults filled in, shared schemas resolved, globs, closures and profile scoping derived) and
 * turns it into per-tool bit arrays. Input schemas are compiled on a tool's first call (decide),
 * not here: a runtime with thousands of tools pays for the few it is asked about.
 * Throws a TypeError when the bundle is malformed.
 *
 * @example
 *   const loaded = loadBundle(JSON.parse(bytes));
 *   const result = evaluate(loaded, { subject: 'agent:support-bot' });
 */
export function loadBundle(bundle: Bundle | BundleV1, options: { inputValidators?: boolean | 'on-first-use' } = {}): LoadedBundle {
  // Evaluate-only callers (the console) pass false: `decide` then refuses every call. true compiles
  // every input schema now (a host that would rather pay at load than on a first call).
  const validators = options.inputValidators ?? 'on-first-use';
  const content = readBundleContent(bundle);
  const n = content.tools.length;
  const byId = new Map<string, LoadedTool>();
  // Tools with one allowlist (most of a catalog shares a few) share its trie: read-only once built.
  const tries = new Map<string, RedactNode>();
  const sharedTrie = (allow: readonly string[]): RedactNode => {
    const key = JSON.stringify(allow);
    let trie = tries.get(key);
    if (trie === undefined) tries.set(key, (trie = redactionTrie(allow)));
    return trie;
  };
  const tools: LoadedTool[] = content.tools.map((entry, pos) => {
    const tool = new CatalogTool(entry, pos, validators, entry.tool ? sharedTrie(entry.tool.redaction.allow) : null);
    byId.set(entry.id, tool);
    return tool;
  });
  const bitsAt = (positions: readonly number[]): Uint8Array => {
    const bits = new Uint8Array(n);
    for (const p of positions) bits[p] = 1;
    return bits;
  };

  const ids = content.ids;
  const roles = new Map<string, LoadedRole>();
  for (const [name, role] of content.roles) {
    roles.set(name, {
      name,
      permitsAnyGroup: role.expandedGroups.includes('*'),
      groups: new Set(role.expandedGroups),
      allow: bitsAt(role.allowPositions),
      deny: bitsAt(role.denyPositions),
      requireApproval: new Set(role.requireApproval),
      constraints: role.constraints.map((c, index) => loadedConstraint(c, name, index, ids, validators)),
      approvals: role.approvals,
    });
  }
  const profiles = new Map<string, LoadedProfile>([...content.profiles].map(([name, p]) => [name, { enable: new Set(p.enable), disable: new Set(p.disable) }]));
  const profileScoped = bitsAt(content.profileScoped);
  const grants: LoadedGrant[] = content.grants.map((g) => {
    const expiresMs = g.expiresAt === undefined ? Infinity : Date.parse(g.expiresAt);
    return {
      connectionId: g.connectionId,
      subjects: new Set(g.subjects),
      tools: bitsAt(g.positions),
      // An unreadable expiry counts as expired: fail closed.
      expiresMs: Number.isNaN(expiresMs) ? -Infinity : expiresMs,
    };
  });
  const groupBits = new Map<string, Uint8Array>();
  const allStateBits = new Uint8Array(n);
  const stateOnly = new Map<string, Uint8Array>();
  for (const t of tools) {
    for (const g of t.groups) {
      let bits = groupBits.get(g);
      if (!bits) groupBits.set(g, (bits = new Uint8Array(n)));
      bits[t.pos] = 1;
    }
    if (t.allStates) allStateBits[t.pos] = 1;
    else {
      for (const st of t.states) {
        let bits = stateOnly.get(st);
        if (!bits) stateOnly.set(st, (bits = new Uint8Array(n)));
        bits[t.pos] = 1;
      }
    }
  }
  const stateBits = new Map<string, Uint8Array>();
  for (const [st, bits] of stateOnly) {
    for (let i = 0; i < n; i++) bits[i] |= allStateBits[i];
    stateBits.set(st, bits);
  }
  const expiryInstants = [...new Set(grants.map((g) => g.expiresMs).filter((ms) => Number.isFinite(ms)))].sort((a, b) => a - b);

  return {
    bundle,
    tenant: bundle.tenant,
    version: bundle.version,
    revision: bundle.revision,
    tools,
    byId,
    groupClosure: content.groupClosure,
    roles,
    bindings: content.bindings,
    profiles,
    profileScoped,
    grants,
    groupBits,
    stateBits,
    allStateBits,
    expiryInstants,
    memo: { subjects: new Map(), groupMasks: new Map(), stateMasks: new Map(), results: new EvaluationCache(cachedResultsLimit(tools.length)) },
  };
}

function loadedConstraint(c: BundleConstraint, role: string, index: number, ids: readonly string[], validators: boolean | 'on-first-use'): LoadedConstraint {
  const tools = new Uint8Array(ids.length);
  for (const p of globPositions(ids, c.tools)) tools[p] = 1;
  const ref: ConstraintRef = Object.freeze({
    role,
    index,
    // Anything but an explicit require_approval denies: a malformed constraint fails closed.
    otherwise: c.otherwise === 'require_approval' ? 'require_approval' : 'deny',
    reason: typeof c.reason === 'string' ? c.reason : '',
  });
  // A constraint without a schema object (an unchecked bundle's) can never be met: it refuses every call.
  const schemaObject = c.arguments !== null && typeof c.arguments === 'object' && !Array.isArray(c.arguments);
  const validate = schemaObject ? validatorFor(c.arguments, validators) : refuseAll;
  return { index, tools, otherwise: c.otherwise, reason: c.reason, arguments: c.arguments, validate, ref };
}

const NO_STATES: ReadonlySet<string> = new Set();
const NO_GROUPS: readonly string[] = Object.freeze([]);
const NO_GATES: readonly RuntimeGate[] = Object.freeze([]);

/**
 * One loaded catalog tool. What only some calls need is made when first asked, not at load: a
 * runtime loads thousands of tools and is asked about few (the input-schema validator, the
 * frozen answer entries evaluate shares).
 */
class CatalogTool {
  readonly id: string;
  readonly excluded: 'quarantined' | 'disabled' | 'no_redaction' | null;
  readonly definitionHash: string;
  /** The tool's effect; null for an excluded tool. */
  readonly effect: Effect | null;
  readonly groups: readonly string[];
  readonly allStates: boolean;
  readonly states: ReadonlySet<string>;
  readonly requires: readonly RuntimeGate[];
  readonly requiresConnection: boolean;
  private entriesMade: ToolEntries | undefined;
  private validator: ValidateFunction | null | undefined;

  // What evaluation reads is taken from the bundle's entry as it stands; the definition is the content's, made on first read.
  constructor(
    private readonly content: CatalogEntry,
    /** Position in the sorted catalog; indexes every per-tool array of the bundle. */
    readonly pos: number,
    private readonly validators: boolean | 'on-first-use',
    readonly redaction: RedactNode | null,
  ) {
    this.id = content.id;
    this.excluded = content.excluded;
    this.definitionHash = content.definitionHash;
    const tool = content.tool;
    this.effect = tool?.effect ?? null;
    this.groups = tool ? toolGroups(tool) : NO_GROUPS;
    const states = tool ? toolStates(tool) : undefined;
    this.allStates = states === undefined;
    this.states = states ? new Set(states) : NO_STATES;
    this.requires = tool?.requires ?? NO_GATES;
    this.requiresConnection = tool?.requiresConnection === true;
    // A runtime that asked for every validator now (true) compiles here, off its decide path.
    if (validators === true && content.inputSchema) this.validator = compileOrRefuse(content.inputSchema);
  }

  /** The tool with its defaults filled in and its input schema inline, whichever format the bundle has. */
  get def(): ToolDefinition | null {
    return this.content.def;
  }

  /** The tool's input schema (a shared one resolved), as `def.inputSchema`, without making `def`; null for an excluded tool. */
  get inputSchema(): Record<string, unknown> | null {
    return this.content.inputSchema;
  }

  /** Shared frozen result entries, so evaluate allocates nothing per visible or filtered tool. */
  get entries(): ToolEntries {
    this.entriesMade ??= new ToolEntries(this.id);
    return this.entriesMade;
  }

  get validateInput(): ValidateFunction | null {
    if (this.validator === undefined) {
      const schema = this.content.inputSchema;
      this.validator = schema === null ? null : validatorFor(schema, this.validators);
    }
    return this.validator;
  }
}

/** A tool's frozen evaluate entries, each made on first use and shared by every answer after. */
class ToolEntries {
  private allowEntry: ToolEntry | undefined;
  private approvalEntry: ToolEntry | undefined;
  private filteredEntries: Record<FilterReason, FilteredEntry | undefined> | undefined;

  constructor(private readonly id: string) {}

  get allow(): ToolEntry {
    this.allowEntry ??= Object.freeze({ id: this.id, decision: 'allow' as Decision });
    return this.allowEntry;
  }

  get require_approval(): ToolEntry {
    this.approvalEntry ??= Object.freeze({ id: this.id, decision: 'require_approval' as Decision });
    return this.approvalEntry;
  }

  get filtered(): Record<FilterReason, FilteredEntry | undefined> {
    this.filteredEntries ??= noFilteredEntries();
    return this.filteredEntries;
  }
}

/**
 * A tool's filtered entries, made on first use: every tool's object has every reason, in one
 * order, so that evaluate's lookup is one shape for the whole catalog (it runs for every tool).
 */
function noFilteredEntries(): Record<FilterReason, FilteredEntry | undefined> {
  return {
    no_role: undefined,
    quarantined: undefined,
    disabled: undefined,
    no_redaction: undefined,
    group: undefined,
    state: undefined,
    denied: undefined,
    not_allowed: undefined,
    runtime_gate: undefined,
    profile: undefined,
    no_connection: undefined,
  };
}

const refuseAll = (() => {
  refuseAll.errors = [
    { instancePath: '', schemaPath: '#', keyword: 'schema', params: {}, message: 'input schemas were not compiled (loaded for evaluation only)' },
  ];
  return false;
}) as unknown as ValidateFunction;

/** A schema's validator as loadBundle's `inputValidators` asks: refusing every call, compiled now, or compiled on first call. */
function validatorFor(schema: Record<string, unknown>, validators: boolean | 'on-first-use'): ValidateFunction {
  return validators === false ? refuseAll : validators === true ? compileOrRefuse(schema) : onFirstUse(schema);
}

/** A validator that compiles its schema (as compileOrRefuse) on its first call, with the errors of each call. */
function onFirstUse(schema: Record<string, unknown>): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compileOrRefuse(schema);
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}

function compileOrRefuse(schema: Record<string, unknown>): ValidateFunction {
  try {
    return compileInputSchema(schema);
  } catch {
    // A signed bundle's schemas compiled at publish time; if this runtime's ajv disagrees, no call passes.
    const refuse = (() => {
      refuse.errors = [{ instancePath: '', schemaPath: '#', keyword: 'schema', params: {}, message: 'the input schema cannot be compiled' }];
      return false;
    }) as unknown as ValidateFunction;
    return refuse;
  }
}

/** Builds the trie of a redaction allowlist; `$` alone keeps the whole output. */
export function redactionTrie(paths: readonly string[]): RedactNode {
  const root: RedactNode = { leaf: false, children: new Map() };
  for (const path of paths) {
    if (path === '$') {
      root.leaf = true;
      continue;
    }
    let node = root;
    const segments = path.split(/\.|(?=\[\])/);
    // `$.a` and `$[]` start at the root, as `a` and `[]` do (R10.2).
    if (segments[0] === '$') segments.shift();
    for (const seg of segments) {
      if (seg === '') continue;
      let next = node.children.get(seg);
      if (!next) {
        next = { leaf: false, children: new Map() };
        node.children.set(seg, next);
      }
      node = next;
    }
    node.leaf = true;
  }
  return root;
}
