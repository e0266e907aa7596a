// The rotation drill: 20 SDK clients configured with the root key only, long-polling a real
// server, live through a staged key rotation, a retirement and a root rotation without a single
// refusal; then each kind of bad key material is refused with its own reason.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { createBundleClient } from '../../runtime/client/index.ts';
import type { BundleClient, BundleClientOptions, RootKey } from '../../runtime/client/index.ts';
import { run as keysCli } from '../../server/cli/commands/keys.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { signBundle, signKeySet } from '../../server/signing/sign.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import type { LiveServer } from '../distribution/live-server.ts';

const TENANT = 'acme-research';
let srv: LiveServer;
let token: string;
let root: RootKey[];
const clients: BundleClient[] = [];
const dirs: string[] = [];

/** A key change through the API, naming the key set as `GET /v1/keys` shows it now (its ETag as If-Match). */
async function changeKeys(path: string, body: object) {
  const etag = (await srv.api('GET', '/v1/keys')).headers.get('etag') ?? '';
  return srv.api('POST', path, { body, headers: { 'If-Match': etag } });
}

beforeAll(async () => {
  srv = await startLiveServer({ seed: true });
  token = await srv.tokenFor('runtime', [TENANT]);
  // Out of band: the operator hands runtimes the root public key, nothing else.
  root = (await new KeyStore(srv.deps.config.keysDir).keySet()).keySet.roots;
});

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await srv.dispose();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function client(extra: Partial<BundleClientOptions> = {}): Promise<BundleClient> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'toolgate-rotation-'));
  dirs.push(cacheDir);
  const c = await createBundleClient({
    url: srv.url,
    tenant: TENANT,
    token,
    trustedRoots: root,
    cacheDir,
    waitSeconds: 5,
    backoff: { initialMs: 20, maxMs: 200 },
    statusIntervalMs: 0,
    ...extra,
  });
  clients.push(c);
  return c;
}

