import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { toolStore } from '../store/inventory.ts';
import { Compiler } from './compiler.ts';
import { WARM_BEFORE_LISTEN_MAX_TOOLS, warmBeforeListening as warmBeforeListeningWith, warmCompiler } from './warm-up.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('warming the compiler at start', () => {
  it('warms before answering up to the bound of live tools, and after listening above it', async () => {
    const db = t.deps.database.db;
    // A compiler that compiles every draft inline: this thread is what must be warm.
    const inline = new Compiler({ workerMinTools: Number.POSITIVE_INFINITY, logger: t.deps.logger });
    const warmBeforeListening = (d: typeof db) => warmBeforeListeningWith(d, inline);
    expect(await warmBeforeListening(db)).toBe(true);
    const live = (await toolStore.list(db)).filter((tool) => tool.status !== 'removed').length;
    const now = new Date().toISOString();
    const add = async (from: number, count: number, status: 'active' | 'removed') => {
      await t.deps.database.transaction(async (tx) => {
        for (let i = from; i < from + count; i++) {
          const id = `core__warm-${i}`;
          await toolStore.insert(tx, id, { id, description: 'x', inputSchema: { type: 'object' }, effect: 'read_only', status }, now);
        }
      });
    };
    await add(0, WARM_BEFORE_LISTEN_MAX_TOOLS - live, 'active');
    expect(await warmBeforeListening(db)).toBe(true);
    // Removed tools never enter a draft, so they cost the warm-up nothing.
    await add(WARM_BEFORE_LISTEN_MAX_TOOLS, 50, 'removed');
    expect(await warmBeforeListening(db)).toBe(true);
    await add(WARM_BEFORE_LISTEN_MAX_TOOLS + 50, 1, 'active');
    expect(await warmBeforeListening(db)).toBe(false);
  });

  it('leaves a large inventory to the compile worker, which warms itself', async () => {
    const db = t.deps.database.db;
    const compiler = new Compiler({ workerMinTools: 10, logger: t.deps.logger });
    const live = (await toolStore.list(db)).filter((tool) => tool.status !== 'removed').length;
    expect(live).toBeGreaterThan(10);
    expect(await warmBeforeListeningWith(db, compiler)).toBe(false);
    expect(compiler.worker).toBeNull();
  });

  it("warms a large inventory in the worker: the first tenant's draft is compiled there and kept", async () => {
    const db = t.deps.database.db;
    const compiler = new Compiler({ workerMinTools: 10, logger: t.deps.logger });
    try {
      await warmCompiler(db, compiler);
      expect(compiler.worker).not.toBeNull();
      expect(compiler.compilesSoFar).toBe(1);
      const first = (await db.selectFrom('tenants').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow()).id;
      // The first request for that draft finds it compiled.
      await compiler.compileDraft(db, first);
      expect(compiler.compilesSoFar).toBe(1);
    } finally {
      await compiler.close();
    }
  }, 120_000);
});
