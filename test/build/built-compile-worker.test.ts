import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileBundle } from '../../server/compiler/compile-bundle.ts';
import { snapshotText } from '../../server/store/snapshot-text.ts';
import type { WorkerAnswer } from '../../server/compiler/compile-thread.ts';
import { benchSnapshot, benchTools } from '../engine/bench-tenant.ts';
import { ROOT, ensureServerBuilt } from './ensure-built.ts';

// The built server starts its compile worker from dist/server/compile-worker.js, beside main.js,
// with plain node: the entry must load on its own and compile as the sources do.
let worker: Worker | undefined;

beforeAll(async () => {
  await ensureServerBuilt();
}, 120_000);
afterAll(async () => {
  await worker?.terminate();
});

/** The worker's next answer to request `id`. */
function answer(w: Worker, id: number): Promise<WorkerAnswer> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: WorkerAnswer | { ready: true }) => {
      if ('id' in m && m.id === id) {
        w.off('message', onMessage);
        resolve(m);
      }
    };
    w.on('message', onMessage);
    w.once('error', reject);
  });
}

describe('the built compile worker', () => {
  it('loads with plain node and compiles a draft to the bundle the sources compile', async () => {
    worker = new Worker(join(ROOT, 'dist/server/compile-worker.js'));
    const snapshot = benchSnapshot(0, benchTools({ distinct: false }).slice(0, 400));
    const issuedAt = '2026-01-02T03:04:05.000Z';
    const compiled = answer(worker, 1);
    worker.postMessage({ id: 1, op: 'compile', snapshot: snapshotText(snapshot), issuedAt });
    const got = await compiled;
    expect(got.error).toBeUndefined();
    const inline = compileBundle(snapshot, { version: 1, previousRevision: null, issuedAt });
    if (!inline.ok) throw new Error('the benchmark draft does not compile');
    expect(got.result).toMatchObject({ op: 'compile', revision: inline.revision, members: inline.members });
  }, 120_000);

  it('answers a request it cannot read with an error, not a crash', async () => {
    const w = worker!;
    const failed = answer(w, 2);
    w.postMessage({ id: 2, op: 'compile', snapshot: '{ not json', issuedAt: '2026-01-02T03:04:05.000Z' });
    const got = await failed;
    expect(got.result).toBeUndefined();
    expect(got.error?.message).toBeTruthy();
    // Still there: the next request is answered (a bundle without a catalog cannot be summarised).
    const summarized = answer(w, 3);
    w.postMessage({ id: 3, op: 'summarize', text: '{}', previous: null });
    const next = await summarized;
    expect(next.result).toBeUndefined();
    expect(next.error?.message).toBeTruthy();
  }, 120_000);
});
