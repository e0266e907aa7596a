// The attack: a bundle whose signer is hostile or buggy carries member names that reshape
// JavaScript objects (`__proto__`, `constructor`, `prototype`) or that every object inherits
// (`toString`, `hasOwnProperty`). A tool entry's `__proto__` member must not become the prototype
// of the tool's definition (its members would then be read through it), and such names for roles,
// subjects, groups, states, profiles, facts and schema properties are plain names (docs/spec.md
// R1.1, R14.7): the runtime answers for them exactly as for any other name.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { createView, decide } from '../../runtime/decide.ts';
import { evaluate } from '../../runtime/evaluate.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { verifyBundle } from '../../runtime/verify-bundle.ts';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { paramHeaderMismatch, paramHeaders } from '../../gateway/param-headers.ts';
import { jwksOf, makeBundle, makeKey, revisionOf, signBytes } from '../distribution/signed-bundles.ts';

/** makeBundle's bundle with `member` text inserted first in its first tool entry (JSON text: a literal cannot hold an own `__proto__`). */
function bundleWithToolMember(member: string): Bundle {
  const text = canonicalJson(makeBundle({ tenant: 'acme', version: 1 })).replace('{"definitionHash":', `{${member},"definitionHash":`);
  const doc = JSON.parse(text) as Bundle;
  doc.revision = revisionOf(doc);
  return doc;
}

