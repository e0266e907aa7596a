// Pattern benchmark: decide() on a tool whose input schema has the catastrophic pattern ^(a+)+$,
// with a 10,000-character argument, against a plain pattern; and what a backtracking RegExp
// would cost on the same pattern with a far shorter input. Prints figures; asserts nothing.
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { ISSUED_AT, snapshot, tool } from '../engine/build.ts';

const schema = (pattern: string) => ({ type: 'object', properties: { q: { type: 'string', pattern } }, required: ['q'] });
const compiled = compileBundle(
  snapshot({
    tools: [tool('core__evil', { inputSchema: schema('^(a+)+$') }), tool('core__plain', { inputSchema: schema('^[a-z]+$') })],
    policy: { roles: { r: { groups: ['*'], allow: ['core__*'] } }, bindings: { 'agent:a': ['r'] } },
  }),
  { version: 1, previousRevision: null, issuedAt: ISSUED_AT },
);
if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
const view = createView(loadBundle(JSON.parse(compiled.text)), { subject: 'agent:a', groups: ['*'] });

const row = (label: string, value: string) => console.log(`${label.padEnd(64)} ${value.padStart(12)}`);
const ms = (fn: () => unknown, n: number) => {
  fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1e6 / n;
};

console.log('regex benchmark: input-schema patterns run on re2js (linear time)\n');
for (const [label, value] of [
  ['10,000 × "a" (matches)', 'a'.repeat(10_000)],
  ['9,999 × "a" + "!" (worst case)', `${'a'.repeat(9_999)}!`],
] as const) {
  const args = JSON.stringify({ q: value });
  const d = decide(view, { name: 'core__evil', arguments: args });
  row(`decide() core__evil ^(a+)+$, ${label}`, `${ms(() => decide(view, { name: 'core__evil', arguments: args }), 50).toFixed(3)} ms`);
  row(`  → decision`, `${d.decision}${d.errorCode ? ` (${d.errorCode})` : ''}`);
  row(`decide() core__plain ^[a-z]+$, ${label}`, `${ms(() => decide(view, { name: 'core__plain', arguments: args }), 50).toFixed(3)} ms`);
}
// The same pattern on V8's backtracking engine: doubling with every character, so only a short input.
for (const n of [18, 20, 22]) {
  const s = `${'a'.repeat(n)}!`;
  row(`backtracking RegExp ^(a+)+$ on ${n} × "a" + "!" (for contrast)`, `${ms(() => /^(a+)+$/.test(s), 1).toFixed(1)} ms`);
}
