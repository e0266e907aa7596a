import pino, { type Logger } from 'pino';
import type { Bundle, BundleSummary, PolicyTest, PolicyTestOutcome, TenantPolicy } from '../../policy-schemas/types.gen.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import { runPolicyTests } from '../../runtime/policy-tests.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { nextTurn } from '../http/event-loop.ts';
import { summarize } from '../policy-engine/diff.ts';
import { type DraftSnapshot, loadDraftSnapshot } from '../store/snapshot.ts';
import { snapshotText } from '../store/snapshot-text.ts';
import { type CompileError, compileBundle } from './compile-bundle.ts';
import { type BundleParts, bundleParts, compiledBundleParts } from './bundle-parts.ts';
import { CompileThread } from './compile-thread.ts';
import { type CompiledDraft, compiledDraft } from './draft.ts';
import { compileError } from './publish.ts';
import { snapshotFingerprint } from './snapshot-fingerprint.ts';

/**
 * Drafts of fewer tools than this compile on the server's own thread. Handing a draft to the worker
 * copies the snapshot there and the compiled text back: below a few hundred tools that copying and
 * the messages cost more than the compile itself (a 30-tool draft compiles in about a millisecond),
 * and a server that never sees a large draft never starts the worker.
 */
export const DEFAULT_COMPILE_WORKER_MIN_TOOLS = 300;
// A stored bundle's catalog holds about a kilobyte per tool: how its size is judged without parsing it.
const BYTES_PER_TOOL = 1000;
// Compiled drafts kept: at most this many, and at most this much bundle text (a 2,000-tool draft is
// about 2.7 MB of text, several times that once parsed or loaded for a simulation).
const MAX_CACHED = 64;
const MAX_CACHED_TEXT = 32 * 1024 * 1024;

export type CompilerOptions = {
  /** Drafts with at least this many tools compile in the worker (0: every draft; Infinity: none, no worker). */
  workerMinTools: number;
  logger: Logger;
};

/** A bundle's text for work after its compile (policy tests, the publish summary), with its size in tools when known. */
export type BundleText = { revision: string; text: string; tools?: number };

type Outcome = CompiledDraft | { errors: CompileError[] };

/**
 * The server's compiler: compiles tenant drafts into bundles and runs the CPU-heavy work on a
 * compiled bundle (its policy tests, a publish's summary). A large draft is compiled in a worker
 * thread (compile-thread.ts), so requests go on being answered during the hundreds of milliseconds
 * a catalog of thousands of tools takes; a small one inline. Compiled drafts are kept by the hash
 * of their snapshot: simulating the same draft again, or publishing the draft its policy tests
 * just ran on, compiles nothing. One per server (AppDeps.compiler): two servers in one process
 * share no compiled draft and no worker.
 */
export class Compiler {
  private readonly cache = new Map<string, CompiledDraft>();
  // Compiles under way by snapshot hash: a second request for the same draft waits for the first.
  private readonly running = new Map<string, Promise<Outcome>>();
  private readonly thread: CompileThread;
  private compiles = 0;
  private cachedText = 0;

  constructor(private readonly options: CompilerOptions) {
    this.thread = new CompileThread(options.logger);
  }

  /** Starts the worker (it warms itself) when drafts may need it; a server does this as it starts. */
  start(): void {
    if (Number.isFinite(this.options.workerMinTools)) this.thread.start();
  }

  /** Whether a draft of this many tools compiles in the worker. */
  inWorker(tools: number): boolean {
    return tools >= this.options.workerMinTools;
  }

  /** How many drafts this compiler has compiled (cache hits aside): the start-up warm-up stops once a request compiled one. */
  get compilesSoFar(): number {
    return this.compiles;
  }

  /** The running worker thread, if any (tests end it to see a crash answered). */
  get worker() {
    return this.thread.current;
  }

  /** How many worker threads were started (a crashed one is replaced). */
  get workersStarted(): number {
    return this.thread.started;
  }

  /**
   * The tenant's current draft, compiled exactly as a publish would compile it (the envelope
   * aside); `policy`, when given, stands in for the saved policy. 404 for an unknown tenant, 422
   * `compile_error` with every error otherwise.
   */
  async compileDraft(db: DbOrTx, tenant: string, policy?: TenantPolicy): Promise<CompiledDraft> {
    const saved = await loadDraftSnapshot(db, tenant);
    if (!saved) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
    // Reading thousands of tools and hashing them are each tens of milliseconds: a turn between.
    await nextTurn();
    return this.compileSnapshot(policy ? { ...saved, policy } : saved);
  }

  /** A snapshot compiled (from the cache when the same draft was compiled before); 422 `compile_error` when it does not compile. */
  async compileSnapshot(snapshot: DraftSnapshot, fingerprint = snapshotFingerprint(snapshot)): Promise<CompiledDraft> {
    const r = await this.compiledOrErrors(snapshot, fingerprint);
    if ('errors' in r) throw compileError(snapshot.tenant.id, r.errors);
    return r;
  }

