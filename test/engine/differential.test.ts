// SDK index = node-casbin: on randomized inventories, policies and requests, the runtime's
// precompiled allow/deny verdict equals Casbin's enforce() over the bundle's own model and rows.
import { describe, expect, it } from 'vitest';
import type { TenantPolicy, Tool } from '../../policy-schemas/types.gen.ts';
import { evaluate, policyAllows } from '../../runtime/evaluate.ts';
import { globMatches } from '../../runtime/glob.ts';
import { createTenantEnforcer } from '../../server/policy-engine/enforcer.ts';
import { FileAdapter, type Enforcer, newEnforcer } from 'casbin';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BundleCasbin } from '../../policy-schemas/types.gen.ts';
import { rng } from '../support/seeded-random.ts';
import { build, snapshot, tool } from './build.ts';

const NAMESPACES = ['core', 'mcp__github', 'mcp__fs', 'host'];
const ODD_SUBJECTS = ['user:alice@example.com', 'agent:a/b|c+d=e~f!g$h%i&j*k?l^m;n[o]p{q}r<s>t`u', 'user:ünïcødé-名前', 'svc:role:x', 'x:-1.5e3'];
const WORDS = ['get', 'list', 'read', 'write', 'delete', 'issue', 'file', 'pr', 'run', 'x', 'get_issue', 'read_file'];

function randomTenant(seed: number) {
  const r = rng(seed);
  const ids = new Set<string>();
  const toolCount = 5 + r.int(40);
  while (ids.size < toolCount) ids.add(`${r.pick(NAMESPACES)}__${r.pick(WORDS)}${r.next() < 0.5 ? `_${r.pick(WORDS)}` : ''}`);
  const statuses: Tool['status'][] = ['active', 'active', 'active', 'quarantined', 'disabled', 'removed'];
  const tools = [...ids].map((id) => tool(id, { status: r.pick(statuses), ...(r.next() < 0.1 ? { redaction: undefined } : {}) }));
  const idList = [...ids];
  // An exact id naming an active tool without redaction is a compile error, so exact ids avoid those.
  const exact = tools.filter((t) => t.redaction || t.status !== 'active').map((t) => t.id);
  // Globs of every shape: exact ids, prefixes, leading/middle/multiple stars, bare star, no match.
  const glob = (): string => {
    const id = r.pick(idList);
    switch (r.int(8)) {
      case 0:
        return exact.length > 0 ? r.pick(exact) : `${id}*`;
      case 1:
        return `${id.slice(0, 1 + r.int(id.length - 1))}*`;
      case 2:
        return `*${id.slice(r.int(id.length))}`;
      case 3: {
        const i = r.int(id.length);
        return `${id.slice(0, i)}*${id.slice(i + r.int(id.length - i))}`;
      }
      case 4:
        return `*${r.pick(WORDS)}*`;
      case 5:
        return `${r.pick(NAMESPACES)}__*_${r.pick(WORDS)}`;
      case 6:
        return r.next() < 0.2 ? '*' : `${r.pick(NAMESPACES)}__*`;
      default:
        return 'zz__nomatch*';
    }
  };
  const roleNames = Array.from({ length: 1 + r.int(5) }, (_, i) => `role${i}`);
  const roles: NonNullable<TenantPolicy['roles']> = {};
  for (const name of roleNames) {
    roles[name] = {
      groups: ['*'],
      allow: [...new Set(Array.from({ length: r.int(5) }, glob))],
      deny: [...new Set(Array.from({ length: r.int(3) }, glob))],
      requireApproval: [],
    };
  }
  const subjects = Array.from({ length: 2 + r.int(8) }, (_, i) => `agent:s${i}`);
  const bindings: Record<string, string[]> = {};
  for (const s of subjects) if (r.next() < 0.85) bindings[s] = r.some(roleNames, 3);
  // Also a subject literally called like a role, and subjects with every kind of character the
  // schema lets a subject hold (they must survive a CSV policy file in any language).
  bindings.role0 = r.some(roleNames, 2);
  for (const s of ODD_SUBJECTS) if (r.next() < 0.7) bindings[s] = r.some(roleNames, 2);
  const tenant = `t${seed}`;
  return { tenant, tools, roles, bindings, subjects: [...subjects, 'role0', ...ODD_SUBJECTS, 'agent:unbound', `role:${roleNames[0]}`] };
}

/**
 * node-casbin's own file adapter over a real model file and a real CSV policy file, each row
 * written as the plain `a, b, c` line any Casbin port reads (no quoting needed).
 */
