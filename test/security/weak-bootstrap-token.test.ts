import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { listAuditEvents } from '../../server/audit/events.ts';
import { openToolgate, settingsFromEnv } from '../../server/startup.ts';

// A guessable TOOLGATE_ADMIN_TOKEN made a guessable admin; its creation was never audited.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bootstrap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings = (name: string, adminToken: string | undefined) => ({
  host: '127.0.0.1',
  port: 0,
  dbFile: join(dir, `${name}.db`),
  keysDir: join(dir, 'keys'),
  webDir: join(dir, 'web'),
  seed: 'none' as const,
  adminToken,
  logLevel: 'silent',
});

describe('a short bootstrap admin token', () => {
  for (const token of ['admin', 'changeme', 'password123', 'x'.repeat(31)]) {
    it(`stops startup for "${token}" with an error saying why`, async () => {
      expect(() => settingsFromEnv({ TOOLGATE_ADMIN_TOKEN: token })).toThrow(
        `TOOLGATE_ADMIN_TOKEN is ${token.length} characters long; it must have at least 32`,
      );
      await expect(openToolgate(settings(`short-${token.length}`, token), pino({ level: 'silent' }))).rejects.toThrow(/at least 32/);
    });
  }

  it('accepts 32 characters', () => {
    expect(settingsFromEnv({ TOOLGATE_ADMIN_TOKEN: 'y'.repeat(32) }).adminToken).toBe('y'.repeat(32));
  });

  it('makes `toolgate serve` exit 1 before listening', async () => {
    const main = fileURLToPath(new URL('../../server/cli/main.ts', import.meta.url));
    const result = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), main, 'serve'], {
      env: { ...process.env, TOOLGATE_ADMIN_TOKEN: 'hunter2', TOOLGATE_DB: join(dir, 'cli.db'), TOOLGATE_KEYS_DIR: join(dir, 'keys'), PORT: '0' },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('TOOLGATE_ADMIN_TOKEN is 7 characters long; it must have at least 32');
  });
});

describe('the bootstrap token is a change of trust', () => {
  it('audits its creation from TOOLGATE_ADMIN_TOKEN, without the secret', async () => {
    const token = 'tg_configured_bootstrap_0123456789abcdef';
    const { deps } = await openToolgate(settings('configured', token), pino({ level: 'silent' }));
    try {
      const events = await listAuditEvents(deps.database.db, { entityType: 'token' }, 0, 100);
      expect(events.map((e) => [e.actor, e.action, e.entityId])).toEqual([['system', 'create', 'bootstrap-admin']]);
      expect(JSON.stringify(events)).not.toContain(token);
    } finally {
      await deps.database.close();
    }
  });

  it('audits a generated one too', async () => {
    const { deps, generatedAdminToken } = await openToolgate(settings('generated', undefined), pino({ level: 'silent' }));
    try {
      expect(generatedAdminToken).toMatch(/^tg_/);
      const events = await listAuditEvents(deps.database.db, { entityType: 'token' }, 0, 100);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        actor: 'system',
        action: 'create',
        entityId: 'bootstrap-admin',
        reason: 'bootstrap admin token generated at first start',
      });
      expect(JSON.stringify(events)).not.toContain(generatedAdminToken!);
    } finally {
      await deps.database.close();
    }
  });
});
