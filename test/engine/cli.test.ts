import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { createApp } from '../../server/app.ts';
import { run as compile } from '../../server/cli/commands/compile.ts';
import { run as evaluateCmd } from '../../server/cli/commands/evaluate.ts';
import { run as keys } from '../../server/cli/commands/keys.ts';
import { run as tools } from '../../server/cli/commands/tools.ts';
import { run as verify } from '../../server/cli/commands/verify.ts';
import { listAuditEvents } from '../../server/audit/events.ts';
import { KeyStore } from '../../server/signing/key-store.ts';
import { openToolgate } from '../../server/startup.ts';

const ADMIN = 'tg_cli_test_admin_0123456789abcdef';
let dir: string;
let app: ReturnType<typeof createApp>;
let close: () => Promise<void>;
let deps: Awaited<ReturnType<typeof openToolgate>>['deps'];

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return { lines, out: { log: (l: string) => lines.out.push(l), error: (l: string) => lines.err.push(l) } };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
  process.env.TOOLGATE_DB = join(dir, 'toolgate.db');
  process.env.TOOLGATE_KEYS_DIR = join(dir, 'keys');
  const opened = await openToolgate(
    {
      host: '127.0.0.1',
      port: 0,
      dbFile: process.env.TOOLGATE_DB,
      keysDir: process.env.TOOLGATE_KEYS_DIR,
      webDir: join(dir, 'web'),
      seed: 'demo',
      adminToken: ADMIN,
      logLevel: 'silent',
    },
    pino({ level: 'silent' }),
  );
  deps = opened.deps;
  app = createApp(deps);
  close = () => deps.database.close();
});
afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

describe('toolgate compile, verify, evaluate', () => {
  const out = () => join(dir, 'out');

  it('compiles and, with --sign, signs the draft into bundle.json and bundle.jws', async () => {
    const c = capture();
    expect(await compile(['--tenant', 'acme-research', '--out', out(), '--sign'], c.out)).toBe(0);
    expect(c.lines.out[0]).toMatch(/bundle\.json \(\d+ bytes, version 1, sha256:[0-9a-f]{64}\)/);
    const text = readFileSync(join(out(), 'bundle.json'), 'utf8');
    expect(canonicalJson(JSON.parse(text))).toBe(text);
    expect(readFileSync(join(out(), 'bundle.jws'), 'utf8')).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\n$/);
  });

  it('verifies the written files against the JWKS and refuses a tampered byte with its reason', async () => {
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify(await new KeyStore(process.env.TOOLGATE_KEYS_DIR).jwks()));
    const args = ['--bundle', join(out(), 'bundle.json'), '--signature', join(out(), 'bundle.jws'), '--jwks', join(dir, 'jwks.json')];
    const ok = capture();
    expect(await verify(args, ok.out)).toBe(0);
    expect(ok.lines.out[0]).toMatch(/^ok: tenant acme-research, version 1/);

    const bytes = readFileSync(join(out(), 'bundle.json'));
    bytes[bytes.indexOf('researcher') + 2] ^= 0x02;
    writeFileSync(join(dir, 'tampered.json'), bytes);
    const bad = capture();
    expect(await verify(['--bundle', join(dir, 'tampered.json'), ...args.slice(2)], bad.out)).toBe(1);
    expect(bad.lines.err[0]).toMatch(/^refused: bad_signature/);

    const wrongTenant = capture();
    expect(await verify([...args, '--tenant', 'globex-eng'], wrongTenant.out)).toBe(1);
    expect(wrongTenant.lines.err[0]).toMatch(/^refused: tenant_mismatch/);
  });

  it('prints exactly what simulate answers for the same request', async () => {
    const request = {
      subject: 'user:alice',
      groups: ['knowledge', 'write'],
      state: 'analysis',
      allowedConnectionIds: ['conn-knowledge-graph-prod'],
      at: '2026-01-01T00:00:00Z',
    };
    writeFileSync(join(dir, 'request.json'), JSON.stringify(request));
    const c = capture();
    expect(await evaluateCmd(['--bundle', join(out(), 'bundle.json'), '--request', join(dir, 'request.json')], c.out)).toBe(0);
    const res = await app.request('/v1/tenants/acme-research/simulate', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    expect(res.status).toBe(200);
    expect(c.lines.out.join('\n')).toBe(await res.text());
  });

  it('explains bad input instead of evaluating it', async () => {
    writeFileSync(join(dir, 'bad-request.json'), JSON.stringify({ subject: 1 }));
    const c = capture();
    expect(await evaluateCmd(['--bundle', join(out(), 'bundle.json'), '--request', join(dir, 'bad-request.json')], c.out)).toBe(1);
    expect(c.lines.err.join('\n')).toContain('/subject');
    expect(await evaluateCmd(['--bundle', join(out(), 'bundle.json')], capture().out)).toBe(2);
    expect(await compile(['--tenant', 'nope', '--out', out()], capture().out)).toBe(1);
  });
});

