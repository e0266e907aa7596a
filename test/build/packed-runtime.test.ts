import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createView, decide } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { startLiveServer } from '../distribution/live-server.ts';
import type { LiveServer } from '../distribution/live-server.ts';
import { ensureRuntimeBuilt, ROOT } from './ensure-built.ts';

// `@toolgate/runtime` as a runtime author gets it: packed with `npm pack`, installed from the
// tarball into an empty project that cannot see this repository, and used against a live server.
const tenant = 'acme-research';
const request = { subject: 'agent:research-bot', groups: ['knowledge', 'basic', 'text'] };
let srv: LiveServer;
let project = '';
let published: { version: number; revision: string };

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });

beforeAll(async () => {
  await ensureRuntimeBuilt();
  project = mkdtempSync(join(tmpdir(), 'toolgate-sdk-consumer-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', project], join(ROOT, 'runtime'))) as { filename: string }[];
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  // Its own dependencies come from the registry (or npm's cache); nothing from the repository.
  npm(['install', '--prefer-offline', '--no-package-lock', join(project, packed[0].filename)], project);

  srv = await startLiveServer({ seed: true });
  const r = await srv.api('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'packed SDK test' } });
  if (r.status !== 201) throw new Error(`publish answered ${r.status}: ${r.text}`);
  published = r.json;
  const latest = await srv.api('GET', `/v1/tenants/${tenant}/bundles/latest`, { token: await srv.tokenFor('runtime', [tenant]) });
  writeFileSync(join(project, 'bundle.json'), latest.bytes);
  writeFileSync(join(project, 'bundle.jws'), latest.headers.get('toolgate-signature') ?? '');
  writeFileSync(join(project, 'jwks.json'), (await srv.api('GET', '/.well-known/jwks.json', { token: null })).text);
}, 240_000);

afterAll(async () => {
  await srv?.dispose();
  if (project) rmSync(project, { recursive: true, force: true });
});

const consumer = `
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBundleClient, createView, decide, evaluate, loadBundle, verifyBundle } from '@toolgate/runtime';
import * as browser from '@toolgate/runtime/browser';

const [url, token, tenant] = process.argv.slice(2);
const trustedKeys = JSON.parse(readFileSync('jwks.json', 'utf8'));
const bytes = readFileSync('bundle.json');
const verified = await verifyBundle(bytes, readFileSync('bundle.jws', 'utf8'), { trustedKeys, tenant });
const tampered = await verifyBundle(Buffer.from(bytes.toString('utf8').replace('"tools"', '"tools" ')), readFileSync('bundle.jws', 'utf8'), { trustedKeys, tenant });
const loaded = loadBundle(JSON.parse(bytes.toString('utf8')));
const request = { subject: 'agent:research-bot', groups: ['knowledge', 'basic', 'text'] };
const evaluated = evaluate(loaded, request);
const view = createView(loaded, request);
const calls = evaluated.tools.map((t) => ({ toolCallId: t.id, name: t.id, arguments: '{}' }));
calls.push({ toolCallId: 'valid', name: 'core__knowledge-query', arguments: '{"query":"x"}' }, { toolCallId: 'broken', name: calls[0].name, arguments: '{' }, { toolCallId: 'unknown', name: 'no__such-tool', arguments: '{}' });
const decisions = calls.map((c) => decide(view, c));

const client = await createBundleClient({ url, tenant, token, trustedKeys, cacheDir: mkdtempSync(join(tmpdir(), 'sdk-cache-')), statusIntervalMs: 0, decisionLog: false, backoff: { initialMs: 20, maxMs: 200 } });
const end = Date.now() + 20000;
while (client.status().health !== 'fresh' && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
const status = client.status();
const viaClient = client.evaluate(request);
await client.close();

const browserOk = typeof browser.evaluate === 'function' && !('verifyBundle' in browser);
console.log(JSON.stringify({ verified: verified.ok, tampered: tampered.ok ? 'accepted' : tampered.code, evaluated, decisions, status, sameAsClient: JSON.stringify(viaClient) === JSON.stringify(evaluated), browserOk }));
`;

describe('@toolgate/runtime installed from its packed tarball', () => {
  it('ships built JavaScript, declarations and schemas, and no TypeScript sources or tests', () => {
    const files = readdirSync(join(project, 'node_modules/@toolgate/runtime/dist'), { recursive: true }).map(String);
    expect(files).toContain('index.js');
    expect(files).toContain('browser.js');
    expect(files.some((f) => f.endsWith('bundle.schema.json'))).toBe(true);
    expect(files.some((f) => f.endsWith('index.d.ts'))).toBe(true);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    const browserJs = readFileSync(join(project, 'node_modules/@toolgate/runtime/dist/browser.js'), 'utf8');
    expect(browserJs).not.toMatch(/from ['"]node:/);
  });

  it('verifies, evaluates and decides on a published bundle, and keeps current with a live server', async () => {
    writeFileSync(join(project, 'consumer.mjs'), consumer);
    const token = await srv.tokenFor('runtime', [tenant]);
    const sim = await srv.api('POST', `/v1/tenants/${tenant}/simulate`, { body: request });
    // Asynchronously: the server answering it lives in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ['consumer.mjs', srv.url, token, tenant], { cwd: project, encoding: 'utf8' });
    const out = JSON.parse(stdout);
    expect(out.verified).toBe(true);
    expect(out.tampered).toBe('bad_signature');
    expect(out.browserOk).toBe(true);

    // The packaged SDK answers exactly what the server's simulate and the SDK's sources answer.
    expect(out.evaluated).toEqual(sim.json);
    expect(out.evaluated.tools.length).toBeGreaterThan(0);
    const loaded = loadBundle(JSON.parse(readFileSync(join(project, 'bundle.json'), 'utf8')) as Bundle);
    const view = createView(loaded, request);
    const calls = out.evaluated.tools.map((t: { id: string }) => ({ toolCallId: t.id, name: t.id, arguments: '{}' }));
    calls.push(
      { toolCallId: 'valid', name: 'core__knowledge-query', arguments: '{"query":"x"}' },
      { toolCallId: 'broken', name: calls[0].name, arguments: '{' },
      { toolCallId: 'unknown', name: 'no__such-tool', arguments: '{}' },
    );
    expect(out.decisions).toEqual(calls.map((c: { name: string }) => decide(view, c)));
    expect(out.decisions.at(-2)).toMatchObject({ decision: 'deny', errorCode: 'invalid_json' });
    expect(out.decisions.at(-1)).toMatchObject({ decision: 'deny', errorCode: 'unavailable' });
    expect(out.decisions.at(-3)).toEqual({ toolCallId: 'valid', decision: 'allow' });

    expect(out.status, JSON.stringify(out.status)).toMatchObject({ health: 'fresh', version: published.version, revision: published.revision });
    expect(out.sameAsClient).toBe(true);
  }, 60_000);

  it('type-checks a TypeScript consumer against the shipped declarations', () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      "import { createView, decide, loadBundle } from '@toolgate/runtime';\n" +
        "import type { CallDecision } from '@toolgate/runtime';\n" +
        'declare const raw: Parameters<typeof loadBundle>[0];\n' +
        "const d: CallDecision = decide(createView(loadBundle(raw), { subject: 'a' }), { name: 'x' });\n" +
        "export const denied: boolean = d.decision === 'deny';\n",
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    expect(() => execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' })).not.toThrow();
  });
});
