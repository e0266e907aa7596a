import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { toolStore } from '../store/inventory.ts';
import { WARM_BEFORE_LISTEN_MAX_TOOLS, warmBeforeListening } from './warm-up.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

describe('warming the compiler at start', () => {
  it('warms before answering up to the bound of live tools, and after listening above it', async () => {
    const db = t.deps.database.db;
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
});
