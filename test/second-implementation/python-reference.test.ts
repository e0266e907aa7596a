// docs/reference-python is a second implementation of docs/spec.md, written from the spec alone.
// Here it reproduces every golden and sample bundle's own conformance vectors, and answers
// randomized requests, calls, schemas and redactions as the TypeScript runtime does. A difference
// is a defect in the spec or in one of the two implementations, never a tolerance.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, EvaluationRequest, Tool, VectorCall } from '../../policy-schemas/types.gen.ts';
import { createView, decide, type ToolCall } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { planBatch } from '../../runtime/plan-batch.ts';
import { redact } from '../../runtime/redact.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { checkInputSchema } from '../../server/validation/input-schema.ts';
import { randomCall, randomRequest, randomTenant, rng } from '../conformance/tenants.ts';
import { build, ISSUED_AT, tool } from '../engine/build.ts';
import { randomInputSchema } from '../support/random-input-schema.ts';
import type { Rng } from '../support/seeded-random.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
// More calls to hunt for disagreements locally: TOOLGATE_DIFFERENTIAL_CALLS=20000.
const DIALECT_CALLS = Number(process.env.TOOLGATE_DIFFERENTIAL_CALLS ?? 1500);
const PYTHON = '/usr/bin/python3';

/** The reference as a child process speaking JSON lines, one answer per request, in order. */
class Reference {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = '';

