import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../test/support/harness.ts';
import { run as mirrorCommand } from '../cli/commands/mirror.ts';
import { publishBundle } from '../compiler/publish.ts';
import type { ServedBundle } from './bundle-cache.ts';
import { type PublishedEvent, PublishEvents } from './publish-events.ts';
import { StaticMirror, startStaticMirror, writeFileAtomic } from './static-mirror.ts';

const TENANT = 'acme-research';
const meta = { actor: 'system', requestId: null, reason: 'mirror test' };
let t: TestApp;
let mirrorDir: string;
beforeAll(async () => {
  t = await startTestApp();
  mirrorDir = mkdtempSync(join(tmpdir(), 'toolgate-mirror-'));
});
afterAll(async () => {
  await t.close();
  rmSync(mirrorDir, { recursive: true, force: true });
});

async function served(path: string) {
  const r = await t.request('GET', path);
  return { text: r.text, signature: r.headers.get('toolgate-signature') ?? '' };
}

async function changeDraft(description: string): Promise<void> {
  const cur = await t.request('GET', '/v1/tools/core__knowledge-query');
  const r = await t.request('PATCH', '/v1/tools/core__knowledge-query', { body: { description }, headers: { 'if-match': cur.headers.get('etag')! } });
  expect(r.status).toBe(200);
}

