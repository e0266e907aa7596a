import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { jwksOf, makeKey, makeSignedBundle } from './signed-bundles.ts';

let srv: LiveServer;
let dir: string;

beforeAll(async () => {
  srv = await startLiveServer();
  dir = await mkdtemp(join(tmpdir(), 'toolgate-example-'));
});

afterAll(async () => {
  await srv?.dispose();
  await rm(dir, { recursive: true, force: true });
});

function runExample(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/examples/agent-loop.ts'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('runtime/examples/agent-loop.ts', () => {
  it('shows the model only its visible tools and gates every scripted call with decide', async () => {
    const key = await makeKey('example-key');
    await srv.createTenant('acme');
    const signed = await makeSignedBundle({ tenant: 'acme', version: 1 }, key);
    await srv.place('acme', 1, { ...signed, revision: signed.bundle.revision });
    const token = await srv.tokenFor('runtime', ['acme']);
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify(jwksOf(key)));
    const { code, out } = await runExample({
      TOOLGATE_URL: srv.url,
      TOOLGATE_TENANT: 'acme',
      TOOLGATE_TOKEN: token,
      TOOLGATE_SUBJECT: 'agent:support-bot',
      TOOLGATE_JWKS_FILE: jwksFile,
      TOOLGATE_CACHE_DIR: join(dir, 'cache'),
    });
    expect(code, out).toBe(0);
    expect(out).toContain('bundle: v1');
    expect(out).toContain('the model sees 2 tool(s): core__tool-0001, core__tool-0002');
    expect(out).toContain('core__tool-0001 → allow');
    expect(out).toContain('result (redacted for logs): {"result":"ran core__tool-0001","items":[{"id":1}]}');
    expect(out).not.toContain('not for logs');
    expect(out).toMatch(/core__reset-workflow → deny \(unavailable/);
    expect(out).toMatch(/core__tool-0001 → deny \(invalid_json/);
    expect(out).toMatch(/core__made_up_tool → deny \(unavailable/);
  });

  it('denies every call when it holds no trusted bundle', async () => {
    await srv.createTenant('nobundle');
    const token = await srv.tokenFor('runtime', ['nobundle']);
    const jwksFile = join(dir, 'jwks-empty.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [] }));
    const { code, out } = await runExample({
      TOOLGATE_URL: srv.url,
      TOOLGATE_TENANT: 'nobundle',
      TOOLGATE_TOKEN: token,
      TOOLGATE_JWKS_FILE: jwksFile,
      TOOLGATE_CACHE_DIR: join(dir, 'cache-none'),
      TOOLGATE_WAIT_MS: '1000',
    });
    expect(code, out).toBe(0);
    expect(out).toContain('bundle: none · health none');
    expect(out).toContain('the model sees 0 tool(s)');
  });

  it('exits with a usage message when no token is given', async () => {
    const { code, out } = await runExample({ TOOLGATE_TOKEN: '' });
    expect(code).toBe(2);
    expect(out).toContain('TOOLGATE_TOKEN');
  });
});
