import { structuredPatch } from 'diff';
import type { Group, Tool } from '../../policy-schemas/types.gen.ts';
import { APPLY_ORDER, BUILT_IN, type Entity, IMPORTED_DEFINITION, type Kind, fileBytes, isImported } from './layout.ts';
import type { ServerEntity } from './read-server.ts';

/**
 * One step of a plan. `create` and `update` carry the document to send; `update` and `delete` the
 * version read from the server (sent as If-Match). A policy created `withTenant` travels in the
 * tenant's POST. `note`s change nothing: they say what apply leaves alone and why.
 */
export type Change =
  | { op: 'create'; kind: Kind; path: string; key: string; tenant?: string; doc: Record<string, unknown>; withTenant?: boolean; version?: number }
  | { op: 'update'; kind: Kind; path: string; key: string; tenant?: string; doc: Record<string, unknown>; before: Record<string, unknown>; version: number }
  | { op: 'delete'; kind: Kind; path: string; key: string; tenant?: string; before: Record<string, unknown>; version: number }
  | { op: 'note'; kind: Kind; path: string; message: string };

const same = (a: unknown, b: unknown) => fileBytes(a) === fileBytes(b);
const asTool = (d: Record<string, unknown>) => d as unknown as Tool;

/**
 * What an imported tool's PUT must carry: its definition as the server has it (apply never edits
 * what the MCP server says), every other field as the file says, and its status unless the server
 * holds it in quarantine or marks it removed (only an admin's approval changes that).
 */
function importedToolBody(file: Record<string, unknown>, server: Record<string, unknown>): { doc: Record<string, unknown>; note?: string } {
  const doc: Record<string, unknown> = { id: server.id };
  for (const k of IMPORTED_DEFINITION) if (server[k] !== undefined) doc[k] = server[k];
  for (const [k, v] of Object.entries(file)) if (k !== 'id' && !(IMPORTED_DEFINITION as readonly string[]).includes(k)) doc[k] = v;
  const held = asTool(server).status === 'quarantined' || asTool(server).status === 'removed';
  let note: string | undefined;
  if (held) {
    if (asTool(file).status !== asTool(server).status)
      note = `status stays ${asTool(server).status}: an imported tool leaves quarantine only through approval (console or POST /v1/tools/${server.id}/approve)`;
    doc.status = server.status;
  }
  for (const k of IMPORTED_DEFINITION) {
    if (!same(file[k] ?? null, server[k] ?? null) && k !== 'source')
      note ??= `its definition (${k}) differs from what MCP server ${asTool(server).source?.server} offers; apply leaves the definition to the server`;
  }
  return { doc, note };
}

