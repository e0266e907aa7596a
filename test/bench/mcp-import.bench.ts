// Importing a large MCP server: listing 5,000 tools from a real SDK server over stdio at several
// page sizes (every page followed), choosing the ids of 5,000 names that need mapping, reconciling
// them with the inventory, and the per-tool provider note over the same schemas (what
// `toolgate tools list` computes for the inventory and the console for each row it shows).
// Prints figures; asserts nothing.
import { providerCompatibility } from '../../runtime/provider-compatibility.ts';
import { fetchMcpTools } from '../../server/mcp/client.ts';
import { reconcileTools } from '../../server/mcp/reconcile.ts';
import { syncMcpServer } from '../../server/mcp/sync.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { createMetrics } from '../../server/observability/metrics.ts';
import { mcpServerStore } from '../../server/store/inventory.ts';
import { placeToolIds } from '../../server/mcp/tool-ids.ts';
import { checkInputSchema } from '../../server/validation/input-schema.ts';
import { StateFileServer, TEST_MCP_POLICY } from '../fixtures/mcp/servers.ts';
import type { FixtureState } from '../fixtures/mcp/tool-list-server.ts';

const TOOLS = 5_000;
const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

// What FastMCP writes for a function with a required string and three optional parameters.
const schemaOf = (i: number) => ({
  type: 'object',
  title: `tool_${i}Arguments`,
  properties: {
    query: { type: 'string', title: 'Query' },
    limit: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null, title: 'Limit' },
    cursor: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, title: 'Cursor' },
    order: { anyOf: [{ enum: ['asc', 'desc'], type: 'string' }, { type: 'null' }], default: null, title: 'Order' },
  },
  required: ['query'],
});
const state: FixtureState = {
  tools: Array.from({ length: TOOLS }, (_, i) => ({ name: `service${i % 50}.resource/${i}.get`, description: `Tool ${i}`, inputSchema: schemaOf(i) })),
};

function time<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

console.log(`${TOOLS} tools, names like ${JSON.stringify(state.tools[1]!.name)}`);
for (const pageSize of [TOOLS, 100, 25]) {
  const server = new StateFileServer({ ...state, pageSize });
  try {
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const start = performance.now();
      const listed = await fetchMcpTools({ id: 'bench', transport: server.transport() }, { policy: TEST_MCP_POLICY, timeoutMs: 60_000 });
      if (!listed.ok || listed.value.length !== TOOLS) throw new Error(listed.ok ? `listed ${listed.value.length}` : listed.message);
      runs.push(performance.now() - start);
    }
    console.log(`list over stdio, ${Math.ceil(TOOLS / pageSize)} page(s) of ${pageSize}: median ${ms(median(runs))} (start, initialize, every page, stop)`);
  } finally {
    server.dispose();
  }
}

const names = state.tools.map((t) => ({ name: t.name }));
const placing: number[] = [];
for (let r = 0; r < ROUNDS; r++) placing.push(time(() => placeToolIds('bench', names, new Set())).ms);
console.log(`placeToolIds, ${TOOLS} names that need mapping: median ${ms(median(placing))}`);

const offered = state.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
const first = time(() =>
  reconcileTools({ serverId: 'bench', offered, existing: [], now: new Date().toISOString(), checkInputSchema: (s) => checkInputSchema(s) }),
);
const inventory = first.value.changes.map((c) => c.after);
const again: number[] = [];
for (let r = 0; r < ROUNDS; r++)
  again.push(time(() => reconcileTools({ serverId: 'bench', offered, existing: inventory, now: new Date().toISOString(), checkInputSchema: () => [] })).ms);
console.log(`reconcileTools: first import ${ms(first.ms)} (schemas judged), a sync that changes nothing median ${ms(median(again))}`);

const notes: number[] = [];
for (let r = 0; r < ROUNDS; r++) notes.push(time(() => state.tools.forEach((t) => providerCompatibility(t.inputSchema))).ms);
const perPage = (median(notes) / TOOLS) * 50;
console.log(`providerCompatibility, ${TOOLS} schemas: median ${ms(median(notes))} (${(perPage).toFixed(2)} ms for a console page of 50)`);

// The whole sync into a fresh database (judging, reconciling, the writes and one audit event per
// tool in one transaction), with the longest time the event loop went without a turn meanwhile.
{
  const database = new ToolgateDatabase(':memory:');
  await database.migrateToLatest();
  const deps = { database, metrics: createMetrics(), config: { keysDir: '.', webDir: null, sessionTtlSeconds: 3600, secureCookies: false } };
  const at = new Date().toISOString();
  await mcpServerStore.insert(database.db, 'bench', { id: 'bench', label: 'bench', transport: { kind: 'http', url: 'https://mcp.example/mcp' } }, at);
  const meta = { actor: 'bench', requestId: null, reason: null };
  for (const round of ['first import', 'a sync that changes nothing']) {
    let last = performance.now();
    let held = 0;
    const probe = setInterval(() => {
      const t = performance.now();
      held = Math.max(held, t - last);
      last = t;
    }, 2);
    const start = performance.now();
    const out = await syncMcpServer(deps as never, 'bench', meta, { list: async () => ({ ok: true, value: structuredClone(offered) }) });
    const took = performance.now() - start;
    clearInterval(probe);
    held = Math.max(held, performance.now() - last);
    if (!out.ok) throw new Error(out.message);
    console.log(`syncMcpServer, ${round} of ${TOOLS} tools: ${ms(took)}, the event loop held at most ${ms(held)} at a time`);
  }
  await database.close();
}