async function until(what: string | (() => string), cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function publish(reason: string): Promise<number> {
  const r = await srv.api('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason, refresh: true } });
  expect(r.status, r.text).toBe(201);
  return r.json.version as number;
}

const signerOf = (c: BundleClient) => JSON.parse(Buffer.from(c.current()!.signature.split('.')[0], 'base64url').toString()).kid as string;

async function keysCommand(args: string[]): Promise<string[]> {
  const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
  process.env.TOOLGATE_DB = join(srv.dir, 'toolgate.db');
  process.env.TOOLGATE_KEYS_DIR = srv.deps.config.keysDir;
  const lines: string[] = [];
  try {
    const code = await keysCli(args, { log: (l) => lines.push(l), error: (l) => lines.push(l) });
    expect(code, lines.join('\n')).toBe(0);
    return lines;
  } finally {
    process.env.TOOLGATE_DB = saved.db;
    process.env.TOOLGATE_KEYS_DIR = saved.keys;
    if (saved.db === undefined) delete process.env.TOOLGATE_DB;
    if (saved.keys === undefined) delete process.env.TOOLGATE_KEYS_DIR;
  }
}

describe('rotation drill', () => {
  it('keeps 20 root-configured clients on the latest version through rotate, promote, retire and a root rotation, with zero refusals', async () => {
    const first = await publish('drill start');
    const fleet = await Promise.all(Array.from({ length: 20 }, () => client()));
    const refusals: string[] = [];
    for (const c of fleet) c.on('refused', (r) => refusals.push(`${r.code}: ${r.message}`));
    await until('every client on the first version', () => fleet.every((c) => c.status().version === first));
    const oldKid = signerOf(fleet[0]);

    // Stage: a next key is published in the key set before it ever signs.
    const rotated = await changeKeys('/v1/keys/rotate', { reason: 'drill: scheduled rotation' });
    expect(rotated.status, rotated.text).toBe(201);
    const newKid = rotated.json.kid as string;
    const staged = await publish('still signed by the old key');
    await until('every client on the staged version', () => fleet.every((c) => c.status().version === staged));
    expect(signerOf(fleet[0])).toBe(oldKid);

    // Promote: the next key signs; clients meet an unknown kid (or know it from the key set already) and accept.
    const promoted = await changeKeys(`/v1/keys/${newKid}/promote`, { reason: 'drill: promote' });
    expect(promoted.status, promoted.text).toBe(200);
    const afterPromote = await publish('first bundle signed by the new key');
    await until('every client on the promoted version', () => fleet.every((c) => c.status().version === afterPromote));
    expect(fleet.every((c) => signerOf(c) === newKid)).toBe(true);

    // Retire the old key once no tenant's latest bundle uses it (re-issuing any tenant that still does).
    const retired = await changeKeys(`/v1/keys/${oldKid}/retire`, { reason: 'drill: retire', reissue: true });
    expect(retired.status, retired.text).toBe(200);
    const keyset = await srv.api('GET', '/.well-known/toolgate-keyset.json', { token: null });
    expect(keyset.json.keys.find((k: { kid: string }) => k.kid === oldKid).status).toBe('retired');
    expect((await srv.api('GET', '/.well-known/jwks.json', { token: null })).json.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid]);

    // Root rotation (CLI), then a signing-key rotation signed by the new root: clients follow the chain.
    await keysCommand(['rotate-root', '--reason', 'drill: root rotation']);
    const newRoot = (await srv.api('GET', '/.well-known/toolgate-keyset.json', { token: null })).json.roots[0].kid;
    expect(newRoot).not.toBe(root[0].kid);
    await keysCommand(['rotate', '--reason', 'drill: rotation under the new root']);
    await keysCommand(['promote', '--reason', 'drill: promote under the new root']);
    const last = await publish('signed by a key only the new root vouches for');
    await until('every client on the last version', () => fleet.every((c) => c.status().version === last));

    expect(refusals).toEqual([]);
    expect(fleet.every((c) => c.status().health === 'fresh' && c.keySet()?.roots[0].kid === newRoot)).toBe(true);

    // Every step is in the audit log.
    const audit = await srv.api('GET', '/v1/audit?entityType=key&limit=50');
    expect(audit.json.items.map((e: { action: string }) => e.action)).toEqual(['rotate', 'promote', 'retire', 'rotate', 'promote']);
    const rootEvents = await srv.api('GET', '/v1/audit?entityType=keyset');
    expect(rootEvents.json.items.map((e: { action: string; after: { root?: string } }) => [e.action, e.after.root])).toEqual([['rotate', newRoot]]);
  });

  it('refuses a bundle signed by a retired key, and key sets signed by a non-root key, older than seen, or expired, each with its own reason', async () => {
    const keysDir = srv.deps.config.keysDir;
    const store = new KeyStore(keysDir);
    const current = await store.keySet();
    const retiredKid = (await store.list()).find((k) => k.status === 'retired')!.kid;
    const retiredFile = JSON.parse(readFileSync(join(keysDir, `${retiredKid}.json.retired`), 'utf8'));
    const retiredKey = { kid: retiredKid, privateKey: await importJWK(retiredFile.privateJwk, 'EdDSA') };
    const signer = await store.signer();
    const rootFile = readdirRoot(keysDir);
    const rootKey = { kid: rootFile.kid, privateKey: await importJWK(rootFile.privateJwk, 'EdDSA') };

    // A man in the middle that can swap what the server answers; `mode` picks the forgery.
    type Mode = 'none' | 'retired-bundle' | 'non-root' | 'older' | 'expired';
    let mode = 'none' as Mode;
    const latest = await srv.api('GET', `/v1/tenants/${TENANT}/bundles/latest`, { token });
    type Forgery = { signature: string; body?: Buffer };
    const forgeries: Record<Exclude<Mode, 'none'>, () => Promise<Forgery>> = {
      'retired-bundle': async () => ({ signature: await signBundle(latest.bytes, retiredKey) }),
      'non-root': async () => ({ body: current.bytes, signature: await signKeySet(current.bytes, signer) }),
      older: async () => {
        // Genuine and signed by the current root, only older than what the client has seen: a replay.
        const previous = await store.keySetVersion(current.keySet.version - 1);
        return { body: previous!.bytes, signature: previous!.signature };
      },
      expired: async () => {
        const doc = { ...current.keySet, version: current.keySet.version + 1, issuedAt: '2020-01-01T00:00:00.000Z', expiresAt: '2020-02-01T00:00:00.000Z' };
        const bytes = Buffer.from(canonicalJson(doc));
        return { body: bytes, signature: await signKeySet(bytes, rootKey) };
      },
    };
    const forging: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const url = String(input);
      const isKeySet = url.includes('/.well-known/toolgate-keyset.json');
      const isBundle = url.includes('/bundles/');
      if (mode === 'none' || (mode === 'retired-bundle' ? !isBundle : !isKeySet) || res.status !== 200) return res;
      const forged = await forgeries[mode]();
      const headers = new Headers(res.headers);
      headers.set('toolgate-signature', forged.signature);
      const body = forged.body ?? Buffer.from(await res.arrayBuffer());
      headers.delete('content-length');
      return new Response(new Uint8Array(body), { status: 200, headers });
    };

    const reasons: Record<string, string[]> = {};
    const watch = (c: BundleClient, name: string) => c.on('refused', (r) => (reasons[name] ??= []).push(r.code));

    mode = 'retired-bundle';
    const a = await client({ fetch: forging });
    watch(a, 'retired-bundle');
    await until('a retired-key refusal', () => (reasons['retired-bundle'] ?? []).includes('retired_key'));
    expect(a.current()).toBeUndefined();

    for (const m of ['non-root', 'older', 'expired'] as const) {
      mode = 'none';
      const c = await client({ fetch: forging, keySetRefreshMs: 100 });
      watch(c, m);
      await until(`${m}: the genuine key set first`, () => c.keySet()?.version === current.keySet.version && c.status().health === 'fresh');
      mode = m;
      await until(`${m}: a refusal`, () => (reasons[m] ?? []).length > 0);
      // The verified key set stays in use; the client keeps its bundle.
      expect(c.keySet()?.version).toBe(current.keySet.version);
      expect(c.current()).toBeDefined();
    }
    expect(reasons['non-root']![0]).toBe('keyset_untrusted_root');
    expect(reasons.older![0]).toBe('keyset_rollback');
    expect(reasons.expired![0]).toBe('keyset_expired');
  });
});

