import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
