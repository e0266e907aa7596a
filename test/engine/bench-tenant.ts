// The 2,000-tool benchmark tenants: one whose tools share a few input schemas (as the engine
// benchmark always had) and one shaped like a real imported catalog, where every tool has an input
// schema of its own (descriptions, enums, nested objects, formats), about 1.5 MB of bundle.
import type { ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { definitionHash } from '../../runtime/definition-hash.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';

export const BENCH_TOOLS = 2000;
export const NAMESPACES = ['core', 'mcp__github', 'mcp__jira', 'mcp__fs', 'mcp__slack', 'mcp__db', 'mcp__search', 'host'];
export const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'read', 'write'];
export const BENCH_GROUPS = Array.from({ length: 20 }, (_, i) => `g${i}`);
export const BENCH_STATES = ['research', 'analysis', 'modification', 'results'];

/** A seeded generator (the same tenant on every run). */
export function benchRandom(seed = 42) {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  return { rand, pick };
}

/** A few dozen schemas shared across the catalog: `arg<i % 7>` with one of 13 lengths. */
function sharedSchema(i: number): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: [`arg${i % 7}`],
    properties: { [`arg${i % 7}`]: { type: 'string', maxLength: 100 + (i % 13) }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
  };
}

const NOUNS = ['issue', 'repository', 'ticket', 'file', 'channel', 'table', 'document', 'record', 'branch', 'message', 'sprint', 'index'];

/** A schema no other tool has, of the size and shape MCP servers emit (Pydantic and Zod style). */
function distinctSchema(i: number, verb: string): Record<string, unknown> {
  const noun = NOUNS[i % NOUNS.length];
  const key = `${noun}_${i}`;
  return {
    type: 'object',
    additionalProperties: false,
    required: [`${key}_id`, 'scope'],
    properties: {
      [`${key}_id`]: { type: 'string', minLength: 1, maxLength: 64 + (i % 50), description: `The identifier of the ${noun} to ${verb} (tool ${i}).` },
      scope: { type: 'string', enum: ['own', 'team', `org-${i % 97}`, 'public'], description: `Whose ${noun}s are searched.` },
      [`${verb}_options`]: {
        type: 'object',
        additionalProperties: false,
        properties: {
          dry_run: { type: 'boolean', default: false, description: `Only report what ${verb} would change.` },
          labels: { type: 'array', maxItems: 10 + (i % 7), items: { type: 'string', pattern: `^[a-z][a-z0-9-]{0,${20 + (i % 30)}}$` } },
          since: { type: 'string', format: 'date-time', description: 'Only items changed after this instant.' },
        },
      },
      limit: {
        anyOf: [{ type: 'integer', minimum: 1, maximum: 100 + i }, { type: 'null' }],
        default: null,
        description: 'Page size; null for the server default.',
      },
      cursor: { type: 'string', maxLength: 512, description: `An opaque cursor from a previous ${verb} call.` },
    },
  };
}

/**
 * The benchmark catalog, stored as the server stores tools saved through the API (with source and
 * the definition hash computed on save). `distinct`: every tool has its own input schema.
 */
export function benchTools(options: { distinct: boolean }): Tool[] {
  const { pick } = benchRandom(42);
  return Array.from({ length: BENCH_TOOLS }, (_, i) => {
    const ns = NAMESPACES[i % NAMESPACES.length];
    const verb = VERBS[(i >> 3) % VERBS.length];
    const id = `${ns}__${verb}_${String(i).padStart(4, '0')}`;
    const description = `Tool number ${i}: does ${verb} things in ${ns}.`;
    const inputSchema = options.distinct ? distinctSchema(i, verb) : sharedSchema(i);
    return {
      id,
      description,
      inputSchema,
      source: { kind: 'core' },
      definitionHash: definitionHash({ name: id, description, inputSchema }),
      effect: pick(['read_only', 'state_change', 'external_side_effect'] as const),
      redaction: { allow: ['result', 'items[].id'] },
      groups: [pick(BENCH_GROUPS), pick(BENCH_GROUPS)].filter((g, k, a) => a.indexOf(g) === k),
      ...(i % 5 === 0 ? { availableInStates: ['undefined', pick(BENCH_STATES)] } : {}),
      ...(i % 9 === 0 ? { requires: [{ fact: 'hostSession', in: ['ready'] }] } : {}),
      ...(i % 17 === 0 ? { requiresConnection: true } : {}),
      parallel: { safe: i % 3 !== 0, ...(i % 4 === 0 ? { resourceKey: `r${i % 10}` } : {}) },
      status: i % 50 === 0 ? 'quarantined' : 'active',
    };
  });
}

export const benchGroups: Group[] = BENCH_GROUPS.map((name, i) => ({
  name,
  includes: i % 5 === 0 && i + 1 < BENCH_GROUPS.length ? [BENCH_GROUPS[i + 1]] : [],
}));
export const benchStates: State[] = BENCH_STATES.map((name) => ({ name }));

/** Tenant `t` over a catalog: five roles of globs, twenty subjects, five grants, one profile. */
export function benchSnapshot(t: number, tools: Tool[], random = benchRandom(1000 + t)): Snapshot {
  const { rand, pick } = random;
  const roles: NonNullable<TenantPolicy['roles']> = {};
  for (let r = 0; r < 5; r++) {
    roles[`role${r}`] = {
      groups: r === 0 ? ['*'] : BENCH_GROUPS.filter(() => rand() < 0.4),
      allow: [`${pick(NAMESPACES)}__*`, `${pick(NAMESPACES)}__${pick(VERBS)}_*`, pick(tools).id, `*_${String(Math.floor(rand() * 20)).padStart(2, '0')}*`],
      deny: [`${pick(NAMESPACES)}__delete_*`, pick(tools).id],
      requireApproval: r % 2 ? ['external_side_effect'] : ['state_change', 'external_side_effect'],
    };
  }
  const bindings: Record<string, string[]> = {};
  for (let s = 0; s < 20; s++) bindings[`agent:a${s}`] = [`role${s % 5}`, ...(s % 3 === 0 ? [`role${(s + 1) % 5}`] : [])];
  const grants: ConnectionGrant[] = Array.from({ length: 5 }, (_, g) => ({
    connectionId: `conn-${t}-${g}`,
    subjects: [`role${g}`],
    tools: [`${pick(NAMESPACES)}__*`],
  }));
  return {
    tenant: { id: `tenant-${t}`, name: `Tenant ${t}` },
    policy: { roles, bindings, profiles: { openai: { enable: [], disable: [tools[1].id] } } },
    tools,
    groups: benchGroups,
    states: benchStates,
    grants,
  };
}

/** Arguments a benchmark tool's input schema accepts: each required property with a value of its kind. */
export function benchArguments(inputSchema: Record<string, unknown> | undefined): Record<string, unknown> {
  const schema = inputSchema as { required?: string[]; properties?: Record<string, { type?: string; enum?: unknown[] }> } | undefined;
  const args: Record<string, unknown> = {};
  for (const name of schema?.required ?? []) {
    const p = schema?.properties?.[name];
    args[name] = p?.enum?.[0] ?? (p?.type === 'integer' ? 1 : 'x');
  }
  return args;
}