describe('a held bundle whose key is retired', () => {
  it('is no longer trusted once the key set says so, and the client moves to the re-issued bundle', async () => {
    let frozen = false;
    // Bundles cannot be fetched while frozen; the key set still can.
    const freezing: typeof fetch = async (input, init) => {
      const isBundle = String(input).includes('/bundles/');
      if (frozen && isBundle) throw new TypeError('fetch failed (bundles frozen by the test)');
      const res = await fetch(input, init);
      // A long-poll sent before the freeze must not deliver the re-issued bundle either.
      if (frozen && isBundle) throw new TypeError('fetch failed (bundles frozen by the test)');
      return res;
    };
    await publish('a bundle for the client to hold');
    const c = await client({ fetch: freezing, keySetRefreshMs: 100 });
    await until('a bundle', () => c.status().health === 'fresh');
    const held = signerOf(c);
    const refused: string[] = [];
    c.on('refused', (r) => refused.push(r.code));
    frozen = true;
    const next = (await changeKeys('/v1/keys/rotate', { reason: 'retire while a client holds an old bundle' })).json.kid;
    expect((await changeKeys(`/v1/keys/${next}/promote`, { reason: 'promote' })).status).toBe(200);
    const retired = await changeKeys(`/v1/keys/${held}/retire`, { reason: 'retire', reissue: true });
    expect(retired.status, retired.text).toBe(200);
    await until(
      () => `the held bundle dropped (refusals so far: ${refused.join(', ') || 'none'}; status ${JSON.stringify(c.status())})`,
      () => refused.includes('retired_key'),
    );
    expect(c.current()).toBeUndefined();
    expect(c.decide({ subject: 'agent:research-bot' }, { name: 'core__knowledge-query', arguments: '{}' })).toMatchObject({
      decision: 'deny',
      errorCode: 'policy_denied',
    });
    frozen = false;
    await until('the re-issued bundle', () => c.status().health === 'fresh' && signerOf(c) === next);
  });
});

describe('client configuration', () => {
  it('takes root keys or a fixed JWKS, not both and not neither', async () => {
    const base = { url: srv.url, tenant: TENANT, token, cacheDir: join(tmpdir(), 'toolgate-never-created') };
    await expect(createBundleClient({ ...base })).rejects.toThrow(/trustedRoots .* or trustedKeys/);
    await expect(createBundleClient({ ...base, trustedRoots: root, trustedKeys: { keys: [] } })).rejects.toThrow(/not both/);
  });
});

function readdirRoot(keysDir: string): { kid: string; privateJwk: Record<string, string> } {
  const name = readdirSync(keysDir).find((n) => n.endsWith('.root.json'))!;
  return JSON.parse(readFileSync(join(keysDir, name), 'utf8'));
}
