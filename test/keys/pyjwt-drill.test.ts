// An independent check outside TypeScript: PyJWT (Debian python3-jwt) verifies the key set
// against the root and a bundle against the key set, exactly as served by a real server.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../server/signing/key-store.ts';
import { signBundle } from '../../server/signing/sign.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import type { LiveServer } from '../distribution/live-server.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'verify-with-pyjwt.py');
const TENANT = 'acme-research';
let srv: LiveServer;

/** A key change through the API, naming the key set as `GET /v1/keys` shows it now (its ETag as If-Match). */
async function changeKeys(path: string, body: object) {
  const etag = (await srv.api('GET', '/v1/keys')).headers.get('etag') ?? '';
  return srv.api('POST', path, { body, headers: { 'If-Match': etag } });
}

beforeAll(async () => {
  srv = await startLiveServer({ seed: true });
});

afterAll(async () => {
  await srv.dispose();
});

function python(files: Record<'root' | 'keyset' | 'keysetJws' | 'bundle' | 'bundleJws', string>, tenant = TENANT) {
  const r = spawnSync(PYTHON, [SCRIPT, files.root, files.keyset, files.keysetJws, files.bundle, files.bundleJws, tenant], { encoding: 'utf8' });
  return { code: r.status, out: (r.stdout + r.stderr).trim() };
}

describe('PyJWT drill', () => {
  it('verifies the key set against the root and the bundle against the key set, and refuses forgeries by name', async () => {
    // A staged rotation first, so the key set holds more than one key and the bundle is signed by a promoted one.
    expect((await changeKeys('/v1/keys/rotate', { reason: 'pyjwt drill' })).status).toBe(201);
    const next = (await srv.api('GET', '/v1/keys')).json.keys.find((k: { status: string }) => k.status === 'next').kid;
    expect((await changeKeys(`/v1/keys/${next}/promote`, { reason: 'pyjwt drill' })).status).toBe(200);
    expect((await srv.api('POST', `/v1/tenants/${TENANT}/bundles`, { body: { reason: 'pyjwt drill' } })).status).toBe(201);

    const keyset = await srv.api('GET', '/.well-known/toolgate-keyset.json', { token: null });
    const bundle = await srv.api('GET', `/v1/tenants/${TENANT}/bundles/latest`);
    const f = (name: string, data: string | Buffer) => {
      const p = join(srv.dir, name);
      writeFileSync(p, data);
      return p;
    };
    const files = {
      root: f('root.json', JSON.stringify({ keys: keyset.json.roots })),
      keyset: f('keyset.json', keyset.bytes),
      keysetJws: f('keyset.jws', keyset.headers.get('toolgate-signature')!),
      bundle: f('bundle.json', bundle.bytes),
      bundleJws: f('bundle.jws', bundle.headers.get('toolgate-signature')!),
    };
    const ok = python(files);
    expect(ok.out).toMatch(
      new RegExp(`^ok: key set v${keyset.json.version} signed by root .*; bundle ${TENANT} v\\d+ sha256:[0-9a-f]{64} signed by ${next} \\(active\\)$`),
    );
    expect(ok.code).toBe(0);

    // A flipped byte in the key set, a key set checked against another root, a bundle signed by a key outside the key set.
    const tampered = Buffer.from(keyset.bytes);
    tampered[tampered.indexOf('"active"') + 2] ^= 1;
    expect(python({ ...files, keyset: f('tampered.json', tampered) }).out).toMatch(/^refused: keyset_bad_signature/);
    expect(python({ ...files, root: f('other-root.json', JSON.stringify({ keys: [{ ...keyset.json.roots[0], kid: 'someone-else' }] })) }).out).toMatch(
      /^refused: keyset_untrusted_root/,
    );
    const stranger = await new KeyStore(join(srv.dir, 'stranger-keys')).signer();
    expect(python({ ...files, bundleJws: f('stranger.jws', await signBundle(bundle.bytes, stranger)) }).out).toMatch(/^refused: unknown_kid/);
    expect(python(files, 'globex-eng').out).toMatch(/^refused: tenant_mismatch/);
  });
});
