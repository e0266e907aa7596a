import { validatorFor } from '../../policy-schemas/index.ts';
import type { Db } from '../db/database.ts';
import { TurnBudget, nextTurn } from '../http/event-loop.ts';
import { toolStore } from '../store/inventory.ts';
import { warmInputSchema } from '../validation/draft-rules.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import type { Compiler } from './compiler.ts';

// What the server's own thread validates on every publish: compiled once per process.
const PUBLISH_SCHEMAS = ['tool', 'group', 'state', 'connection-grant', 'tenant-policy', 'bundle-publish'];
// Validated on every decision batch a runtime sends: compiled at start too, or the first batch after
// a start compiles it inline (hundreds of milliseconds on a busy machine, every other request waiting).
const INGEST_SCHEMAS = ['decision-batch'];
// Held at most this long between chances for requests to run (a whole draft's compile aside).
const SLICE_MS = 15;
// Up to this many tools, warming costs a start about 150 ms (2,000 tools, cold, on 2 cores) and is
// done before the server answers; a larger inventory is warmed after, in slices.
export const WARM_BEFORE_LISTEN_MAX_TOOLS = 3000;

/**
 * Whether to warm the compiler before listening: when drafts compile on the server's own thread
 * and the inventory is small enough that the start stays well inside its second, the first publish
 * after a start then runs on warm code instead of cold. A larger inventory compiles in the
 * compiler's worker, which warms itself while the server starts and answers.
 */
export async function warmBeforeListening(db: Db, compiler: Compiler): Promise<boolean> {
  const live = await liveTools(db);
  return live <= WARM_BEFORE_LISTEN_MAX_TOOLS && !compiler.inWorker(live);
}

/** How many tools a draft holds (removed ones never enter it), counted without reading them. */
async function liveTools(db: Db): Promise<number> {
  const row = await db
    .selectFrom('tools')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '!=', 'removed')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The one-time work a first publish after a start would otherwise do: compiling the schema
 * validators this thread runs, then compiling one tenant's draft, which leaves the compiler's code
 * optimised and every distinct input schema of the inventory judged (cached by schema text). A
 * draft the compiler runs inline is prepared here in slices, with requests answered between them;
 * a large one is compiled by the compiler's worker, this thread only reading and posting it. A
 * publish that comes first does the remaining part itself, on the same caches (the answers are the
 * same either way), and the warm-up then stops.
 */
export async function warmCompiler(db: Db, compiler: Compiler, stopped: () => boolean = () => false): Promise<void> {
  for (const kind of [...PUBLISH_SCHEMAS, ...INGEST_SCHEMAS]) {
    validatorFor(kind);
    await nextTurn();
  }
  // A large inventory is the worker's to judge: reading it here would only hold this thread.
  if (!compiler.inWorker(await liveTools(db))) {
    const live = (await toolStore.list(db)).filter((tool) => tool.status !== 'removed');
    const budget = new TurnBudget(SLICE_MS);
    for (const tool of live) {
      // A publish or simulation that came first has judged the inventory and run the compiler already.
      if (stopped() || compiler.compilesSoFar > 0) return;
      warmInputSchema(tool.inputSchema);
      await budget.yieldIfDue();
    }
  }
  // One draft is enough to optimise the compiler's code; compiling every tenant's would hold the
  // event loop (or the worker) once per tenant, in the way of the first publishes.
  const first = await db.selectFrom('tenants').select('id').orderBy('id').limit(1).executeTakeFirst();
  if (!first || stopped()) return;
  await nextTurn();
  const snapshot = await loadDraftSnapshot(db, first.id);
  // Compiling again after a publish would only hold the compiler, in the way of its commit.
  if (!snapshot || stopped() || compiler.compilesSoFar > 0) return;
  // Kept by the compiler: a first publish of the unchanged draft compiles nothing. A draft that
  // does not compile says so when it is published or simulated.
  await compiler.compiledOrErrors(snapshot);
}