/** Waits until the mirror's latest.json carries `version` (the mirror is written after the commit). */
async function mirroredVersion(dir: string, version: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const file = join(dir, TENANT, 'latest.json');
    if (existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).version === version) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the mirror never reached version ${version}`);
}

describe('writeFileAtomic', () => {
  it('replaces a file whole and leaves no temp file behind', () => {
    const file = join(mirrorDir, 'atomic.txt');
    writeFileAtomic(file, 'first');
    writeFileAtomic(file, 'second');
    expect(readFileSync(file, 'utf8')).toBe('second');
    expect(readdirSync(mirrorDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('the static mirror beside a server', () => {
  it('writes the key set at start and each publish as the exact bytes the server serves', async () => {
    const keys = t.deps.keys;
    const dir = join(mirrorDir, 'live');
    const stop = startStaticMirror(new StaticMirror(dir, t.deps.database.db, keys), keys, pino({ level: 'silent' }), t.deps.publishEvents);
    try {
      await changeDraft('Mirrored after a publish');
      const outcome = await publishBundle(t.deps, meta, TENANT, {}, keys);
      await mirroredVersion(dir, outcome.version);
      const latest = await served(`/v1/tenants/${TENANT}/bundles/latest`);
      expect(readFileSync(join(dir, TENANT, 'latest.json'), 'utf8')).toBe(latest.text);
      expect(readFileSync(join(dir, TENANT, 'latest.json.jws'), 'utf8')).toBe(latest.signature);
      expect(readFileSync(join(dir, TENANT, `${outcome.version}.json`), 'utf8')).toBe(latest.text);
      const keySet = await served('/.well-known/toolgate-keyset.json');
      expect(readFileSync(join(dir, 'keyset.json'), 'utf8')).toBe(keySet.text);
      expect(readdirSync(join(dir, TENANT)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      stop();
    }
  });

  it('writes the key set again after each key-set change', async () => {
    const keys = t.deps.keys;
    const dir = join(mirrorDir, 'keyset');
    const stop = startStaticMirror(new StaticMirror(dir, t.deps.database.db, keys), keys, pino({ level: 'silent' }), t.deps.publishEvents);
    const mirrored = () => (existsSync(join(dir, 'keyset.json')) ? JSON.parse(readFileSync(join(dir, 'keyset.json'), 'utf8')).version : 0);
    try {
      const next = await keys.reissueKeySet();
      for (let i = 0; i < 200 && mirrored() !== next.keySet.version; i++) await new Promise((r) => setTimeout(r, 10));
      expect(readFileSync(join(dir, 'keyset.json'))).toEqual(next.bytes);
      expect(readFileSync(join(dir, 'keyset.json.jws'), 'utf8')).toBe(next.signature);
    } finally {
      stop();
    }
  });

  it('never fails a publish when the mirror cannot be written, and catches up with the next publish', async () => {
    const keys = t.deps.keys;
    const dir = join(mirrorDir, 'blocked');
    // A plain file where the tenant's directory belongs: every write under it fails.
    await new StaticMirror(dir, t.deps.database.db, keys).writeKeySet();
    writeFileSync(join(dir, TENANT), 'in the way');
    const errors: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
    const stop = startStaticMirror(new StaticMirror(dir, t.deps.database.db, keys), keys, logger, t.deps.publishEvents);
    try {
      await changeDraft('Published while the mirror is blocked');
      const first = await publishBundle(t.deps, meta, TENANT, {}, keys);
      expect(first.created).toBe(true);
      for (let i = 0; i < 200 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(errors.join('')).toContain('static mirror: writing the bundle failed');
      rmSync(join(dir, TENANT));
      await changeDraft('Published once the mirror is writable again');
      const second = await publishBundle(t.deps, meta, TENANT, {}, keys);
      await mirroredVersion(dir, second.version);
      expect(JSON.parse(readFileSync(join(dir, TENANT, 'latest.json'), 'utf8')).version).toBe(second.version);
    } finally {
      stop();
    }
  });
  it("writes the latest from the database when another replica's notice is queued before this process's older publish", async () => {
    const keys = t.deps.keys;
    // This process's publish of one version (its bundle as handed over), then another replica's of the next.
    const handed: ServedBundle[] = [];
    const capture = (e: PublishedEvent) => void (e.served && handed.push(e.served));
    t.deps.publishEvents.on('published', capture);
    try {
      await changeDraft('Published here');
      await publishBundle(t.deps, meta, TENANT, {}, keys);
    } finally {
      t.deps.publishEvents.off('published', capture);
    }
    await changeDraft('Published by another replica');
    const newest = await publishBundle(t.deps, meta, TENANT, {}, keys);
    const older = handed.at(-1)!;
    expect(older.version).toBe(newest.version - 1);
    const events = new PublishEvents();
    const dir = join(mirrorDir, 'replicas');
    const stop = startStaticMirror(new StaticMirror(dir, t.deps.database.db, keys), keys, pino({ level: 'silent' }), events);
    try {
      // Heard in this order in one turn: the newer notice (no bytes: read them), then the older handed-over bundle.
      events.published(TENANT, newest.version);
      events.published(TENANT, older.version, older);
      await mirroredVersion(dir, newest.version);
      expect(JSON.parse(readFileSync(join(dir, TENANT, 'latest.json'), 'utf8')).revision).toBe(newest.revision);
    } finally {
      stop();
    }
  });
});

describe('toolgate mirror --dir', () => {
  const env = () => ({ TOOLGATE_DB: join(t.dir, 'toolgate.db'), TOOLGATE_KEYS_DIR: t.deps.config.keysDir });

  it('writes the key set and the latest bundle of every tenant once', async () => {
    const dir = join(mirrorDir, 'cli');
    const lines: string[] = [];
    const code = await mirrorCommand(['--dir', dir], { log: (l) => lines.push(l), error: (l) => lines.push(l) }, env());
    expect(code).toBe(0);
    expect(lines.join('\n')).toMatch(/wrote key set v\d+ and the latest bundle of \d+ tenant/);
    const latest = await served(`/v1/tenants/${TENANT}/bundles/latest`);
    expect(readFileSync(join(dir, TENANT, 'latest.json'), 'utf8')).toBe(latest.text);
    expect(readFileSync(join(dir, TENANT, 'latest.json.jws'), 'utf8')).toBe(latest.signature);
    expect(existsSync(join(dir, 'keyset.json.jws'))).toBe(true);
  });

  it('refuses to run without --dir', async () => {
    const errors: string[] = [];
    expect(await mirrorCommand([], { log: () => undefined, error: (l) => errors.push(l) }, env())).toBe(2);
    expect(errors.join('')).toContain('usage: toolgate mirror --dir DIR');
  });
});
