import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../../gateway/upstream.ts';
import { eventually } from './gateway-process.ts';

// A hostile upstream may send tools/list_changed without end. The gateway lists again for it, one
// listing at a time; a flood must not queue one listing per notification.

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'list-flood-upstream.ts');

let upstream: Upstream;

beforeAll(async () => {
  upstream = new Upstream('flood', { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE] }, { relistMs: 600_000 });
  await upstream.start();
});
afterAll(async () => {
  await upstream?.close();
});

/** How many tools/list requests the upstream has served. */
async function listings(): Promise<number> {
  const r = await upstream.call('listings', {}, 5_000);
  if (!r.ok) throw new Error(r.message);
  return Number((r.result.content[0] as { text: string }).text);
}

describe('an upstream that floods tools/list_changed', () => {
  it('is listed again at most twice for 500 notifications at once, and stays up', async () => {
    expect(upstream.status().state).toBe('ready');
    const before = await listings();
    const flood = await upstream.call('flood', { count: 500 }, 5_000);
    expect(flood.ok).toBe(true);
    // Settled: the count no longer moves between two looks.
    const after = await eventually(async () => {
      const a = await listings();
      await new Promise((r) => setTimeout(r, 300));
      const b = await listings();
      return a === b && b > before ? b : undefined;
    });
    expect(after - before).toBeGreaterThanOrEqual(1);
    expect(after - before).toBeLessThanOrEqual(2);
    expect(upstream.status().state).toBe('ready');
  });
});