  constructor() {
    this.child = spawn(PYTHON, ['-m', 'toolgate_reference'], {
      cwd: join(root, 'docs/reference-python'),
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    this.child.stderr.on('data', (d) => {
      this.stderr += String(d);
    });
  }

  async ask<T>(request: Record<string, unknown>): Promise<T> {
    const line = await new Promise<string>((resolve, reject) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${JSON.stringify(request)}\n`, (e) => e && reject(e));
      this.child.once('exit', () => reject(new Error(`the reference exited: ${this.stderr}`)));
    });
    const answer = JSON.parse(line) as { ok: boolean; value?: T; error?: string; trace?: string };
    if (!answer.ok) throw new Error(`the reference failed on ${String(request.op)}: ${answer.error}\n${answer.trace}`);
    return answer.value as T;
  }

  close(): void {
    this.child.stdin.end();
  }
}

let ref: Reference;
beforeAll(() => {
  ref = new Reference();
});
afterAll(() => ref.close());

let loads = 0;
async function load(bundle: unknown): Promise<string> {
  const id = `b${loads++}`;
  await ref.ask({ op: 'load', id, bundle });
  return id;
}

type PyDecision = { toolCallId: string; decision: string; errorCode?: string; errors?: string[]; constraint?: unknown };

/** The TypeScript answer and the reference's agree: same decision, code and constraint; every normative pointer present. */
function expectSameDecision(ts: ReturnType<typeof decide>, py: PyDecision, what: string) {
  expect({ decision: py.decision, errorCode: py.errorCode, constraint: py.constraint }, what).toEqual({
    decision: ts.decision,
    errorCode: ts.errorCode,
    constraint: ts.constraint,
  });
  const tsPointers = (ts.errors ?? []).map((e) => e.pointer);
  for (const p of py.errors ?? []) expect(tsPointers, `${what}: normative pointer ${p}`).toContain(p);
  // R7.10's pointers are all normative and in document order.
  if (ts.errors && ts.message?.includes('hold a connectionId')) expect(tsPointers, what).toEqual(py.errors);
}

const EVERY_CORE_TOOL = { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } };
const AGENT_A = { subject: 'agent:a', groups: ['*'], at: ISSUED_AT };

/**
 * One tool `core__t` taking `inputSchema`, loaded in both implementations: the returned function
 * decides a call of it with an arguments text in each, checks that they agree (`what` names the
 * case), and returns the reference's answer.
 */
async function schemaDecider(inputSchema: Record<string, unknown>): Promise<(argumentsText: string, what: string) => Promise<PyDecision>> {
  const loaded = build({ tools: [tool('core__t', { inputSchema } as Partial<Tool>)], policy: EVERY_CORE_TOOL });
  const id = await load(loaded.bundle);
  const view = createView(loaded, AGENT_A);
  return async (argumentsText, what) => {
    const call = { toolCallId: 'c', name: 'core__t', arguments: argumentsText };
    const py = await ref.ask<PyDecision>({ op: 'decide', id, request: AGENT_A, call });
    expectSameDecision(decide(view, call), py, what);
    return py;
  };
}

/**
 * Which of `patterns` are valid RE2, asked of both implementations through the `regex` format
 * (a pattern RE2 refuses cannot stand in a schema); they must agree on each. The valid ones.
 */
async function validPatterns(patterns: string[]): Promise<string[]> {
  const loaded = build({
    tools: [tool('core__regex', { inputSchema: { type: 'object', properties: { r: { type: 'string', format: 'regex' } } } })],
    policy: EVERY_CORE_TOOL,
  });
  const id = await load(loaded.bundle);
  const view = createView(loaded, AGENT_A);
  const valid: string[] = [];
  for (const pattern of patterns) {
    const call = { toolCallId: 'c', name: 'core__regex', arguments: JSON.stringify({ r: pattern }) };
    const ts = decide(view, call);
    expectSameDecision(ts, await ref.ask<PyDecision>({ op: 'decide', id, request: AGENT_A, call }), `format regex ${JSON.stringify(pattern)}`);
    if (ts.decision === 'allow') valid.push(pattern);
  }
  return valid;
}

/**
 * Every pattern of `valid` as property p<i> of one tool, to be matched against a string all at
 * once: for a string, the properties (pointers `/p<i>`) each implementation refuses it in.
 */
async function patternRefusers(valid: string[]): Promise<(text: string) => Promise<{ ts: Set<string>; py: Set<string> }>> {
  const matching = build({
    tools: [
      tool('core__match', { inputSchema: { type: 'object', properties: Object.fromEntries(valid.map((p, i) => [`p${i}`, { type: 'string', pattern: p }])) } }),
    ],
    policy: EVERY_CORE_TOOL,
  });
  const id = await load(matching.bundle);
  const view = createView(matching, AGENT_A);
  return async (text) => {
    const call = { toolCallId: 'c', name: 'core__match', arguments: JSON.stringify(Object.fromEntries(valid.map((_, i) => [`p${i}`, text]))) };
    const ts = new Set((decide(view, call).errors ?? []).map((e) => e.pointer));
    const py = new Set((await ref.ask<PyDecision>({ op: 'decide', id, request: AGENT_A, call })).errors ?? []);
    return { ts, py };
  };
}

const goldenDir = join(root, 'test/fixtures/compile');
const sampleDir = join(root, 'test/fixtures/bundle-v1');
const bundleFiles = [
  ...readdirSync(goldenDir)
    .filter((f) => f.endsWith('.golden.json'))
    .map((f) => join(goldenDir, f)),
  ...readdirSync(sampleDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(sampleDir, f)),
];

describe('the Python reference reproduces every bundle’s own conformance vectors', () => {
  for (const file of bundleFiles) {
    it(file.slice(root.length + 1), async () => {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { ok?: boolean; bundle?: Bundle } & Bundle;
      if (doc.ok === false) return expect(doc.bundle).toBeUndefined();
      const bundle = (doc.bundle ?? doc) as Bundle;
      expect(bundle.conformance.length).toBeGreaterThan(0);
      const id = await load(bundle);
      expect(await ref.ask({ op: 'vectors', id, vectors: bundle.conformance })).toEqual([]);
    });
  }
});

describe('the Python reference refuses the bundles the TypeScript runtime refuses to load (R2.3, R2.7, R2.9)', () => {
  const read = (file: string) => {
    const doc = JSON.parse(readFileSync(join(root, file), 'utf8')) as { bundle?: unknown };
    return (doc.bundle ?? doc) as Record<string, any>;
  };
  const v2 = () => read('test/fixtures/compile/demo-acme-research.golden.json');
  const v1 = () => read('test/fixtures/bundle-v1/demo-acme-research.json');
  const cases: Array<[string, () => Record<string, any>]> = [
    [
      'a tool with both inputSchema and inputSchemaRef',
      () => {
        const b = v2();
        const t = b.catalog.tools.find((x: Record<string, unknown>) => 'inputSchemaRef' in x);
        t.inputSchema = { type: 'object' };
        return b;
      },
    ],
    [
      'a tool naming a shared schema the table does not have',
      () => {
        const b = v2();
        b.catalog.tools.find((x: Record<string, unknown>) => 'inputSchemaRef' in x).inputSchemaRef = 99;
        return b;
      },
    ],
    [
      'a binding to a role policy.roles does not define',
      () => {
        const b = v2();
        b.policy.bindings['agent:ghost'] = ['no-such-role'];
        return b;
      },
    ],
    [
      'a group including a group the catalog does not have',
      () => {
        const b = v2();
        b.catalog.groups[0].includes = ['no-such-group'];
        return b;
      },
    ],
    [
      'a v1 bundle with empty policy.roles and a full index.roles',
      () => {
        const b = v1();
        b.policy.roles = {};
        b.policy.bindings = {};
        return b;
      },
    ],
    [
      'a v1 bundle whose index allows one more tool',
      () => {
        const b = v1();
        const role = (Object.values(b.index.roles) as { allow: string[] }[]).find((r) => r.allow.length < b.index.tools.length);
        if (!role) throw new Error('the fixture has no role allowing fewer than every tool');
        role.allow = [...new Set([...role.allow, ...b.index.tools])].sort();
        return b;
      },
    ],
  ];
  for (const [what, make] of cases) {
    it(what, async () => {
      const bundle = make();
      expect(() => loadBundle(bundle as Bundle)).toThrow();
      await expect(load(bundle)).rejects.toThrow(/ValueError|IndexError|KeyError/);
    });
  }

  it('and loads the unmutated ones', async () => {
    for (const b of [v1(), v2()]) {
      expect(() => loadBundle(b as Bundle)).not.toThrow();
      await load(b);
    }
  });
});

describe('the Python reference answers as the TypeScript runtime does', () => {
  it('on randomized tenants: every evaluate answer, every decide answer', async () => {
    let requests = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const compiled = compileBundle(randomTenant(seed), { version: 1, previousRevision: null, issuedAt: ISSUED_AT });
      if (!compiled.ok) throw new Error(`seed ${seed}: ${JSON.stringify(compiled.errors)}`);
      const bundle = JSON.parse(compiled.text) as Bundle;
      const id = await load(bundle);
      expect(await ref.ask({ op: 'vectors', id, vectors: bundle.conformance }), `seed ${seed}`).toEqual([]);
      const loaded = loadBundle(bundle);
      const r = rng(seed * 7919);
      for (let i = 0; i < 25; i++) {
        const request: EvaluationRequest = randomRequest(r, bundle);
        const view = createView(loaded, request);
        expect(await ref.ask({ op: 'evaluate', id, request }), `seed ${seed} request ${JSON.stringify(request)}`).toEqual(view.result);
        const call: VectorCall = randomCall(r, bundle);
        const py = await ref.ask<PyDecision>({ op: 'decide', id, request, call });
        expectSameDecision(decide(view, call), py, `seed ${seed} ${JSON.stringify(request)} ${JSON.stringify(call)}`);
        requests++;
      }
    }
    expect(requests).toBe(750);
  });

  it('on randomized batches: the same plan, derived call ids included (R9.3, arguments as text or as a value)', async () => {
    let batches = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const compiled = compileBundle(randomTenant(seed), { version: 1, previousRevision: null, issuedAt: ISSUED_AT });
      if (!compiled.ok) throw new Error(`seed ${seed}`);
      const bundle = JSON.parse(compiled.text) as Bundle;
      const id = await load(bundle);
      const loaded = loadBundle(bundle);
      const r = rng(seed * 31);
      for (let i = 0; i < 10; i++) {
        const request = randomRequest(r, bundle);
        const calls = Array.from({ length: 1 + r.int(5) }, () => {
          const call: ToolCall = randomCall(r, bundle);
          if (r.chance(0.6)) delete call.toolCallId;
          if (typeof call.arguments === 'string' && r.chance(0.4)) {
            try {
              call.arguments = JSON.parse(call.arguments) as Record<string, unknown>;
            } catch {
              // Not JSON: stays text.
            }
          }
          return call;
        });
        const ts = planBatch(createView(loaded, request), calls);
        const py = await ref.ask<{ rejected: PyDecision[]; groups: unknown[] }>({ op: 'plan', id, request, calls });
        const what = `seed ${seed} ${JSON.stringify(request)} ${JSON.stringify(calls)}`;
        expect(py.groups, what).toEqual(ts.groups);
        expect(
          py.rejected.map((d) => [d.toolCallId, d.decision, d.errorCode]),
          what,
        ).toEqual(ts.rejected.map((d) => [d.toolCallId, d.decision, d.errorCode]));
        batches++;
      }
    }
    expect(batches).toBe(200);
  });

  it('on randomized input schemas and arguments: the same decisions, every normative pointer present', async () => {
    let calls = 0;
    let pointers = 0;
    const outcomes: Record<string, number> = {};
    for (let seed = 1; calls < 1200; seed++) {
      const r = rng(seed);
      const inputSchema = randomInputSchema(r);
      // Some random schemas are not valid JSON Schema (a repeated enum value): no bundle holds those.
      if (checkInputSchema(inputSchema).length > 0) continue;
      const decideBoth = await schemaDecider(inputSchema);
      for (let i = 0; i < 20; i++) {
        const args = JSON.stringify(randomArguments(r, inputSchema));
        const py = await decideBoth(args, `seed ${seed} schema ${JSON.stringify(inputSchema)} arguments ${args}`);
        outcomes[py.errorCode ?? py.decision] = (outcomes[py.errorCode ?? py.decision] ?? 0) + 1;
        pointers += py.errors?.length ?? 0;
        calls++;
      }
    }
    expect(calls).toBe(1200);
    // Both ways, often: a differential where everything is allowed (or refused) proves little.
    expect(outcomes.allow).toBeGreaterThan(150);
    expect(outcomes.validation).toBeGreaterThan(150);
    expect(pointers).toBeGreaterThan(300);
  });

  it(
    'on schemas using the whole dialect: combinators, conditionals, references, RE2 patterns, formats',
    async () => {
      let calls = 0;
      let pointers = 0;
      const outcomes: Record<string, number> = {};
      for (let seed = 1; calls < DIALECT_CALLS; seed++) {
        const r = rng(100_000 + seed);
        const inputSchema = dialectSchema(r);
        const problems = checkInputSchema(inputSchema);
        if (problems.length > 0) throw new Error(`seed ${seed}: the generator wrote a schema the judge refuses: ${JSON.stringify(problems)}`);
        const decideBoth = await schemaDecider(inputSchema);
        for (let i = 0; i < 15; i++) {
          const args = JSON.stringify(dialectArguments(r));
          const py = await decideBoth(args, `seed ${seed} schema ${JSON.stringify(inputSchema)} arguments ${args}`);
          outcomes[py.errorCode ?? py.decision] = (outcomes[py.errorCode ?? py.decision] ?? 0) + 1;
          pointers += py.errors?.length ?? 0;
          calls++;
        }
      }
      // Random arguments rarely meet a random schema of the whole dialect: a few dozen allows is enough.
      expect(outcomes.allow).toBeGreaterThan(40);
      expect(outcomes.validation).toBeGreaterThan(150);
      expect(pointers).toBeGreaterThan(300);
    },
    DIALECT_CALLS * 40,
  );

  it('on RE2 patterns: which are valid, and what each matches (R14.4)', async () => {
    const patterns = [...PATTERN_CASES];
    const valid = await validPatterns(patterns);
    expect(valid.length).toBeGreaterThan(40);
    expect(valid.length).toBeLessThan(patterns.length);
    const refusers = await patternRefusers(valid);
    let matched = 0;
    for (const text of PATTERN_STRINGS) {
      const { ts, py } = await refusers(text);
      expect(
        valid.filter((_, i) => ts.has(`/p${i}`)),
        `string ${JSON.stringify(text)}`,
      ).toEqual(valid.filter((_, i) => py.has(`/p${i}`)));
      matched += valid.length - ts.size;
    }
    expect(matched).toBeGreaterThan(100);
  });

  it('on random patterns built from RE2 tokens: the same validity, the same matches', async () => {
    const TOKENS = [
      'a',
      'b',
      'K',
      'ß',
      'é',
      '.',
      '^',
      '$',
      '\\s',
      '\\d',
      '\\w',
      '\\b',
      '\\B',
      '\\A',
      '\\z',
      '[a-c]',
      '[^a]',
      '[[:alpha:]]',
      '[\\d_]',
      '\\pL',
      '\\PN',
      '(?i)',
      '(?s)',
      '(?m)',
      '(?U)',
      '(?-i)',
      '(',
      ')',
      '(?:',
      '(?P<n>',
      '|',
      '*',
      '+',
      '?',
      '{2}',
      '{1,2}',
      '{,2}',
      '*?',
      '\\Q.*\\E',
      '\\x61',
      '\\u0062',
      '\\n',
      '\\.',
      '[',
      ']',
      '\\',
      '-',
      '{',
      '}',
    ];
    const STRINGS = ['', 'a', 'ab', 'AB', 'aab', 'b\n', '\na', ' ', 'K', '\u212a', 'ß', 'é', '5', '_', '.*', 'abcabc', 'x y', 'a{,2}', 'ba', 'Bb'];
    const r = rng(2024);
    const patterns = [...new Set(Array.from({ length: 400 }, () => Array.from({ length: 1 + r.int(6) }, () => r.pick(TOKENS)).join('')))];
    const valid = await validPatterns(patterns);
    expect(valid.length).toBeGreaterThan(100);
    expect(valid.length).toBeLessThan(patterns.length - 50);
    const refusers = await patternRefusers(valid);
    for (const text of STRINGS) {
      const { ts, py } = await refusers(text);
      const differ = valid.filter((_, i) => ts.has(`/p${i}`) !== py.has(`/p${i}`));
      expect(differ, `string ${JSON.stringify(text)}`).toEqual([]);
    }
  });

  it('on strings mutated around each asserted format (R14.5)', async () => {
    const seeds: Record<string, string[]> = {
      'date-time': ['2024-02-29T23:59:59.123+05:30', '2026-12-31t00:00:00z'],
      date: ['2024-02-29', '2026-04-30'],
      time: ['23:59:59Z', '00:00:00.5-12:00'],
      duration: ['P1Y2M3DT4H5M6S', 'PT36H', 'P2W'],
      email: ['ada.lovelace+x@mail.example.org'],
      hostname: ['a-1.example.org', 'x'],
      ipv4: ['255.255.255.255', '10.0.0.1'],
      ipv6: ['2001:db8::1', '::ffff:192.0.2.1', '1:2:3:4:5:6:7:8'],
      uri: ['https://user@example.com:8080/a/b?c=d&e#f', 'urn:isbn:0451450523', 'mailto:a@b.c'],
      uuid: ['123E4567-e89b-12d3-a456-426614174000'],
      regex: ['^[a-z]+\\d{2}$', '(?i)ab|cd'],
    };
    const formats = Object.keys(seeds);
    const loaded = build({
      tools: [tool('core__f', { inputSchema: { type: 'object', properties: Object.fromEntries(formats.map((f) => [f, { type: 'string', format: f }])) } })],
      policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
    });
    const id = await load(loaded.bundle);
    const request = { subject: 'agent:a', groups: ['*'], at: ISSUED_AT };
    const view = createView(loaded, request);
    const ALPHABET = ['0', '9', '١', ':', '-', '.', 'T', 't', ' ', '\n', 'Z', '+', 'a', 'f', 'g', '@', '/', '%', '[', ']', '60', '00', '#', 'é'];
    const r = rng(777);
    const refused: Record<string, number> = {};
    let calls = 0;
    for (let i = 0; i < 400; i++) {
      const args: Record<string, string> = {};
      for (const f of formats) {
        let v = r.pick(seeds[f]);
        for (let k = r.int(3); k > 0; k--) {
          const at = r.int(v.length + 1);
          const op = r.int(3);
          v =
            op === 0
              ? v.slice(0, at) + r.pick(ALPHABET) + v.slice(at)
              : op === 1
                ? v.slice(0, at) + v.slice(at + 1)
                : v.slice(0, at) + r.pick(ALPHABET) + v.slice(at + 1);
        }
        args[f] = v;
      }
      const call = { toolCallId: 'c', name: 'core__f', arguments: JSON.stringify(args) };
      const ts = decide(view, call);
      const py = await ref.ask<PyDecision>({ op: 'decide', id, request, call });
      expectSameDecision(ts, py, `arguments ${call.arguments}`);
      // Each format's verdict, not only the call's: the pointers name every refused format.
      expect(new Set(py.errors ?? []), `arguments ${call.arguments}`).toEqual(new Set((ts.errors ?? []).map((e) => e.pointer)));
      for (const p of py.errors ?? []) refused[p] = (refused[p] ?? 0) + 1;
      calls++;
    }
    expect(calls).toBe(400);
    for (const f of formats) expect(refused[`/${f}`], f).toBeGreaterThan(20);
  });

  it('on argument texts at the edges of I-JSON and the nesting limit', async () => {
    const loaded = build({
      tools: [tool('core__t', { inputSchema: { type: 'object', properties: { n: { type: 'integer' }, m: { type: 'number', multipleOf: 0.1 } } } })],
      policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
    });
    const id = await load(loaded.bundle);
    const request = { subject: 'agent:a', groups: ['*'], at: ISSUED_AT };
    const view = createView(loaded, request);
    const texts = [
      '{"n":9007199254740991}',
      '{"n":9007199254740992}',
      '{"n":-9007199254740992}',
      '{"n":1e400}',
      '{"n":1e20}',
      '{"n":1.0}',
      '{"m":0.3}',
      '{"m":0.5}',
      '{"a":1,"a":2}',
      '{"a":"\\ud800"}',
      '{"a":"\\ud83d\\ude00"}',
      `{"a":${'['.repeat(63)}${']'.repeat(63)}}`,
      `{"a":${'['.repeat(64)}${']'.repeat(64)}}`,
      `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`,
      `{"a":${'['.repeat(2000)}${']'.repeat(1999)}}`,
      '{"b":{"connectionId":1},"1":{"connectionId":2},"c d":{"connectionId":3}}',
      'NaN',
      '{"n":Infinity}',
      '\ufeff{}',
      ' {} ',
    ];
    for (const text of texts) {
      const call = { toolCallId: 'c', name: 'core__t', arguments: text };
      expectSameDecision(decide(view, call), await ref.ask<PyDecision>({ op: 'decide', id, request, call }), text.slice(0, 80));
    }
  });

  it('on randomized redaction paths and outputs', async () => {
    const PATHS = ['$', '*', 'a', 'a.b', 'a[].x', '$.a', '*.x', 'a[]', '$[].x', 'b.*', 'a[].*', '__proto__', 'toString', 'x*'];
    const r = rng(4242);
    for (let seed = 0; seed < 40; seed++) {
      const allow = [...new Set(r.some(PATHS, 3).concat(r.pick(PATHS)))];
      const loaded = build({ tools: [tool('core__t', { redaction: { allow } })] });
      const id = await load(loaded.bundle);
      for (let i = 0; i < 10; i++) {
        const output = randomOutput(r, 0);
        const ts = redact(loaded, 'core__t', JSON.parse(JSON.stringify(output)));
        const py = await ref.ask({ op: 'redact', id, tool: 'core__t', output });
        expect(py, `paths ${JSON.stringify(allow)} output ${JSON.stringify(output)}`).toEqual(ts === undefined ? null : JSON.parse(JSON.stringify(ts)));
      }
    }
  });
});

// RE2 constructs, ECMAScript spellings R14.4 rewrites, and what RE2 refuses.
const PATTERN_CASES = [
  'a',
  '^a$',
  '^$',
  '.',
  '^.$',
  '(?s)^.$',
  '\\s',
  '^\\s$',
  '\\S',
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\bcat\\b',
  '\\Bat',
  '^[a-z]+$',
  '[^a-z]',
  '(?i)^k$',
  '(?i)[a-z]',
  '(?i)ß',
  '(?i)straße',
  '(?-i:a)',
  '(?i:A)b',
  'a(?i)b',
  '(a(?i)b)c',
  '(?m)^b$',
  '(?m)a$',
  '\\Aa',
  'a\\z',
  '\\Qa.b*\\E',
  '\\Q(\\E',
  '[[:alpha:]]+',
  '[[:^digit:]]',
  '[[:punct:]]',
  '[[:space:]]',
  '\\pL',
  '\\p{Lu}',
  '\\PL',
  '\\p{^Lu}',
  '\\pN',
  '\\p{Nd}',
  '[\\p{Lu}\\d]',
  '\\x41',
  '\\x{e9}',
  '\\x{1F600}',
  '\\u00e9',
  '\\u{1F600}',
  '\\cJ',
  '\\e',
  '\\Z',
  '\\8',
  '\\0',
  '\\012',
  '\\n',
  '\\t',
  '\\v',
  '\\f',
  '[]',
  '[^]',
  '(?<name>a)b',
  '(?P<n>x)y',
  'a{2}',
  'a{2,}',
  'a{,2}',
  'a{1,3}?',
  'a+?',
  '(?U)a+',
  '(?U)a+?',
  'a|b|',
  '(|a)',
  '(?:ab)+',
  '[a-]',
  '[-a]',
  '[]a]',
  '[a\\]]',
  'x*y',
  '\\.',
  '\\/',
  '/',
  '\\$',
  '$a',
  'a^',
  // Refused by RE2:
  '(?=a)',
  '(?!a)',
  '(?<=a)b',
  '(?<!a)b',
  '(a)\\1',
  '\\1',
  'a**',
  'a{2}{3}',
  'a{1001}',
  'a{2,1}',
  '(?P<n>a)(?P<n>b)',
  '(?>a)',
  'a++',
  '[z-a]',
  '(',
  ')',
  '[a',
  '\\',
  '\\p{Nope}',
  '\\xZZ',
];
const PATTERN_STRINGS = [
  '',
  'a',
  'A',
  'b',
  'ab',
  'aB',
  'Ab',
  'aab',
  'aaa',
  'a\n',
  '\na',
  'a\nb',
  'b\n',
  ' ',
  '\t',
  '\u000b',
  '\u00a0',
  '\u2003',
  'cat',
  'a cat b',
  'bat',
  'k',
  'K',
  '\u212a',
  'ß',
  'SS',
  'ẞ',
  'straße',
  'STRASSE',
  'é',
  'É',
  'e\u0301',
  '😀',
  '٣',
  '5',
  'x',
  'xy',
  'xxy',
  'a.b*',
  'a.b',
  '(',
  '$a',
  'a^',
  '/',
  '.',
  '-',
  ']',
  '\u0000',
  '\u0007',
  '\n',
  '\f',
  'e',
  'Z',
  '8',
  'a{,2}',
  'A_b9',
  '!',
  'ab\n',
];

// Patterns where RE2 and ECMA-262 (or Python's re) part ways, and formats at the edges of R14.5.
const DIALECT_PATTERNS = [
  '^\\s$',
  '^.$',
  '(?i)^k$',
  '^a$',
  '\\Aab\\z',
  '\\Qa.b\\E',
  '^[[:alpha:]]+$',
  '^\\pL+$',
  '^\\d+$',
  '^\\w+$',
  '\\bx',
  'a{,2}',
  '(?s)^.$',
  '(?m)^b$',
  '^(?U)a+',
  '\\x41',
  '\\u00e9',
  '^[^]$',
  '\\12',
];
const DIALECT_STRINGS = [
  '\u000b',
  '\u00a0',
  ' ',
  '\n',
  'K',
  '\u212a',
  'k',
  'a\n',
  'ab',
  'a.b',
  'axb',
  'é',
  'e\u0301',
  '٣',
  '12',
  'x',
  'xa',
  'a{,2}',
  'a\nb',
  'aaa',
  'A',
  'ü',
  '😀',
  '\u0000',
  '2026-02-29T00:00:00Z',
  '2024-02-29T10:00:00.5+01:00',
  '2026-01-01t10:00:00z',
  '10:00:00Z',
  'P1Y2M',
  'PT',
  'P1W',
  'a.example',
  'a..example',
  'ada@x.io',
  '@x.io',
  '1.2.3.4',
  '01.2.3.4',
  '::1',
  '1:2:3:4:5:6:7::',
  '::ffff:1.2.3.4',
  'urn:isbn:1',
  'http://a b',
  '123e4567-e89b-12d3-a456-426614174000',
  '{123e4567-e89b-12d3-a456-426614174000}',
  '(?i)a',
  '(a)\\1',
  '[[:alpha:]]',
];
const DIALECT_FORMATS = [
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uuid',
  'regex',
  'int32',
  'password',
  'uri-reference',
];
const DIALECT_NUMBERS = [0, 1, 1.0, -1, 0.3, 0.5, 0.1, 3, 1e20, 2.5, -0.5, 9007199254740991];

/** A leaf schema from the dialect's assertions. */
function leafSchema(r: Rng): Record<string, unknown> {
  switch (r.int(9)) {
    case 0:
      return { type: 'string', pattern: r.pick(DIALECT_PATTERNS) };
    case 1:
      return { type: 'string', format: r.pick(DIALECT_FORMATS) };
    case 2:
      return { type: r.pick(['number', 'integer']), multipleOf: r.pick([0.1, 0.5, 3, 1e-21]) };
    case 3:
      return { enum: [...r.some<unknown>([1, true, '1', 0, false, [1], { a: 1 }, 1.5], 3), null] };
    case 4:
      return { const: r.pick<unknown>([1, true, 'a', null, { a: [1] }]) };
    case 5:
      return { type: [...new Set([...r.some(['string', 'number', 'boolean', 'null', 'array', 'object'], 2), 'integer'])] };
    case 6:
      return { type: 'array', items: { type: 'string' }, minItems: r.int(2), maxItems: 1 + r.int(3), uniqueItems: r.chance(0.5) };
    case 7:
      return { type: 'string', minLength: r.int(3), maxLength: 1 + r.int(4) };
    default:
      return { type: 'number', minimum: -1, exclusiveMaximum: r.pick([1, 3, 1e20]) };
  }
}

/** A schema from the whole dialect (each keyword as R14.1 reads it), over members a, b and c. */
function dialectSchema(r: Rng): Record<string, unknown> {
  const node = (depth: number): Record<string, unknown> => {
    if (depth > 2 || r.chance(0.35)) return leafSchema(r);
    switch (r.int(10)) {
      case 0:
        return { anyOf: [node(depth + 1), node(depth + 1)] };
      case 1:
        return { oneOf: [node(depth + 1), node(depth + 1)] };
      case 2:
        return { allOf: [node(depth + 1), node(depth + 1)] };
      case 3:
        return { not: node(depth + 1) };
      case 4:
        // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
        return { if: node(depth + 1), then: node(depth + 1), else: node(depth + 1) };
      case 5:
        return { $ref: '#/$defs/shared' };
      case 6:
        return {
          type: 'array',
          prefixItems: [node(depth + 1)],
          items: r.chance(0.5) ? false : node(depth + 1),
          contains: node(depth + 1),
          minContains: r.int(2),
          maxContains: 1 + r.int(2),
        };
      case 7:
        return {
          type: 'object',
          patternProperties: { [r.pick(DIALECT_PATTERNS)]: node(depth + 1) },
          propertyNames: { pattern: r.pick(['^[a-c]$', '^\\w+$', '(?i)^[A-C]$']) },
          additionalProperties: r.chance(0.5) ? false : node(depth + 1),
        };
      case 8:
        return {
          type: 'object',
          properties: { a: node(depth + 1) },
          dependentRequired: { a: ['b'] },
          unevaluatedProperties: false,
          allOf: [{ properties: { b: node(depth + 1) } }],
        };
      default:
        return { type: 'object', properties: { a: node(depth + 1) }, required: r.some(['a', 'b'], 2), minProperties: r.int(2), maxProperties: 1 + r.int(3) };
    }
  };
  if (r.chance(0.2)) {
    // Draft-07: a tuple `items` with `additionalItems`, `definitions`, `dependencies`.
    return {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      definitions: { shared: leafSchema(r) },
      properties: {
        a: { type: 'array', items: [leafSchema(r), leafSchema(r)], additionalItems: r.chance(0.5) ? false : leafSchema(r) },
        b: { $ref: '#/definitions/shared', ...(r.chance(0.5) ? leafSchema(r) : {}) },
        c: leafSchema(r),
      },
      dependencies: { a: ['c'], b: { required: ['a'] } },
    };
  }
  return {
    type: 'object',
    $defs: { shared: leafSchema(r) },
    properties: { a: node(0), b: node(0), c: node(0) },
    ...(r.chance(0.3) ? { required: ['a'] } : {}),
  };
}

function dialectValue(r: Rng, depth: number): unknown {
  switch (r.int(depth > 2 ? 4 : 6)) {
    case 0:
      return r.pick(DIALECT_STRINGS);
    case 1:
      return r.pick(DIALECT_NUMBERS);
    case 2:
      return r.pick<unknown>([true, false, null, 'a', 'b']);
    case 3:
      return r.pick(DIALECT_STRINGS);
    case 4:
      return Array.from({ length: r.int(4) }, () => dialectValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick(['a', 'b', 'c', 'A', 'x-y', 'k']), dialectValue(r, depth + 1)]));
  }
}

function dialectArguments(r: Rng): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of ['a', 'b', 'c']) if (r.chance(0.7)) args[name] = dialectValue(r, 1);
  if (r.chance(0.15)) args[r.pick(['d', 'A'])] = dialectValue(r, 1);
  return args;
}

const STRINGS = [
  '',
  'a',
  'ab12',
  'x y',
  'Zed',
  '2026-01-01T00:00:00Z',
  '2026-01-01 00:00:00Z',
  'ada@example.com',
  'https://example.com/a',
  'not a uri',
  '123e4567-e89b-12d3-a456-426614174000',
  '(?i)a',
  '(?=a)',
  'ü',
  '😀',
];
const NUMBERS = [0, 1, -1, 2, 3, 0.5, 1.5, -2.5, 7, 10, 1e20, 2.5e-3];

function randomValue(r: Rng, depth: number): unknown {
  switch (r.int(depth > 2 ? 5 : 7)) {
    case 0:
      return r.pick(STRINGS);
    case 1:
      return r.pick(NUMBERS);
    case 2:
      return r.chance(0.5);
    case 3:
      return null;
    case 4:
      return r.pick(STRINGS);
    case 5:
      return Array.from({ length: r.int(3) }, () => randomValue(r, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: r.int(3) }, () => [r.pick(['a', 'b', 'q', 'limit', 'x y', 'type']), randomValue(r, depth + 1)]));
  }
}

/** Arguments naming the schema's own properties (and sometimes one it does not name). */
function randomArguments(r: Rng, schema: Record<string, unknown>): unknown {
  if (r.chance(0.05)) return randomValue(r, 0);
  const names = Object.keys((schema.properties as Record<string, unknown>) ?? {});
  const args: Record<string, unknown> = {};
  for (const n of names) if (r.chance(0.7)) args[n] = randomValue(r, 1);
  if (r.chance(0.3)) args[r.pick(['extra', 'x y', 'q'])] = randomValue(r, 1);
  return args;
}

function randomOutput(r: Rng, depth: number): unknown {
  if (depth > 3 || r.chance(0.2)) return r.pick<unknown>(['s', 1, null, true]);
  if (r.chance(0.3)) return Array.from({ length: r.int(3) }, () => randomOutput(r, depth + 1));
  return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick(['a', 'b', 'x', '*', '__proto__', 'toString', 'x*']), randomOutput(r, depth + 1)]));
}

it('speaks for itself: the reference refuses what it cannot read instead of guessing', async () => {
  await expect(ref.ask({ op: 'load', id: 'bad', bundle: { format: 'toolgate.bundle/v0' } })).rejects.toThrow(/unknown format/);
});
