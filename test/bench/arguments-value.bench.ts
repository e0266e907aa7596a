// What checking arguments handed over as a value (an SDK caller's object) for being a JSON value
// (runtime/json-arguments.ts readArgumentsValue, R14.6) costs each decide() beside the nesting walk
// it replaced (nestsTooDeep, which only counted depth): a flat call, a nested one, 64 and 256 KiB of
// rows, and an object shared 2^40 ways. Alternated in one process, medians of 7 rounds, so the machine's
// load falls on both alike. Prints figures; asserts nothing.
import { readArgumentsValue } from '../../runtime/json-arguments.ts';
import { nestsTooDeep } from '../../runtime/json-schema-dialect.ts';

let shared: Record<string, unknown> = { leaf: ['x', 1] };
for (let i = 0; i < 40; i++) shared = { a: shared, b: shared };
const cases: Array<[string, unknown]> = [
  ['flat call (3 members)', { path: 'docs/readme.md', limit: 10, recursive: true }],
  [
    'nested call (filters, page)',
    {
      query: {
        filters: [
          { field: 'status', op: 'eq', value: 'open' },
          { field: 'age', op: 'lt', value: 30 },
        ],
      },
      page: { size: 50 },
    },
  ],
  ['64 KiB of rows', { rows: Array.from({ length: 900 }, (_, i) => ({ id: i, name: `row ${i}`, score: i / 7, tags: ['a', 'b'] })) }],
  ['256 KiB of rows', { rows: Array.from({ length: 3600 }, (_, i) => ({ id: i, name: `row ${i}`, score: i / 7, tags: ['a', 'b'] })) }],
  // Past the recursive walk's budget of 100,000 members: the walk that remembers what it saw.
  ['an object shared 2^40 ways (41 levels)', { tree: shared }],
];

function nsPerCall(rounds: number, f: () => unknown): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) f();
  return Number(process.hrtime.bigint() - t0) / rounds;
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
const fmt = (ns: number) => (ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`);

console.log('arguments handed over as a value: the JSON-value walk (now) beside the depth-only walk (before)\n');
for (const [name, value] of cases) {
  const size = name.startsWith('an object shared') ? 0 : JSON.stringify(value).length;
  const rounds = size > 10_000 || size === 0 ? 2_000 : 200_000;
  const before: number[] = [];
  const now: number[] = [];
  for (let r = 0; r < 7; r++) {
    before.push(nsPerCall(rounds, () => nestsTooDeep(value)));
    now.push(nsPerCall(rounds, () => readArgumentsValue(value)));
  }
  const b = median(before);
  const n = median(now);
  console.log(`${name.padEnd(42)} ${fmt(b).padStart(10)} -> ${fmt(n).padStart(10)}  (${size ? `${size} B as JSON, ` : ''}${(n / b).toFixed(2)}×)`);
}
