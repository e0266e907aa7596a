import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { BundleSummary, PolicyTest, PolicyTestOutcome } from '../../policy-schemas/types.gen.ts';
import type { BundleMember } from '../../runtime/bundle-format.ts';
import { ApiError } from '../errors.ts';
import type { BundleParts } from './bundle-parts.ts';
import type { CompileError } from './compile-bundle.ts';

/** What the server asks of its compile worker (compile-worker.ts). */
export type WorkerRequest =
  | { id: number; op: 'compile'; snapshot: string; issuedAt: string }
  | { id: number; op: 'tests'; revision: string; text: string; tests: readonly PolicyTest[] }
  | { id: number; op: 'summarize'; revision: string; text: string; previous: string | null }
  | { id: number; op: 'parts'; text: string };

type Results = {
  compile: { op: 'compile'; revision: string; members: BundleMember[]; ttlSeconds: number } | { op: 'compile'; errors: CompileError[] };
  tests: { op: 'tests'; outcomes: PolicyTestOutcome[] };
  summarize: { op: 'summarize'; summary: BundleSummary };
  parts: { op: 'parts'; parts: BundleParts };
};

type Op = keyof Results;
type RequestOf<K extends Op> = Omit<Extract<WorkerRequest, { op: K }>, 'id'>;

/** The worker's answer to one request: its result, or the error it threw. */
export type WorkerAnswer = { id: number; result?: Results[Op]; error?: { message: string; stack?: string } };

type Pending = { resolve: (r: Results[Op]) => void; reject: (e: Error) => void };

// The build writes compile-worker.js beside the server's own files (scripts/build.mjs makes
// import.meta.url of this module name that folder). From the TypeScript sources (tests, `npm run
// dev`) the worker imports the .ts entry through tsx's tsImport: on Node 20, `--import tsx` in a
// worker's execArgv does not reach the worker's own entry module (ERR_UNKNOWN_FILE_EXTENSION).
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_ENTRY = new URL(FROM_SOURCES ? './compile-worker.ts' : './compile-worker.js', import.meta.url);

/** The ES module of tsx's `tsImport` (its package's `tsx/esm/api` export for `import`). */
function tsxImportApi(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('tsx/package.json');
  const exported = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api'];
  return pathToFileURL(join(dirname(manifest), exported.import.default)).href;
}

function newWorker(): Worker {
  const options = { name: 'toolgate-compiler' };
  if (!FROM_SOURCES) return new Worker(WORKER_ENTRY, options);
  const bootstrap = `import(${JSON.stringify(tsxImportApi())}).then(({ tsImport }) => tsImport(${JSON.stringify(WORKER_ENTRY.href)}, ${JSON.stringify(import.meta.url)}));`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * The server's one compile worker thread: started on first use (or by `start`), answering one
 * request at a time in order. A worker that dies (a crash, an out-of-memory) fails the requests
 * it held with a 503 that says so, never leaving them waiting, and a new one is started for the
 * next request. The thread is unref'd: it never keeps a process alive, and `close` ends it.
 */
export class CompileThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** How many workers this thread has started (a crash makes the next request start another). */
  started = 0;

  constructor(private readonly logger: Logger) {}

  /** Starts the worker now (it warms its validators as it starts) unless it runs already. */
  start(): void {
    if (this.closed || this.worker) return;
    const worker = newWorker();
    this.started++;
    worker.unref();
    let ready = false;
    worker.on('message', (m: WorkerAnswer | { ready: true }) => {
      if (!('id' in m)) {
        ready = true;
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      // Idle, the thread must not keep a process alive; busy, it must (a CLI awaiting its answer).
      if (this.pending.size === 0) worker.unref();
      if (m.error) {
        const err = new Error(`the compiler failed: ${m.error.message}`);
        if (m.error.stack) err.stack = m.error.stack;
        p.reject(err);
      } else p.resolve(m.result as Results[Op]);
    });
    worker.on('error', (err: unknown) => {
      const e = err instanceof Error ? err : new Error(String(err));
      this.logger.error({ err: { message: e.message, stack: e.stack } }, 'the compile worker crashed');
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (this.closed) return;
      this.failPending(
        new ApiError(503, 'internal', 'The compiler stopped while working on this request and is being restarted; send the request again', {
          headers: { 'Retry-After': '1' },
        }),
      );
      // A worker that had started well is replaced at once; one that died starting is replaced by
      // the next request only, so a worker that cannot start is never restarted in a loop.
      this.logger.error(
        { code },
        ready ? 'the compile worker stopped; starting a new one' : 'the compile worker stopped while starting; the next compile starts a new one',
      );
      if (ready) this.start();
    });
    this.worker = worker;
  }

  /** The running worker, if any (tests end it to see a crash handled). */
  get current(): Worker | null {
    return this.worker;
  }

  /** Sends one request to the worker (started if none runs) and answers its result. */
  request<K extends Op>(request: RequestOf<K>): Promise<Results[K]> {
    if (this.closed) return Promise.reject(new ApiError(503, 'internal', 'The server is shutting down'));
    this.start();
    const id = this.nextId++;
    return new Promise<Results[K]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: Results[Op]) => void, reject });
      this.worker!.ref();
      try {
        this.worker!.postMessage({ ...request, id });
      } catch (err) {
        // A request that cannot be copied to the thread is answered now, and leaves nothing waiting.
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker?.unref();
        reject(err);
      }
    });
  }

  /** Ends the worker; requests still waiting fail with a 503. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failPending(new ApiError(503, 'internal', 'The server is shutting down'));
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private failPending(err: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(err);
  }
}
