// Tenants of one or two tools, every combination of where the tools sit (no group, the default
// group, another group, both) and what the roles permit (`*`, default, another group): the size at
// which a bundle's vectors have the least data to choose from, and where a misreading of the group
// rules hides most easily (issue: "groups: []" and "*" on a one-tool tenant).
import type { Tool } from '../../policy-schemas/types.gen.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';

const PLACES: (string[] | undefined)[] = [undefined, [], ['g1'], ['default', 'g1']];
const PERMITS: string[][] = [['*'], ['default'], ['g1'], ['default', 'g1']];

function tool(id: string, groups: string[] | undefined, extra: Partial<Tool> = {}): Tool {
  return {
    id,
    description: id,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    effect: 'read_only',
    redaction: { allow: ['ok'] },
    ...(groups === undefined ? {} : { groups }),
    ...extra,
  };
}

/** Every one-tool tenant of PLACES × PERMITS, and two-tool tenants pairing a groupless tool with each place. */
export function tinyTenants(): Snapshot[] {
  const out: Snapshot[] = [];
  const snapshot = (id: string, tools: Tool[], permits: string[], second?: string[]): Snapshot => ({
    tenant: { id, name: id },
    policy: {
      roles: { r: { groups: permits, allow: ['*'] }, ...(second ? { s: { groups: second, allow: ['core__*'] } } : {}) },
      bindings: { 'agent:a': ['r'], ...(second ? { 'agent:b': ['s'], 'agent:c': ['r', 's'] } : {}) },
    },
    tools,
    groups: [{ name: 'g1' }],
    states: [],
    grants: [],
  });
  PLACES.forEach((place, i) => {
    PERMITS.forEach((permits, j) => out.push(snapshot(`one-${i}-${j}`, [tool('core__only', place)], permits)));
  });
  PLACES.forEach((place, i) => {
    PERMITS.forEach((permits, j) =>
      out.push(snapshot(`two-${i}-${j}`, [tool('core__a', []), tool('mcp__x__b', place)], permits, PERMITS[(j + 1) % PERMITS.length])),
    );
  });
  return out;
}
