import { existsSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as keysCli } from '../../server/cli/commands/keys.ts';
import { run as verifyCli } from '../../server/cli/commands/verify.ts';
import { maintainKeys } from '../../server/signing/key-changes.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { startTestApp } from '../support/harness.ts';
import type { TestApp } from '../support/harness.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function cli(run: typeof keysCli, args: string[]): Promise<{ code: number; out: string }> {
  const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
  process.env.TOOLGATE_DB = join(t.dir, 'toolgate.db');
  process.env.TOOLGATE_KEYS_DIR = t.deps.config.keysDir;
  const lines: string[] = [];
  try {
    const code = await run(args, { log: (l) => lines.push(l), error: (l) => lines.push(l) });
    return { code, out: lines.join('\n') };
  } finally {
    for (const [k, v] of [
      ['TOOLGATE_DB', saved.db],
      ['TOOLGATE_KEYS_DIR', saved.keys],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const rootFileIn = (dir: string) => readdirSync(dir).find((n) => n.endsWith('.root.json'));

describe('toolgate keys', () => {
  it('lists keys with status, the key set and where the root is; refuses bad arguments', async () => {
    const list = await cli(keysCli, ['list']);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/active\s+\S+\s+signing/);
    expect(list.out).toMatch(/key set v1, expires .*; root \S+$/m);
    expect((await cli(keysCli, ['rotate', '--promote-after', 'soon'])).code).toBe(2);
    expect((await cli(keysCli, ['promote', 'a', 'b'])).code).toBe(2);
    expect((await cli(keysCli, ['shuffle'])).code).toBe(2);
    const root = await cli(keysCli, ['root']);
    expect(JSON.parse(root.out).keys[0]).toEqual({ kid: expect.any(String), kty: 'OKP', crv: 'Ed25519', x: expect.any(String) });
  });

  it('promotes a key rotated with --promote-after when the scheduler finds it due, audited as system', async () => {
    const r = await cli(keysCli, ['rotate', '--promote-after', '0s', '--reason', 'scheduled']);
    expect(r.code, r.out).toBe(0);
    const kid = /^(\S+) added as next/.exec(r.out)![1];
    await maintainKeys({ ...t.deps, logger: pino({ level: 'silent' }) }, new KeyStore(t.deps.config.keysDir));
    const keys = (await t.request('GET', '/v1/keys')).json.keys;
    expect(keys.find((k: { kid: string }) => k.kid === kid)).toMatchObject({ status: 'active', signing: true });
    const events = (await t.request('GET', '/v1/audit?entityType=key&action=promote')).json.items;
    expect(events.at(-1)).toMatchObject({ actor: 'system', entityId: kid, reason: expect.stringMatching(/scheduled promotion/) });
  });

  it('re-issues the key set before it expires, with a later version', async () => {
    const store = new KeyStore(t.deps.config.keysDir, { keySetTtlSeconds: 2 });
    await store.reissueKeySet();
    const before = (await store.keySet()).keySet;
    await new Promise((r) => setTimeout(r, 1100));
    await maintainKeys({ ...t.deps, logger: pino({ level: 'silent' }) }, store);
    const after = (await store.keySet()).keySet;
    expect(after.version).toBe(before.version + 1);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.parse(before.expiresAt));
    expect(after.keys).toEqual(before.keys);
  });

  it('with the root kept off the server: refuses without --root-key, works with it, and rotates the root into a new file', async () => {
    const keysDir = t.deps.config.keysDir;
    const offline = join(t.dir, 'root-offline.json');
    renameSync(join(keysDir, rootFileIn(keysDir)!), offline);
    const refused = await cli(keysCli, ['rotate']);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/not on this server.*--root-key FILE/);
    expect((await cli(keysCli, ['list'])).out).toMatch(/\(not on this machine\)/);
    const ok = await cli(keysCli, ['rotate', '--root-key', offline, '--reason', 'offline root']);
    expect(ok.code, ok.out).toBe(0);
    const newRoot = join(t.dir, 'root-2.json');
    const rotated = await cli(keysCli, ['rotate-root', '--root-key', offline, '--new-root-key', newRoot]);
    expect(rotated.code, rotated.out).toBe(0);
    expect(statSync(newRoot).mode & 0o777).toBe(0o600);
    expect(rootFileIn(keysDir)).toBeUndefined();
    // The old root no longer signs key sets; the new one does.
    expect((await cli(keysCli, ['reissue', '--root-key', offline])).code).toBe(1);
    expect((await cli(keysCli, ['reissue', '--root-key', newRoot])).code).toBe(0);
    expect((await cli(keysCli, ['promote', '--root-key', join(t.dir, 'missing.json')])).out).toMatch(/no root key file/);
  });
});

describe('toolgate verify --root', () => {
  it('checks the key set against the root, then the bundle against the key set', async () => {
    expect((await t.request('POST', '/v1/tenants/acme-research/bundles', { body: { reason: 'verify cli' } })).status).toBe(201);
    const bundle = await t.request('GET', '/v1/tenants/acme-research/bundles/latest');
    const keyset = await t.request('GET', '/.well-known/toolgate-keyset.json', { token: null });
    const file = (name: string, data: string) => {
      writeFileSync(join(t.dir, name), data);
      return join(t.dir, name);
    };
    const files = {
      bundle: file('bundle.json', bundle.text),
      sig: file('bundle.jws', bundle.headers.get('toolgate-signature')!),
      keyset: file('keyset.json', keyset.text),
      root: file('root.json', JSON.stringify({ keys: keyset.json.roots })),
    };
    file('keyset.jws', keyset.headers.get('toolgate-signature')!);
    const ok = await cli(verifyCli, ['--bundle', files.bundle, '--signature', files.sig, '--root', files.root, '--keyset', files.keyset]);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/key set v\d+ verified against root/);
    expect(ok.out).toMatch(/^ok: tenant acme-research/m);

    const strangerRoot = file('stranger-root.json', JSON.stringify((await new KeyStore(join(t.dir, 'stranger')).keySet()).keySet.roots[0]));
    const wrongRoot = await cli(verifyCli, ['--bundle', files.bundle, '--signature', files.sig, '--root', strangerRoot, '--keyset', files.keyset]);
    expect(wrongRoot.code).toBe(1);
    expect(wrongRoot.out).toMatch(/keyset_untrusted_root/);
    const older = await cli(verifyCli, [
      '--bundle',
      files.bundle,
      '--signature',
      files.sig,
      '--root',
      files.root,
      '--keyset',
      files.keyset,
      '--min-keyset-version',
      '999',
    ]);
    expect(older.out).toMatch(/keyset_rollback/);
    expect((await cli(verifyCli, ['--bundle', files.bundle, '--signature', files.sig, '--root', files.root])).code).toBe(2);
    expect(
      (await cli(verifyCli, ['--bundle', files.bundle, '--signature', files.sig, '--root', files.root, '--keyset', files.keyset, '--jwks', files.root])).code,
    ).toBe(2);
    expect(existsSync(files.keyset)).toBe(true);
  });
});