describe('toolgate tools list', () => {
  it('prints the specs the model would see, in the chosen wire format', async () => {
    const args = [
      'list',
      '--tenant',
      'globex-eng',
      '--draft',
      '--subject',
      'agent:coding-bot',
      '--groups',
      'coding',
      '--facts',
      'hostSession=ready',
      '--profile',
    ];
    const openai = capture();
    expect(await tools([...args, 'openai'], openai.out)).toBe(0);
    const specs = JSON.parse(openai.lines.out.join('\n')) as { type: string; function: { name: string } }[];
    expect(specs.map((s) => s.function.name)).toContain('core__host_fs_apply_patch');
    expect(specs.map((s) => s.function.name)).not.toContain('core__host_fs_edit_file');
    const anthropic = capture();
    expect(await tools([...args, 'anthropic', '--format', 'anthropic'], anthropic.out)).toBe(0);
    const names = (JSON.parse(anthropic.lines.out.join('\n')) as { name: string }[]).map((t) => t.name);
    expect(names).toContain('core__host_fs_edit_file');
    expect(names).not.toContain('core__host_fs_apply_patch');
    // R6.12: without a profile neither profile-scoped edit tool is listed.
    const plain = capture();
    expect(await tools(args.slice(0, -1), plain.out)).toBe(0);
    const plainNames = (JSON.parse(plain.lines.out.join('\n')) as { function: { name: string } }[]).map((s) => s.function.name);
    expect(plainNames).toContain('core__host_fs_read_file');
    expect(plainNames).not.toContain('core__host_fs_apply_patch');
    expect(plainNames).not.toContain('core__host_fs_edit_file');
  });

  it('says when there is nothing published yet and lists the inventory without a subject', async () => {
    const none = capture();
    expect(await tools(['list', '--tenant', 'globex-eng', '--subject', 'agent:coding-bot'], none.out)).toBe(1);
    expect(none.lines.err[0]).toContain('no published bundle');
    const inv = capture();
    expect(await tools(['list'], inv.out)).toBe(0);
    expect((JSON.parse(inv.lines.out.join('\n')) as { id: string }[]).length).toBe(16);
    expect(await tools(['list', '--format', 'xml', '--subject', 's', '--tenant', 't'], capture().out)).toBe(2);
  });
});

describe('toolgate keys', () => {
  it('stages a rotation: the new key is listed as next, signs only once promoted, and both steps are audited', async () => {
    const keyLines = (lines: string[]) => lines.filter((l) => !l.startsWith('key set '));
    const before = capture();
    expect(await keys(['list'], before.out)).toBe(0);
    expect(keyLines(before.lines.out)).toHaveLength(1);
    const oldKid = before.lines.out[0].split(/\s+/)[0];
    const rotated = capture();
    expect(await keys(['rotate', '--reason', 'scheduled'], rotated.out)).toBe(0);
    const staged = capture();
    await keys(['list'], staged.out);
    expect(keyLines(staged.lines.out)).toHaveLength(2);
    expect(staged.lines.out[0]).toMatch(new RegExp(`^${oldKid}\\s+active\\s+\\S+\\s+signing`));
    expect(staged.lines.out[1]).toMatch(/^\S+\s+next\s+\S+$/);
    expect(await keys(['promote', '--reason', 'runtimes have it'], capture().out)).toBe(0);
    const after = capture();
    await keys(['list'], after.out);
    expect(after.lines.out[0]).toMatch(new RegExp(`^${oldKid}\\s+active\\s+\\S+$`));
    expect(after.lines.out[1]).toMatch(/^\S+\s+active\s+\S+\s+signing/);
    const events = await listAuditEvents(deps.database.db, { entityType: 'key' }, 0, 1000);
    expect(events.map((e) => [e.action, e.reason])).toEqual([
      ['rotate', 'scheduled'],
      ['promote', 'runtimes have it'],
    ]);
    expect(await keys(['spin'], capture().out)).toBe(2);
  });
});

describe('toolgate keys retire', () => {
  const publish = (reason: string) =>
    app.request('/v1/tenants/globex-eng/bundles', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason, refresh: true }),
    });
  const jwksKids = async () => ((await (await app.request('/.well-known/jwks.json')).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

  it('refuses the signing key, and a key that signed a latest bundle until --reissue re-signs it', async () => {
    expect((await publish('signed by the current key')).status).toBe(201);
    const listed = capture();
    await keys(['list'], listed.out);
    const signer = listed.lines.out.find((l) => /\ssigning/.test(l))!.split(/\s+/)[0];
    const refuse = capture();
    expect(await keys(['retire', signer], refuse.out)).toBe(1);
    expect(refuse.lines.err.join()).toContain('promote another key before retiring it');

    expect(await keys(['rotate'], capture().out)).toBe(0);
    expect(await keys(['promote'], capture().out)).toBe(0);
    const blocked = capture();
    expect(await keys(['retire', signer], blocked.out)).toBe(1);
    expect(blocked.lines.err.join()).toContain('globex-eng');
    expect(await jwksKids()).toContain(signer);

    const done = capture();
    expect(await keys(['retire', signer, '--reissue', '--reason', 'key compromised'], done.out)).toBe(0);
    expect(done.lines.out.join('\n')).toMatch(/globex-eng: re-issued as version \d+/);
    expect(await jwksKids()).not.toContain(signer);
    const latest = await app.request('/v1/tenants/globex-eng/bundles/latest', { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(JSON.parse(Buffer.from(latest.headers.get('toolgate-signature')!.split('.')[0], 'base64url').toString()).kid).not.toBe(signer);
    const events = await listAuditEvents(deps.database.db, { action: 'retire' }, 0, 10);
    expect(events.map((e) => [e.entityId, e.reason])).toEqual([[signer, 'key compromised']]);
    expect(await keys(['retire', 'no-such-kid'], capture().out)).toBe(1);
    expect(await keys(['retire'], capture().out)).toBe(2);
  });
});
