import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { FileUsedReceipts } from '../../runtime/client/used-receipts.ts';

// The attack: a receipt allows one call, and the used ids live in the cache directory. Two
// runtimes sharing that directory (gateway replicas, an SDK app's worker processes) each loaded
// the file when they started: without reading it again, each would let the same receipt through
// once, and the last to write would erase what the other had recorded.
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function cacheDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'used-receipts-'));
  dirs.push(d);
  return d;
}

const now = Date.parse('2026-01-01T00:00:00Z');
const until = now + 900_000;

describe('used receipts shared through a cache directory', () => {
  it('refuses in one process a receipt another process sharing the directory used after both started', () => {
    const dir = cacheDir();
    const first = new FileUsedReceipts(dir, 'acme');
    const second = new FileUsedReceipts(dir, 'acme');
    expect(first.use('receipt-1', until, now)).toBe(true);
    expect(second.has('receipt-1', now + 1)).toBe(true);
    expect(second.use('receipt-1', until, now + 1)).toBe(false);
  });

  it('keeps every process’s used ids on disk, so a restart refuses both', () => {
    const dir = cacheDir();
    const first = new FileUsedReceipts(dir, 'acme');
    const second = new FileUsedReceipts(dir, 'acme');
    expect(first.use('receipt-1', until, now)).toBe(true);
    expect(second.use('receipt-2', until, now)).toBe(true);
    const restarted = new FileUsedReceipts(dir, 'acme');
    expect(restarted.use('receipt-1', until, now + 2)).toBe(false);
    expect(restarted.use('receipt-2', until, now + 2)).toBe(false);
  });

  it('keeps tenants apart and forgets an id once its receipt expired', () => {
    const dir = cacheDir();
    expect(new FileUsedReceipts(dir, 'acme').use('receipt-1', until, now)).toBe(true);
    expect(new FileUsedReceipts(dir, 'globex').use('receipt-1', until, now)).toBe(true);
    expect(new FileUsedReceipts(dir, 'acme').use('receipt-1', until, until + 1)).toBe(true);
  });
});

// The same attack at the same instant: processes that check and record a receipt at once must not
// both let it through. Four processes spend the same 300 receipt ids together, each as fast as it can.
describe('used receipts recorded by an earlier release', () => {
  it('still refuses an id the single used-approvals file of an earlier release holds', () => {
    const dir = cacheDir();
    writeFileSync(join(dir, 'acme.used-approvals.json'), JSON.stringify({ format: 'toolgate.used-approvals/v1', used: { 'receipt-old': until } }));
    const used = new FileUsedReceipts(dir, 'acme');
    expect(used.has('receipt-old', now)).toBe(true);
    expect(used.use('receipt-old', until, now)).toBe(false);
    expect(used.use('receipt-new', until, now)).toBe(true);
  });
});

describe('used receipts spent at once by several processes', () => {
  it('lets each receipt through exactly once, whichever process comes first', async () => {
    const dir = cacheDir();
    const ids = Array.from({ length: 300 }, (_, i) => `receipt-${i}`);
    const script = join(dir, 'spend.mjs');
    writeFileSync(
      script,
      `import { FileUsedReceipts } from ${JSON.stringify(join(import.meta.dirname, '../../runtime/client/used-receipts.ts'))};
const [dir, startAt] = process.argv.slice(2);
const used = new FileUsedReceipts(dir, 'acme');
const ids = ${JSON.stringify(ids)};
while (Date.now() < Number(startAt)) {}
const won = [];
for (const id of ids) if (used.use(id, ${until}, ${now})) won.push(id);
process.stdout.write(JSON.stringify(won));`,
    );
    const startAt = Date.now() + 4000;
    const runs = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), script, dir, String(startAt + (i % 2))], { timeout: 60_000 }),
      ),
    );
    const wins = new Map<string, number>();
    for (const r of runs) for (const id of JSON.parse(r.stdout) as string[]) wins.set(id, (wins.get(id) ?? 0) + 1);
    expect([...wins.values()].filter((n) => n > 1)).toEqual([]);
    expect(wins.size).toBe(ids.length);
  }, 90_000);
});
