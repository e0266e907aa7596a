import type { ConnectionGrant, Group, State, TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import type { Snapshot } from '../../server/compiler/compile-bundle.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';

export const ISSUED_AT = '2026-01-01T00:00:00.000Z';

/** A small tool with a redaction allowlist: override what the test is about. */
export function tool(id: string, extra: Partial<Tool> = {}): Tool {
  return {
    id,
    description: `The ${id} tool.`,
    inputSchema: { type: 'object', additionalProperties: false, properties: { q: { type: 'string', maxLength: 10 } } },
    effect: 'read_only',
    redaction: { allow: ['ok'] },
    ...extra,
  };
}

export type SnapshotParts = {
  tenant?: string;
  policy?: TenantPolicy;
  tools?: Tool[];
  groups?: Group[];
  states?: State[];
  grants?: ConnectionGrant[];
};

export function snapshot(parts: SnapshotParts): Snapshot {
  return {
    tenant: { id: parts.tenant ?? 't1', name: 'Tenant one' },
    policy: parts.policy ?? {},
    tools: parts.tools ?? [],
    groups: parts.groups ?? [],
    states: parts.states ?? [],
    grants: parts.grants ?? [],
  };
}

/** Compiles and loads, failing the test with the compile errors when there are any. */
export function build(parts: SnapshotParts | Snapshot, version = 1): LoadedBundle {
  const snap = 'tenant' in parts && typeof parts.tenant === 'object' ? (parts as Snapshot) : snapshot(parts as SnapshotParts);
  const r = compileBundle(snap, { version, previousRevision: null, issuedAt: ISSUED_AT });
  if (!r.ok) throw new Error(`compile failed: ${JSON.stringify(r.errors, null, 2)}`);
  return loadBundle(JSON.parse(r.text));
}
