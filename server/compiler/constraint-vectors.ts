import type { ValidateFunction } from 'ajv';
import type { Bundle, ConstraintRef, DecideVector, EvaluateVector, EvaluationRequest, VectorCall } from '../../policy-schemas/types.gen.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { evaluate, grantedConnections, subjectInfo } from '../../runtime/evaluate.ts';
import { globMatcher } from '../../runtime/glob.ts';
import { compileInputSchema } from '../../runtime/load-bundle.ts';
import type { LoadedBundle, LoadedTool } from '../../runtime/load-bundle.ts';

/**
 * Conformance vectors for argument constraints (docs/spec.md R7.11, R12.6), chosen from the
 * tenant's own constraints so that they tell apart the readings an implementer could get wrong:
 * constraints judged before the input schema, the first failing constraint deciding whatever its
 * kind (deny must win), globs in `tools` read as exact ids, constraints of roles the subject does
 * not hold applied, and a failing require_approval constraint read as a refusal. Arguments are
 * searched among values read off the constraint and input schemas and checked with the very
 * validators a runtime uses; each expectation is the runtime's own decide answer. One evaluate
 * vector pins what evaluate reports (R6.16) on a tool several constraints name and on one none does.
 */
export function constraintVectors(loaded: LoadedBundle, bundle: Bundle, at: string): (DecideVector | EvaluateVector)[] {
  const constraints = constraintsOf(loaded);
  if (constraints.length === 0) return [];
  return new ConstraintVectorChooser(loaded, bundle, at, constraints).choose();
}

/**
 * For the other vectors' calls: when `text` parses to arguments the tool's input schema accepts but
 * some constraint of `roles` naming the tool refuses, JSON text of arguments that meet them all
 * (when the search finds some); else `text` as it is. A vector pinning another rule must not be
 * decided by a constraint, or an implementation that misreads that rule could still pass it.
 */
