// What reading a tools/call's arguments as I-JSON on their text (gateway/call-arguments-text.ts)
// adds to each message the gateway receives, beside the JSON.parse of the message it does anyway:
// a small call, a call with 64 KiB of arguments, and a message that is not a tools/call (skipped).
// Prints figures; asserts nothing.
import { noteCallArguments } from '../../gateway/call-arguments-text.ts';

const meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const call = (args: unknown) =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__github__create_issue","arguments":${JSON.stringify(args)},${meta}}}`;
const cases: Array<[string, string]> = [
  ['small tools/call (~200 B)', call({ repo: 'acme/web', title: 'Broken link on the pricing page', labels: ['bug', 'web'], priority: 2 })],
  [
    'tools/call with 64 KiB of arguments',
    call({ repo: 'acme/web', rows: Array.from({ length: 900 }, (_, i) => ({ id: i, name: `row ${i}`, score: i / 7, tags: ['a', 'b'] })) }),
  ],
  ['tools/list (not checked)', `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{${meta}}}`],
];

function perMessageMicros(text: string, check: boolean): number {
  const rounds = text.length > 10_000 ? 2_000 : 100_000;
  // Warm up, then time.
  for (let i = 0; i < rounds / 10; i++) {
    const body = JSON.parse(text);
    if (check) noteCallArguments(text, body);
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) {
    const body = JSON.parse(text);
    if (check) noteCallArguments(text, body);
  }
  return Number(process.hrtime.bigint() - t0) / 1000 / rounds;
}

console.log('call-arguments-text: JSON.parse of the message alone, and with the I-JSON reading of its arguments (µs per message)');
for (const [name, text] of cases) {
  const parse = perMessageMicros(text, false);
  const both = perMessageMicros(text, true);
  console.log(
    `  ${name.padEnd(38)} ${String(text.length).padStart(6)} B   parse ${parse.toFixed(2).padStart(8)}   parse+check ${both.toFixed(2).padStart(8)}   added ${(both - parse).toFixed(2).padStart(8)}`,
  );
}
