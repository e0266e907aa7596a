import { validatorFor } from '../../policy-schemas/index.ts';
import type { Db } from '../db/database.ts';
import { toolStore } from '../store/inventory.ts';
import { warmInputSchema } from '../validation/draft-rules.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import { compileBundle, compilesSoFar } from './compile-bundle.ts';

// What the compiler and the publish route validate on every publish: compiled once per process.
const PUBLISH_SCHEMAS = ['tool', 'group', 'state', 'connection-grant', 'tenant-policy', 'bundle-publish'];
// Validated on every decision batch a runtime sends: compiled at start too, or the first batch after
// a start compiles it inline (hundreds of milliseconds on a busy machine, every other request waiting).
const INGEST_SCHEMAS = ['decision-batch'];
// Held at most this long between chances for requests to run (a whole draft's compile aside).
const SLICE_MS = 15;
// Up to this many tools, warming costs a start about 150 ms (2,000 tools, cold, on 2 cores) and is
// done before the server answers; a larger inventory is warmed after, in slices.
export const WARM_BEFORE_LISTEN_MAX_TOOLS = 3000;

const letRequestsRun = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Whether to warm the compiler before listening: when the inventory is small enough that the start
 * stays well inside its second, the first publish after a start then runs on warm code instead of
 * cold (about 240 ms against 130 ms for 2,000 tools on 2 cores).
 */
export async function warmBeforeListening(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('tools')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '!=', 'removed')
    .executeTakeFirst();
  return Number(row?.n ?? 0) <= WARM_BEFORE_LISTEN_MAX_TOOLS;
}

/**
 * The one-time work a first publish after a start would otherwise do inline, done after the server
 * listens, in slices with requests answered between them: compiling the schema validators a publish
 * runs, judging every distinct input schema of the inventory (cached by schema text; the judge
 * compiles for the runtime's ajv only the schemas it cannot vouch for), then compiling one tenant's
 * draft, which leaves the compiler's own code optimised. A publish that comes first does the remaining part itself, on the
 * same caches (the answers are the same either way), and the warm-up then stops.
 */
export async function warmCompiler(db: Db, stopped: () => boolean = () => false): Promise<void> {
  for (const kind of [...PUBLISH_SCHEMAS, ...INGEST_SCHEMAS]) {
    validatorFor(kind);
    await letRequestsRun();
  }
  const tools = await toolStore.list(db);
  let sliceStart = performance.now();
  for (const tool of tools) {
    // A publish or simulation that came first has judged the inventory and run the compiler already.
    if (stopped() || compilesSoFar() > 0) return;
    if (tool.status !== 'removed') warmInputSchema(tool.inputSchema);
    if (performance.now() - sliceStart > SLICE_MS) {
      await letRequestsRun();
      sliceStart = performance.now();
    }
  }
  // One draft is enough to optimise the compiler's code; compiling every tenant's would hold the
  // event loop once per tenant, in the way of the first publishes.
  const first = await db.selectFrom('tenants').select('id').orderBy('id').limit(1).executeTakeFirst();
  if (!first || stopped()) return;
  await letRequestsRun();
  // Compiled as a publish compiles it, not loaded for simulation too: loading the canonical bundle
  // would compile every input schema a second time (its keys sorted, so under another cache key).
  const snapshot = await loadDraftSnapshot(db, first.id);
  // Compiling again after a publish would only hold the event loop, in the way of its commit.
  if (!snapshot || stopped() || compilesSoFar() > 0) return;
  // A draft that does not compile says so when it is published or simulated.
  compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt: new Date().toISOString() });
}