/** Groups in an order where every included group comes before the groups that include it. */
function includeOrder(changes: Change[], includesOf: (c: Change) => string[]): Change[] {
  const byKey = new Map(changes.map((c) => [c.path.slice('groups/'.length, -'.json'.length), c]));
  const out: Change[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (key: string) => {
    const c = byKey.get(key);
    if (!c || state.get(key)) return;
    state.set(key, 'visiting');
    for (const inc of includesOf(c)) visit(inc);
    state.set(key, 'done');
    out.push(c);
  };
  for (const key of [...byKey.keys()].sort()) visit(key);
  return out;
}

/**
 * The changes that make the server match the directory, in an order where references resolve:
 * creates and updates kind by kind (states, groups — included ones first —, MCP servers, tools,
 * tenants, policies, grants, tests), then, with `prune`, deletions in the reverse order. An
 * unchanged entity yields nothing, so applying the same directory twice plans nothing.
 */
export function planChanges(desired: Map<string, Entity>, current: Map<string, ServerEntity>, opts: { prune: boolean }): Change[] {
  const forward: Change[] = [];
  const backward: Change[] = [];
  const newTenants = new Set<string>();
  for (const e of desired.values()) if (e.kind === 'tenant' && !current.has(e.path)) newTenants.add(e.key);

  for (const want of desired.values()) {
    const have = current.get(want.path);
    const base = { kind: want.kind, path: want.path, key: want.key, ...(want.tenant ? { tenant: want.tenant } : {}) };
    if (want.kind === 'tool' && (have ? isImported(have.doc) : isImported(want.doc))) {
      if (!have) {
        forward.push({
          op: 'note',
          kind: 'tool',
          path: want.path,
          message: `not on the server: imported tools arrive by syncing MCP server ${asTool(want.doc).source?.server} (POST /v1/mcp-servers/${asTool(want.doc).source?.server}/sync); apply never creates one`,
        });
        continue;
      }
      const { doc, note } = importedToolBody(want.doc, have.doc);
      if (note) forward.push({ op: 'note', kind: 'tool', path: want.path, message: note });
      if (!same(doc, have.doc)) forward.push({ op: 'update', ...base, doc, before: have.doc, version: have.version });
      continue;
    }
    if ((want.kind === 'policy' || want.kind === 'tests') && newTenants.has(want.key)) {
      // A new tenant's policy is sent with it; its tests start empty at version 1.
      if (want.kind === 'policy') forward.push({ op: 'create', ...base, doc: want.doc, withTenant: true });
      else if ((want.doc.tests as unknown[]).length) forward.push({ op: 'create', ...base, doc: want.doc, version: 1 });
      continue;
    }
    if (!have) forward.push({ op: 'create', ...base, doc: want.doc });
    else if (!same(want.doc, have.doc)) forward.push({ op: 'update', ...base, doc: want.doc, before: have.doc, version: have.version });
  }

  if (opts.prune) {
    const goneTenants = new Set<string>();
    for (const have of current.values()) if (have.kind === 'tenant' && !desired.has(have.path)) goneTenants.add(have.key);
    for (const have of current.values()) {
      if (desired.has(have.path)) continue;
      // A policy and tests exist as long as their tenant does; a deleted tenant takes its grants along.
      if (have.kind === 'policy' || have.kind === 'tests') continue;
      if (have.kind === 'grant' && goneTenants.has(have.tenant!)) continue;
      if (BUILT_IN[have.kind]?.has(have.key)) continue;
      if (have.kind === 'tool' && isImported(have.doc)) {
        backward.push({
          op: 'note',
          kind: 'tool',
          path: have.path,
          message: `kept: an imported tool leaves with its MCP server (or is disabled), never by --prune`,
        });
        continue;
      }
      backward.push({
        op: 'delete',
        kind: have.kind,
        path: have.path,
        key: have.key,
        ...(have.tenant ? { tenant: have.tenant } : {}),
        before: have.doc,
        version: have.version,
      });
    }
  }

  const rank = (c: Change) => APPLY_ORDER.indexOf(c.kind);
  const sortForward = (list: Change[]) => {
    const out: Change[] = [];
    for (const kind of APPLY_ORDER) {
      const ofKind = list.filter((c) => c.kind === kind).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      out.push(...(kind === 'group' ? includeOrder(ofKind, (c) => (c as { doc?: Group }).doc?.includes ?? []) : ofKind));
    }
    return out;
  };
  const deletions = sortForward(backward.filter((c) => c.op === 'delete'));
  const groupDeletes = includeOrder(
    deletions.filter((c) => c.kind === 'group'),
    (c) => (c as unknown as { before: Group }).before.includes ?? [],
  ).reverse();
  const orderedDeletes = [...deletions.filter((c) => c.kind !== 'group'), ...groupDeletes].sort((a, b) => rank(b) - rank(a));
  return [...sortForward(forward), ...orderedDeletes, ...backward.filter((c) => c.op === 'note')];
}

/** A plan as a person reads it: each change with a unified diff for updates, and a summary line. */
export function describePlan(changes: Change[]): string[] {
  const lines: string[] = [];
  for (const c of changes) {
    if (c.op === 'note') {
      lines.push(`note    ${c.path}: ${c.message}`);
      continue;
    }
    if (c.op === 'create' && c.withTenant) {
      lines.push(`create  ${c.path} (sent with its tenant)`);
      continue;
    }
    lines.push(`${c.op.padEnd(7)} ${c.path}`);
    if (c.op === 'update') {
      const patch = structuredPatch(`a/${c.path}`, `b/${c.path}`, fileBytes(c.before), fileBytes(c.doc), '', '', { context: 2 });
      for (const h of patch.hunks) {
        lines.push(`    @@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
        for (const l of h.lines) lines.push(`    ${l}`);
      }
    }
  }
  const count = (op: Change['op']) => changes.filter((c) => c.op === op).length;
  lines.push(
    changes.some((c) => c.op !== 'note')
      ? `Plan: ${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete.`
      : 'No changes: the server matches the directory.',
  );
  return lines;
}