export function argumentsClearOfConstraints(loaded: LoadedBundle, roles: readonly string[], tool: LoadedTool, text: string | undefined): string | undefined {
  const held = constraintsOf(loaded).filter((c) => c.names[tool.pos] !== 0 && roles.includes(c.role));
  if (held.length === 0) return text;
  let args: unknown = {};
  if (text !== undefined) {
    try {
      args = JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (!safely(tool.validateInput, args) || held.every((c) => meets(c, args))) return text;
  for (const candidate of candidateArguments(tool, held)) {
    if (safely(tool.validateInput, candidate) && held.every((c) => meets(c, candidate))) return JSON.stringify(candidate);
  }
  return text;
}

const byBundle = new WeakMap<LoadedBundle, Constraint[]>();
function constraintsOf(loaded: LoadedBundle): Constraint[] {
  let list = byBundle.get(loaded);
  if (!list) byBundle.set(loaded, (list = allConstraints(loaded.bundle as Bundle, loaded)));
  return list;
}

type Constraint = {
  role: string;
  index: number;
  otherwise: 'deny' | 'require_approval';
  schema: Record<string, unknown>;
  /** Per tool position: 1 when an exact id of `tools` names the tool, 2 when only a glob does. */
  names: Uint8Array;
  validate: ValidateFunction | null;
};

// Bounds on the search, so a large tenant's compile stays quick: tools tried, and argument sets per tool.
const MAX_TOOLS = 24;
const MAX_CANDIDATES = 400;
const MAX_SUBJECTS = 16;
// Argument sets checked in all, whatever the tenant's size: a compile spends at most a few milliseconds here.
const MAX_TRIES = 5_000;

function allConstraints(bundle: Bundle, loaded: LoadedBundle): Constraint[] {
  const out: Constraint[] = [];
  for (const [role, def] of Object.entries(bundle.policy.roles ?? {})) {
    (def.constraints ?? []).forEach((c, index) => {
      const names = new Uint8Array(loaded.tools.length);
      for (const glob of c.tools) {
        const matches = globMatcher(glob);
        for (const t of loaded.tools) if (matches(t.id)) names[t.pos] = glob.includes('*') ? names[t.pos] || 2 : 1;
      }
      let validate: ValidateFunction | null;
      try {
        validate = compileInputSchema(c.arguments);
      } catch {
        validate = null;
      }
      out.push({ role, index, otherwise: c.otherwise, schema: c.arguments, names, validate });
    });
  }
  return out;
}

function meets(c: Constraint, args: unknown): boolean {
  try {
    return c.validate?.(args) === true;
  } catch {
    return false;
  }
}

type Probe = { subject: string; roles: readonly string[]; request: EvaluationRequest; tool: LoadedTool; connectionId?: string };

class ConstraintVectorChooser {
  private readonly out: (DecideVector | EvaluateVector)[] = [];
  private calls = 0;
  private tries = 0;

  constructor(
    private readonly loaded: LoadedBundle,
    private readonly bundle: Bundle,
    private readonly at: string,
    private readonly constraints: Constraint[],
  ) {}

  choose(): (DecideVector | EvaluateVector)[] {
    const wanted = new Set(['meets', 'glob', 'schema-first', 'deny-wins', 'approval', 'other-role']);
    const tools = this.loaded.tools.filter((t) => t.excluded === null && this.constraints.some((c) => c.names[t.pos] !== 0)).slice(0, MAX_TOOLS);
    const probes = this.probes(tools);
    this.reported(probes);
    for (const tool of tools) {
      if (wanted.size === 0) break;
      const mine = probes.filter((p) => p.tool === tool);
      if (mine.length === 0) continue;
      const candidates = candidateArguments(
        tool,
        this.constraints.filter((c) => c.names[tool.pos] !== 0),
      );
      const validInput = (args: unknown) => safely(tool.validateInput, args);
      for (const probe of mine) {
        const held = this.constraints.filter((c) => c.names[tool.pos] !== 0 && probe.roles.includes(c.role));
        const foreign = this.constraints.filter((c) => c.names[tool.pos] !== 0 && !probe.roles.includes(c.role));
        // Held constraints in the order R7.11 reads them: roles in binding order, then index.
        held.sort((a, b) => probe.roles.indexOf(a.role) - probe.roles.indexOf(b.role) || a.index - b.index);
        for (const args of candidates) {
          if (wanted.size === 0 || ++this.tries > MAX_TRIES) break;
          const failing = held.filter((c) => !meets(c, args));
          const valid = validInput(args);
          const take = (kind: string, rules: string[]) => {
            if (!wanted.has(kind)) return;
            wanted.delete(kind);
            this.call(rules, probe, args);
          };
          if (!valid) {
            if (failing.length > 0) take('schema-first', ['R7.8', 'R7.11']);
            continue;
          }
          if (failing.length === 0) {
            take('meets', ['R7.11', 'R7.7']);
            // A constraint of a role the subject does not hold, failed here, must change nothing.
            if (foreign.some((c) => !meets(c, args) && (c.otherwise === 'deny' || this.viewAllows(probe)))) take('other-role', ['R7.11']);
            continue;
          }
          const denies = failing.some((c) => c.otherwise === 'deny');
          if (!denies) take('approval', ['R7.11']);
          // Deny wins even when a failing approval constraint comes first.
          if (denies && failing[0].otherwise === 'require_approval') take('deny-wins', ['R7.11']);
          // Every failing constraint names the tool through a glob only: an exact-id reading lets the call through.
          if (failing.every((c) => c.names[tool.pos] === 2) && (denies || this.viewAllows(probe))) take('glob', ['R7.11', 'R2.4']);
        }
      }
    }
    return this.out;
  }

  /**
   * R6.16: the request under which a visible tool is named by the most constraints (most roles on
   * a tie, so their order shows), pinning them in order, and beside it a visible tool no held
   * constraint names (one a role the subject lacks names, where there is one), pinned as none.
   */
  private reported(probes: readonly Probe[]): void {
    let best: { probe: Probe; score: number } | null = null;
    for (const probe of probes) {
      const refs = this.constraints.filter((c) => c.names[probe.tool.pos] !== 0 && probe.roles.includes(c.role));
      const score = refs.length * 100 + new Set(refs.map((c) => c.role)).size;
      if (refs.length > 0 && (best === null || score > best.score)) best = { probe, score };
    }
    if (best === null) return;
    const answer = evaluate(this.loaded, best.probe.request);
    const entry = answer.tools.find((t) => t.id === best.probe.tool.id);
    if (!entry?.constraints) return;
    const expect: Record<string, ConstraintRef[]> = { [entry.id]: entry.constraints.map((c) => ({ ...c })) };
    const unnamed = answer.tools.filter((t) => t.constraints === undefined);
    const byOtherRole = unnamed.find((t) => {
      const pos = this.loaded.byId.get(t.id)?.pos;
      return pos !== undefined && this.constraints.some((c) => c.names[pos] !== 0);
    });
    const none = byOtherRole ?? unnamed[0];
    if (none) expect[none.id] = [];
    this.out.push({ rules: ['R6.16'], request: best.probe.request, expect: { constraints: expect } });
  }

  private viewAllows(p: Probe): boolean {
    return createView(this.loaded, p.request).decisions[p.tool.pos] === 1;
  }

  /** Per tool, a request for each subject (one per distinct role set) under which the tool is visible. */
  private probes(tools: readonly LoadedTool[]): Probe[] {
    const bindings = this.bundle.policy.bindings ?? {};
    const seen = new Set<string>();
    const subjects = Object.keys(bindings)
      .sort()
      .filter((s) => {
        const key = bindings[s].join('\u0000');
        if (seen.has(key) || bindings[s].length === 0) return false;
        seen.add(key);
        return true;
      })
      .slice(0, MAX_SUBJECTS);
    const atMs = Date.parse(this.at);
    const out: Probe[] = [];
    for (const subject of subjects) {
      const info = subjectInfo(this.loaded, subject);
      const groups = info.permitsAnyGroup ? ['*'] : [...info.permittedGroups].sort();
      if (groups.length === 0) continue;
      for (const tool of tools) {
        const request: EvaluationRequest = { subject, groups, at: this.at };
        if (tool.requires.length > 0) request.facts = Object.fromEntries(tool.requires.map((g) => [g.fact, g.in[0]]));
        const profile = Object.entries(this.bundle.policy.profiles ?? {}).find(
          ([, p]) => (p.enable ?? []).includes(tool.id) && !(p.disable ?? []).includes(tool.id),
        );
        if (profile) request.profile = profile[0];
        if (createView(this.loaded, request).decisions[tool.pos] === 0) continue;
        const connectionId = tool.requiresConnection ? grantedConnections(info, tool, atMs, undefined)[0] : undefined;
        out.push({ subject, roles: info.roles, request, tool, ...(connectionId !== undefined ? { connectionId } : {}) });
      }
    }
    return out;
  }

  private call(rules: string[], p: Probe, args: unknown): void {
    const call: VectorCall = { toolCallId: `conformance-constraint-${++this.calls}`, name: p.tool.id, arguments: JSON.stringify(args) };
    if (p.connectionId !== undefined) call.connectionId = p.connectionId;
    const got = decide(createView(this.loaded, p.request), call);
    const expect: DecideVector['expect'] = { decision: got.decision };
    if (got.errorCode !== undefined) expect.errorCode = got.errorCode as NonNullable<DecideVector['expect']['errorCode']>;
    if (got.errors && got.errors.length > 0) expect.pointers = [got.errors[0].pointer];
    this.out.push({ rules, request: p.request, call, expect });
  }
}

function safely(validate: ValidateFunction | null, args: unknown): boolean {
  try {
    return validate?.(args) === true;
  } catch {
    return false;
  }
}

type SchemaLike = { type?: unknown; properties?: Record<string, unknown>; required?: unknown; additionalProperties?: unknown };

/**
 * Argument sets to try on a tool: arguments its input schema accepts, then each with one property
 * (named by the input schema or a constraint) set to each value read off those schemas, or removed,
 * then a few pairs, and variants the input schema refuses. Bounded by MAX_CANDIDATES.
 */
function candidateArguments(tool: LoadedTool, constraints: readonly Constraint[]): Record<string, unknown>[] {
  const input = (tool.def?.inputSchema ?? {}) as SchemaLike;
  const schemas: SchemaLike[] = [input, ...constraints.map((c) => c.schema as SchemaLike)];
  const props = new Map<string, unknown[]>();
  for (const s of schemas) {
    for (const [name, sub] of Object.entries(s.properties ?? {})) {
      const values = props.get(name) ?? [];
      values.push(...valuesFor(sub));
      props.set(name, values);
    }
    if (Array.isArray(s.required)) for (const name of s.required) if (typeof name === 'string' && !props.has(name)) props.set(name, ['x']);
  }
  for (const [name, values] of props) props.set(name, dedupe([...values, 'x', '', 0, 1, true, null]).slice(0, 16));
  const base: Record<string, unknown> = {};
  for (const name of Array.isArray(input.required) ? input.required : []) {
    if (typeof name !== 'string') continue;
    const values = props.get(name) ?? ['x'];
    const ok = values.find((v) => safely(tool.validateInput, { ...base, [name]: v }));
    base[name] = ok ?? values[0];
  }
  const out: Record<string, unknown>[] = [{}, base];
  const singles: [string, unknown][] = [];
  for (const [name, values] of props) for (const v of values) singles.push([name, v]);
  for (const [name, v] of singles) out.push({ ...base, [name]: v });
  for (const name of props.keys()) {
    const { [name]: _gone, ...rest } = base;
    out.push(rest);
  }
  for (let i = 0; i < singles.length && out.length < MAX_CANDIDATES / 2; i++) {
    for (let j = i + 1; j < singles.length && out.length < MAX_CANDIDATES / 2; j++) {
      if (singles[i][0] !== singles[j][0]) out.push({ ...base, [singles[i][0]]: singles[i][1], [singles[j][0]]: singles[j][1] });
    }
  }
  // Variants the input schema may refuse, for the order of R7.6 and R7.11.
  const refused: Record<string, unknown>[] = [];
  for (const args of out) {
    refused.push({ ...args, conformance_extra: 0 });
    for (const [name, sub] of Object.entries(input.properties ?? {})) {
      const type = (sub as SchemaLike | undefined)?.type;
      if (typeof type === 'string') refused.push({ ...args, [name]: type === 'string' ? 0 : 'x' });
    }
    if (out.length + refused.length >= MAX_CANDIDATES) break;
  }
  return [...out, ...refused].slice(0, MAX_CANDIDATES);
}

/** Values worth trying for one property: those a schema names, and those at and past its limits. */
function valuesFor(sub: unknown): unknown[] {
  if (sub === null || typeof sub !== 'object') return [];
  const s = sub as Record<string, unknown>;
  const out: unknown[] = [];
  if (Array.isArray(s.enum)) out.push(...s.enum.slice(0, 4));
  if ('const' in s) out.push(s.const);
  if ('default' in s) out.push(s.default);
  if (Array.isArray(s.examples)) out.push(...s.examples.slice(0, 4));
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
    const n = s[k];
    if (typeof n === 'number') out.push(n, n - 1, n + 1);
  }
  for (const k of ['minLength', 'maxLength']) {
    const n = s[k];
    if (typeof n === 'number' && n <= 256) out.push('x'.repeat(n), 'x'.repeat(n + 1), n > 0 ? 'x'.repeat(n - 1) : '');
  }
  if (typeof s.pattern === 'string') out.push(...literalsOf(s.pattern));
  for (const k of ['not', 'items']) if (s[k] !== undefined) out.push(...valuesFor(s[k]));
  return out;
}

/** Strings a simple anchored pattern likely accepts (its literal prefix and suffix joined), and some it likely refuses. */
function literalsOf(pattern: string): string[] {
  // Each token is a literal character or null (anything else: classes, groups, escapes like \d).
  const tokens: (string | null)[] = [];
  const body = pattern.replace(/^\^/, '');
  const anchoredEnd = /(^|[^\\])\$$/.test(body);
  const text = anchoredEnd ? body.slice(0, -1) : body;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if ('*+?{'.includes(ch)) {
      // A quantified token is not fixed text.
      if (tokens.length > 0) tokens[tokens.length - 1] = null;
      if (ch === '{') while (i < text.length && text[i] !== '}') i++;
      continue;
    }
    if (ch === '\\' && i + 1 < text.length) {
      const next = text[++i];
      tokens.push(/[A-Za-z0-9]/.test(next) ? null : next);
    } else tokens.push('.()[]|^$'.includes(ch) ? null : ch);
  }
  const prefix: string[] = [];
  if (pattern.startsWith('^'))
    for (const t of tokens) {
      if (t === null) break;
      prefix.push(t);
    }
  const suffix: string[] = [];
  if (anchoredEnd) for (let i = tokens.length - 1; i >= 0 && tokens[i] !== null; i--) suffix.unshift(tokens[i] as string);
  const whole = tokens.every((t) => t !== null) ? tokens.join('') : null;
  const p = prefix.join('');
  const q = suffix.join('');
  return dedupe([whole, p, `${p}x`, `x${q}`, q, `${p}${q}`, `${p}x${q}`, 'conformance']).filter(
    (v): v is string => typeof v === 'string' && v !== '',
  ) as string[];
}

function dedupe(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const k = JSON.stringify(v) ?? 'undefined';
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