async function fileEnforcer(casbin: BundleCasbin): Promise<Enforcer> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-casbin-'));
  try {
    writeFileSync(join(dir, 'model.conf'), casbin.model);
    writeFileSync(join(dir, 'policy.csv'), `${casbin.policy.map((row) => row.join(', ')).join('\n')}\n`);
    const e = await newEnforcer(join(dir, 'model.conf'), new FileAdapter(join(dir, 'policy.csv')));
    // What the file held, read back, is exactly the bundle's rows.
    const read = [...(await e.getPolicy()).map((r) => ['p', ...r]), ...(await e.getGroupingPolicy()).map((r) => ['g', ...r])];
    expect(read.map((r) => JSON.stringify(r)).sort()).toEqual(casbin.policy.map((r) => JSON.stringify(r)).sort());
    expect(readFileSync(join(dir, 'policy.csv'), 'utf8').split('\n').filter(Boolean)).toHaveLength(casbin.policy.length);
    return e;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('SDK index against node-casbin', () => {
  it('R2.5 R6.9 R6.10 agrees with enforce() on at least 10,000 randomized queries', async () => {
    let queries = 0;
    let allowed = 0;
    for (let seed = 1; queries < 10_000 || seed <= 60; seed++) {
      const t = randomTenant(seed);
      const loaded = build(snapshot({ tenant: t.tenant, tools: t.tools, policy: { roles: t.roles, bindings: t.bindings } }));
      const casbin = loaded.bundle.casbin;
      const enforcer = await createTenantEnforcer(t.tenant, loaded.revision, casbin);
      // As another language loads it: model and rows written to files, rows as plain CSV lines.
      const fromFile = seed <= 20 ? await fileEnforcer(casbin) : null;
      for (const subject of t.subjects) {
        for (const { id } of loaded.tools) {
          const sdk = policyAllows(loaded, subject, id);
          const reference = enforcer.allows(subject, id);
          if (sdk !== reference) {
            throw new Error(
              `seed ${seed}: ${subject} → ${id}: sdk ${sdk}, casbin ${reference}\n${JSON.stringify({ roles: t.roles, bindings: t.bindings[subject] })}`,
            );
          }
          if (fromFile && fromFile.enforceSync(subject, t.tenant, id, 'call') !== sdk) {
            throw new Error(`seed ${seed}: ${subject} → ${id}: sdk ${sdk}, casbin from the CSV file ${!sdk}`);
          }
          // And both agree with the glob semantics written out longhand.
          const roles = Object.hasOwn(t.bindings, subject) ? t.bindings[subject] : [];
          const denied = roles.some((name) => t.roles[name].deny!.some((g) => globMatches(g, id)));
          const allow = roles.some((name) => t.roles[name].allow!.some((g) => globMatches(g, id)));
          expect(sdk, `seed ${seed}: ${subject} → ${id}`).toBe(!denied && allow);
          if (sdk) allowed++;
          queries++;
        }
        // evaluate's denied/not_allowed reasons mean exactly "Casbin says no" for a visible-by-group tool.
        const result = evaluate(loaded, { subject, groups: ['*'] });
        for (const f of result.filtered) {
          if (f.reason === 'denied' || f.reason === 'not_allowed') expect(enforcer.allows(subject, f.id)).toBe(false);
        }
        for (const v of result.tools) expect(enforcer.allows(subject, v.id)).toBe(true);
      }
    }
    expect(queries).toBeGreaterThanOrEqual(10_000);
    // The generator must exercise both answers, not only one.
    expect(allowed).toBeGreaterThan(queries * 0.1);
    expect(allowed).toBeLessThan(queries * 0.9);
  });

  it('R2.5 uses only g() and keyMatch in the emitted model, and prefix-or-exact patterns in its rows', () => {
    const t = randomTenant(7);
    const loaded = build(snapshot({ tenant: t.tenant, tools: t.tools, policy: { roles: t.roles, bindings: t.bindings } }));
    const matcher = loaded.bundle.casbin.model.split('\n').find((l) => l.startsWith('m ='))!;
    expect(matcher.match(/\b[A-Za-z]+(?=\()/g)).toEqual(['g', 'keyMatch']);
    for (const row of loaded.bundle.casbin.policy.filter((p) => p[0] === 'p')) {
      expect(row[3]).toMatch(/^[^*]*\*?$/);
    }
    expect(loaded.bundle.casbin.request).toEqual(['subject', 'tenant', 'toolId', 'call']);
  });
});
