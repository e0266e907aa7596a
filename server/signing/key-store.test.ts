import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeySetVersionMismatchError, KeyStore } from './key-store.ts';
import type { KeySetOrigin } from './key-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Two stores on one keys directory, as two replicas sharing it; `b` records what its listeners hear. */
function twoStores() {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-key-store-'));
  dirs.push(dir);
  return { a: new KeyStore(dir), b: new KeyStore(dir) };
}

function listen(keys: KeyStore): KeySetOrigin[] {
  const heard: KeySetOrigin[] = [];
  keys.onKeySetChanged((origin) => heard.push(origin));
  return heard;
}

describe('KeyStore key-set listeners across processes', () => {
  it('a re-read queued behind the store’s own first use tells no listener of the key set that use already returned', async () => {
    const { a, b } = twoStores();
    // b's first use waits for the cross-process lock while a (holding it, in effect) makes the first keys.
    let entered!: () => void;
    let release!: () => void;
    const inLock = new Promise<void>((r) => (entered = r));
    const released = new Promise<void>((r) => (release = r));
    b.setCrossProcessLock(async (fn) => {
      entered();
      await released;
      return fn();
    });
    const firstUse = b.keySet();
    await inLock;
    expect((await a.keySet()).keySet.version).toBe(1);
    // a's notice of v1 reaches b while b's first use still waits: the re-read queues behind it.
    const reread = b.reload();
    release();
    expect((await firstUse).keySet.version).toBe(1);
    const heard = listen(b);
    await reread;
    expect(heard).toEqual([]);

    await a.rotate();
    await b.reload();
    expect(heard).toEqual(['another-process']);
    expect((await b.keySet()).keySet.version).toBe(2);
  });

  it('a newer key set from another process reaches the listeners once, even when a read finds it before the re-read', async () => {
    const { a, b } = twoStores();
    await a.keySet();
    await b.keySet();
    const heard = listen(b);
    await a.rotate();
    // A request on b reads the directory before a's notice arrives …
    expect((await b.keySet()).keySet.version).toBe(2);
    // … and the notice's re-read (or a second one) tells nothing more.
    await b.reload();
    await b.reload();
    expect(heard).toEqual(['another-process']);
  });

  it('tells the key sets a store signs as its own, never as another process’s', async () => {
    const { a, b } = twoStores();
    const heardA = listen(a);
    await a.keySet();
    await a.rotate();
    await a.reload();
    expect(heardA).toEqual(['this-process', 'this-process']);
    // b opened the directory after v1 and v2 existed: its starting point, not a change.
    const heardB = listen(b);
    expect((await b.keySet()).keySet.version).toBe(2);
    await b.reload();
    expect(heardB).toEqual([]);
  });
});

describe('KeyStore changes conditional on the key-set version', () => {
  /** One lock both stores hold for a change, as the advisory lock replicas share. */
  function sharedLock() {
    let tail: Promise<unknown> = Promise.resolve();
    return <T>(fn: () => Promise<T>): Promise<T> => {
      const run = tail.then(fn, fn);
      tail = run.catch(() => undefined);
      return run;
    };
  }

  it('of two replicas changing the key set they both saw, only the first changes it; the other learns the version now', async () => {
    const { a, b } = twoStores();
    const lock = sharedLock();
    a.setCrossProcessLock(lock);
    b.setCrossProcessLock(lock);
    const seen = (await a.keySet()).keySet.version;
    expect((await b.keySet()).keySet.version).toBe(seen);
    const outcomes = await Promise.allSettled([a.rotate({ ifKeySetVersion: seen }), b.rotate({ ifKeySetVersion: seen })]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0].reason).toBeInstanceOf(KeySetVersionMismatchError);
    expect(lost[0].reason).toMatchObject({ expected: seen, current: seen + 1 });
    expect((await a.list()).filter((k) => k.status === 'next')).toHaveLength(1);
    expect((await b.keySet()).keySet.version).toBe(seen + 1);
  });

  it('refuses a stale version before any other check, and runs nothing before retiring', async () => {
    const { a } = twoStores();
    const signer = (await a.signer()).kid;
    const next = await a.rotate({ ifKeySetVersion: 1 });
    expect(next.keySetVersion).toBe(2);
    const promoted = await a.promote(next.kid, { ifKeySetVersion: 2 });
    expect(promoted).toMatchObject({ previous: signer, keySetVersion: 3 });
    let ran = false;
    const beforeRetiring = async () => {
      ran = true;
    };
    await expect(a.retire(signer, { ifKeySetVersion: 2, beforeRetiring })).rejects.toThrow('the key set is at version 3, not 2');
    // A state error too is second to the version: the signing key is refused as stale, not as signing.
    await expect(a.retire(next.kid, { ifKeySetVersion: 2 })).rejects.toBeInstanceOf(KeySetVersionMismatchError);
    await expect(a.promote(undefined, { ifKeySetVersion: 1 })).rejects.toBeInstanceOf(KeySetVersionMismatchError);
    expect(ran).toBe(false);
    expect((await a.list()).find((k) => k.kid === signer)?.status).toBe('active');
    const retired = await a.retire(signer, { ifKeySetVersion: 3, beforeRetiring });
    expect(ran).toBe(true);
    expect(retired).toMatchObject({ key: { kid: signer, status: 'active' }, keySetVersion: 4 });
    expect((await a.keySet()).keySet.version).toBe(4);
  });
});