describe('a tool entry carrying __proto__', () => {
  it('keeps the tool definition an ordinary object: nothing is read through a prototype the bundle chose', () => {
    const bundle = bundleWithToolMember('"__proto__":{"outputSchema":{"type":"object"},"requiresConnection":true,"polluted":1}');
    const tool = loadBundle(bundle).tools[0];
    const def = tool.def as unknown as Record<string, unknown>;
    expect(Object.getPrototypeOf(def)).toBe(Object.prototype);
    expect(def.outputSchema).toBeUndefined();
    expect(def.polluted).toBeUndefined();
    expect(def.requiresConnection).toBe(false);
    expect(Object.hasOwn(def, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  for (const name of ['__proto__', 'constructor', 'prototype']) {
    it(`refuses a signed bundle whose tool entry has ${name}, naming its pointer`, async () => {
      const key = await makeKey();
      const bundle = bundleWithToolMember(`"${name}":{"requiresConnection":true}`);
      const text = canonicalJson(bundle);
      const r = await verifyBundle(text, await signBytes(text, key), { trustedKeys: jwksOf(key) as never, tenant: 'acme' });
      expect(r).toMatchObject({ ok: false, code: 'malformed' });
      expect(r.ok ? '' : r.message).toContain(`/catalog/tools/0/${name}`);
    });
  }
});

// One policy, written twice: with names JavaScript objects inherit or treat specially, and with
// plain names in their places. The runtime must answer the same, name for name.
const ODD = {
  role: 'isPrototypeOf',
  subject: 'toString',
  group: 'prototype',
  state: 'hasOwnProperty',
  profile: 'valueOf',
  fact: '__proto__',
  prop: 'constructor',
};
const PLAIN = { role: 'role-a', subject: 'agent:a', group: 'group-a', state: 'state-a', profile: 'profile-a', fact: 'fact-a', prop: 'prop-a' };
type Names = typeof ODD;

function policyBundle(n: Names): Bundle {
  const schema = {
    type: 'object',
    required: ['q'],
    properties: { q: { type: 'string' }, [n.prop]: { type: 'string', pattern: '^ok$', 'x-mcp-header': 'Route' } },
  };
  const tool = (id: string, extra: Record<string, unknown>) => ({
    id,
    description: id,
    inputSchema: schema,
    effect: 'read_only',
    redaction: { allow: ['result'] },
    source: { kind: 'core' },
    definitionHash: `sha256:${'0'.repeat(64)}`,
    ...extra,
  });
  return {
    format: 'toolgate.bundle/v2',
    tenant: 'acme',
    version: 1,
    revision: `sha256:${'0'.repeat(64)}`,
    previousRevision: null,
    issuedAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2099-01-01T00:00:00.000Z',
    catalog: {
      tools: [
        tool('core__a-gated', { groups: [n.group], requires: [{ fact: n.fact, in: ['ready'] }] }),
        tool('core__b-in-state', { groups: [n.group], availableInStates: [n.state] }),
        tool('core__c-profiled', { groups: [n.group] }),
        tool('core__d-constrained', { groups: [n.group], effect: 'state_change' }),
      ],
      groups: [{ name: 'default' }, { name: n.group, includes: ['default'] }],
      states: [{ name: 'undefined' }, { name: n.state }],
    },
    policy: {
      roles: {
        [n.role]: {
          groups: [n.group],
          allow: ['core__*'],
          constraints: [
            { tools: ['core__d-constrained'], otherwise: 'require_approval', arguments: { required: [n.prop] }, reason: 'needs the routed member' },
          ],
        },
      },
      bindings: { [n.subject]: [n.role] },
      profiles: { [n.profile]: { enable: ['core__c-profiled'] } },
      bundleTtlSeconds: 86400,
    },
    casbin: { model: '', policy: [], request: [] },
    conformance: [],
  } as unknown as Bundle;
}

/** The answer written with plain names in place of the odd ones. */
function plainly(value: unknown): unknown {
  let text = JSON.stringify(value);
  for (const k of Object.keys(ODD) as (keyof Names)[]) text = text.replaceAll(JSON.stringify(ODD[k]), JSON.stringify(PLAIN[k]));
  return JSON.parse(text);
}

describe('names JavaScript objects inherit are plain names in a bundle', () => {
  const odd = loadBundle(policyBundle(ODD));
  const plain = loadBundle(policyBundle(PLAIN));
  const request = (n: Names, over: Record<string, unknown> = {}) => ({ subject: n.subject, groups: [n.group], ...over });
  const requests: Array<[string, (n: Names) => Record<string, unknown>]> = [
    ['no facts, no state, no profile', (n) => request(n)],
    ['the fact given', (n) => request(n, { facts: JSON.parse(`{${JSON.stringify(n.fact)}:"ready"}`) })],
    ['the state and the profile named', (n) => request(n, { state: n.state, profile: n.profile })],
    ['a subject bound to nothing', (n) => ({ subject: n === ODD ? 'hasOwnProperty' : 'agent:none' })],
    ['a group not permitted', (n) => ({ subject: n.subject, groups: [n.state] })],
  ];
  for (const [what, make] of requests) {
    it(`evaluates a request with ${what} as with plain names`, () => {
      const got = evaluate(odd, make(ODD) as never);
      expect(plainly(got)).toEqual(evaluate(plain, make(PLAIN) as never));
      expect(got.roles.length + got.tools.length + got.filtered.length).toBeGreaterThan(0);
    });
  }

  it('applies a constraint that requires a member named constructor as it applies one naming any member', () => {
    const call = (args: Record<string, unknown>) => ({ toolCallId: 'c1', name: 'core__d-constrained', arguments: args });
    for (const args of [{ q: 'x' }, JSON.parse(`{"q":"x",${JSON.stringify(ODD.prop)}:"ok"}`)]) {
      const got = decide(createView(odd, request(ODD) as never), call(args));
      const plainArgs = plainly(args) as Record<string, unknown>;
      expect(plainly(got)).toEqual(decide(createView(plain, request(PLAIN) as never), call(plainArgs)));
    }
    // Without the member the call needs a person; `{}` has no own `constructor`.
    expect(decide(createView(odd, request(ODD) as never), call({ q: 'x' })).decision).toBe('require_approval');
  });

  it('gives the gateway no Mcp-Param header for a property named constructor that the call does not carry, and refuses none', () => {
    const schema = odd.byId.get('core__d-constrained')!.def!.inputSchema;
    expect(paramHeaders(schema, { q: 'x' })).toEqual({});
    expect(paramHeaderMismatch(schema, { q: 'x' }, {})).toBeNull();
    expect(paramHeaders(schema, JSON.parse('{"q":"x","constructor":"ok"}'))).toEqual({ 'mcp-param-route': 'ok' });
  });
});

describe('a gateway configuration carrying __proto__', () => {
  it('is refused naming the pointer, never read through as the client its prototype describes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-proto-config-'));
    try {
      writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', kid: 'k1' }] }));
      const control = { url: 'http://127.0.0.1:8787', tenant: 'acme', token: 't', jwksFile: 'jwks.json', cacheDir: 'cache' };
      const text = `{"control": ${JSON.stringify(control)}, "listen": {"http": {"port": 0}}, "upstreams": {},
        "clients": [{"name": "desk", "key": "desk-key-0123456789abcdef", "__proto__": {"subject": "agent:admin-bot", "groups": ["*"]}}]}`;
      writeFileSync(join(dir, 'config.json'), text);
      const r = await loadGatewayConfig(join(dir, 'config.json'), {});
      expect(r.ok).toBe(false);
      expect(r.ok ? [] : r.problems.map((p) => p.pointer)).toContain('/clients/0/__proto__');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