  /** Like compileSnapshot, answering the compile errors instead of throwing them. */
  compiledOrErrors(snapshot: DraftSnapshot, fingerprint = snapshotFingerprint(snapshot)): Promise<Outcome> {
    const hit = this.cache.get(fingerprint);
    if (hit) {
      this.cache.delete(fingerprint);
      this.cache.set(fingerprint, hit);
      return Promise.resolve(hit);
    }
    let compiling = this.running.get(fingerprint);
    if (!compiling) {
      compiling = this.compile(snapshot).finally(() => this.running.delete(fingerprint));
      this.running.set(fingerprint, compiling);
      void compiling.then(
        (r) => {
          if ('errors' in r) return;
          this.cache.set(fingerprint, r);
          this.cachedText += textLength(r);
          // The least recently used go first.
          for (const [key, old] of this.cache) {
            if (this.cache.size <= 1 || (this.cache.size <= MAX_CACHED && this.cachedText <= MAX_CACHED_TEXT)) break;
            this.cache.delete(key);
            this.cachedText -= textLength(old);
          }
        },
        () => undefined,
      );
    }
    return compiling;
  }

  private async compile(snapshot: DraftSnapshot): Promise<Outcome> {
    this.compiles++;
    const issuedAt = new Date().toISOString();
    // Removed tools never enter a bundle: the draft's size is its other tools.
    const tools = liveTools(snapshot);
    if (!this.inWorker(tools)) {
      const r = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt });
      if (!r.ok) return { errors: r.errors };
      return compiledDraft({ revision: r.revision, members: r.members, ttlSeconds: r.bundle.policy.bundleTtlSeconds, tools, bundle: r.bundle });
    }
    // After the snapshot's hash, before writing it out for the worker (its tools' text is written
    // once per inventory state, about 10 ms for 2,000 tools; the rest is small).
    await nextTurn();
    const r = await this.thread.request<'compile'>({ op: 'compile', snapshot: snapshotText(snapshot), issuedAt });
    if ('errors' in r) return { errors: r.errors };
    return compiledDraft({ revision: r.revision, members: r.members, ttlSeconds: r.ttlSeconds, tools });
  }

  /** Every policy test's outcome on the bundle: in the worker for a large one. */
  async testOutcomes(target: BundleText | CompiledDraft, tests: readonly PolicyTest[]): Promise<PolicyTestOutcome[]> {
    if (this.inWorker(sizeOf(target)))
      return (await this.thread.request<'tests'>({ op: 'tests', revision: target.revision, text: target.text, tests })).outcomes;
    const loaded = 'loaded' in target ? await target.loaded() : loadBundle(JSON.parse(target.text) as Bundle);
    return runPolicyTests(loaded, tests);
  }

  /** The counts a published version is listed with, and its changes against the previous version's text. */
  async summarize(target: BundleText, previous: string | null): Promise<BundleSummary> {
    if (this.inWorker(sizeOf(target)))
      return (await this.thread.request<'summarize'>({ op: 'summarize', revision: target.revision, text: target.text, previous })).summary;
    return summarize(JSON.parse(target.text) as Bundle, previous === null ? null : (JSON.parse(previous) as Bundle));
  }

  /**
   * Hashes of the bundle's policy, grants and inventory (what the console's overview compares): a
   * compiled draft's from its members on this thread (a hash of its catalog's text); another
   * bundle's, which must be parsed and canonicalised, in the worker when it is large.
   */
  async bundleParts(target: BundleText | CompiledDraft): Promise<BundleParts> {
    const fromMembers = 'members' in target ? compiledBundleParts(target.members) : undefined;
    if (fromMembers) return fromMembers;
    if (this.inWorker(sizeOf(target))) return (await this.thread.request<'parts'>({ op: 'parts', text: target.text })).parts;
    return bundleParts(JSON.parse(target.text) as Bundle);
  }

  /** Ends the worker: requests still waiting for it fail with a 503. */
  close(): Promise<void> {
    return this.thread.close();
  }
}

/**
 * A compiler that never starts a worker, for callers outside a server (CLI commands) that compile
 * at most a stored bundle's summary: they have no other requests to keep answering.
 */
export function inlineCompiler(): Compiler {
  return new Compiler({ workerMinTools: Number.POSITIVE_INFINITY, logger: pino({ level: 'silent' }) });
}

function liveTools(snapshot: DraftSnapshot): number {
  let n = 0;
  for (const t of snapshot.tools) if (t.status !== 'removed') n++;
  return n;
}

/** The length of a compiled draft's text, from its members (without joining them). */
function textLength(draft: CompiledDraft): number {
  let n = 1;
  for (const m of draft.members) n += m.text.length + 1;
  return n;
}

function sizeOf(target: BundleText): number {
  return target.tools ?? Math.floor(target.text.length / BYTES_PER_TOOL);
}
