import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuditEvents } from '../../server/audit/events.ts';
import { run as compile } from '../../server/cli/commands/compile.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { openToolgate } from '../../server/startup.ts';

// `toolgate compile` used to sign with the production key, a bundle every runtime trusts,
// leaving no trace in the audit log.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-cli-sign-'));
const saved = { db: process.env.TOOLGATE_DB, keys: process.env.TOOLGATE_KEYS_DIR };
const dbFile = join(dir, 'toolgate.db');

beforeAll(async () => {
  process.env.TOOLGATE_DB = dbFile;
  process.env.TOOLGATE_KEYS_DIR = join(dir, 'keys');
  const { deps } = await openToolgate(
    {
      host: '127.0.0.1',
      port: 0,
      dbFile,
      keysDir: join(dir, 'keys'),
      webDir: join(dir, 'web'),
      seed: 'demo',
      adminToken: 'tg_cli_sign_admin_0123456789abcdefghij',
      logLevel: 'silent',
    },
    pino({ level: 'silent' }),
  );
  await deps.database.close();
});
afterAll(() => {
  for (const [k, v] of [
    ['TOOLGATE_DB', saved.db],
    ['TOOLGATE_KEYS_DIR', saved.keys],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
});

const quiet = () => {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: { log: (l: string) => lines.push(l), error: (l: string) => errors.push(l) } };
};
async function signEvents() {
  const db = new ToolgateDatabase(dbFile);
  try {
    return (await listAuditEvents(db.db, { entityType: 'bundle' }, 0, 100)).filter((e) => e.action === 'sign');
  } finally {
    await db.close();
  }
}

describe('toolgate compile and the production key', () => {
  it('does not sign without --sign, and records nothing', async () => {
    const out = join(dir, 'unsigned');
    const c = quiet();
    expect(await compile(['--tenant', 'acme-research', '--out', out], c.out)).toBe(0);
    expect(existsSync(join(out, 'bundle.json'))).toBe(true);
    expect(existsSync(join(out, 'bundle.jws'))).toBe(false);
    expect(c.lines[0]).toContain('unsigned (add --sign');
    expect(await signEvents()).toEqual([]);
  });

  it('signs with --sign and writes one audit event per signing, with the kid and revision', async () => {
    for (const [name, extra] of [
      ['first', []],
      ['second', ['--reason', 'offline mirror for the lab']],
    ] as const) {
      const out = join(dir, name);
      expect(await compile(['--tenant', 'acme-research', '--out', out, '--sign', ...extra], quiet().out)).toBe(0);
      expect(readFileSync(join(out, 'bundle.jws'), 'utf8')).toMatch(/^[\w-]+\.\.[\w-]+\n$/);
    }
    const events = await signEvents();
    expect(events).toHaveLength(2);
    const kid = JSON.parse(Buffer.from(readFileSync(join(dir, 'second', 'bundle.jws'), 'utf8').split('.')[0], 'base64url').toString()).kid;
    expect(events[1]).toMatchObject({
      actor: 'system',
      tenant: 'acme-research',
      reason: 'offline mirror for the lab',
      after: { kid, via: 'toolgate compile --sign' },
    });
    expect(events[0].reason).toBe('toolgate compile --sign');
  });

  it('refuses --reason without --sign', async () => {
    const c = quiet();
    expect(await compile(['--tenant', 'acme-research', '--out', join(dir, 'x'), '--reason', 'why'], c.out)).toBe(2);
    expect(c.errors[0]).toContain('--sign');
  });
});
