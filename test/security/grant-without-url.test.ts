import { serve } from '@hono/node-server';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameGrantsWithoutUrl, renamedGrantId } from '../../migrations/012-grant-urls-and-runtime-owners.ts';
import { migrations } from '../../migrations/index.ts';
import { GENESIS_HASH, eventHash } from '../../server/audit/chain.ts';
import { verifyStoredChain } from '../../server/audit/events.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { run as apply } from '../../server/cli/commands/apply.ts';
import { run as exportCmd } from '../../server/cli/commands/export.ts';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// An editor could create grants named `.` or `..`: every URL naming them normalizes the segment
// away, so no one could read, edit or delete them, they pinned the roles and tools they named
// (409s), and every `apply --prune` failed. Grant ids are now 1-128 of [A-Za-z0-9._:@-], never
// `.` or `..`; migration 012 renames the ones already stored, audited.

const tenant = 'acme-research';
let t: TestApp;
let editor: string;
let server: Server;
let env: NodeJS.ProcessEnv;
let work: string;

beforeAll(async () => {
  t = await startTestApp();
  editor = await t.tokenFor('editor', [tenant]);
  server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  if (!server.listening) await once(server, 'listening');
  env = { TOOLGATE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, TOOLGATE_TOKEN: ADMIN_TOKEN };
  work = mkdtempSync(join(tmpdir(), 'toolgate-grant-url-'));
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const grant = (connectionId: string) => ({ connectionId, label: 'x', subjects: ['analyst'], tools: ['core__knowledge-*'] });
const capture = () => {
  const lines: string[] = [];
  return { lines, out: { log: (l: string) => lines.push(l), error: (l: string) => lines.push(l) } };
};

describe('a grant id that no URL can name is refused', () => {
  const refused: [string, string][] = [
    ['a single dot', '.'],
    ['two dots', '..'],
    ['129 characters', 'c'.repeat(129)],
    ['a slash', 'conn/../x'],
    ['a percent-encoded dot pair', '%2e%2e'],
    ['a space', 'conn 1'],
    ['an empty id', ''],
  ];
  for (const [name, id] of refused) {
    it(`${name}: 400 naming /connectionId, nothing stored`, async () => {
      const r = await t.request('POST', `/v1/tenants/${tenant}/grants`, { token: editor, body: grant(id) });
      expect(r.status).toBe(400);
      expect(r.json.errors.map((e: { pointer: string }) => e.pointer)).toContain('/connectionId');
      const list = await t.request('GET', `/v1/tenants/${tenant}/grants`);
      expect(list.json.items.map((g: { connectionId: string }) => g.connectionId)).not.toContain(id);
    });
  }

  const accepted = ['...', '.hidden', '..parent', 'user@example.com:github.1', 'c'.repeat(128)];
  for (const id of accepted) {
    it(`${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)} has a URL: created, read, deleted through it`, async () => {
      const created = await t.request('POST', `/v1/tenants/${tenant}/grants`, { token: editor, body: grant(id) });
      expect(created.status).toBe(201);
      const url = `/v1/tenants/${tenant}/grants/${encodeURIComponent(id)}`;
      const read = await t.request('GET', url, { token: editor });
      expect(read.status).toBe(200);
      expect(read.json.connectionId).toBe(id);
      const del = await t.request('DELETE', url, { token: editor, headers: { 'if-match': read.headers.get('etag')! } });
      expect(del.status).toBe(204);
    });
  }

  for (const [name, id] of [
    ['grant `.`', '.'],
    ['grant `..`', '..'],
    ['a 129-character grant id', 'c'.repeat(129)],
  ]) {
    it(`a configuration file for ${name} is refused by apply, naming the file, before anything is sent`, async () => {
      const dir = join(work, `bad-file-${id.length}`);
      expect(await exportCmd(['--dir', dir], capture().out, { env })).toBe(0);
      writeFileSync(join(dir, 'tenants', tenant, 'grants', `${id}.json`), JSON.stringify(grant(id)));
      const c = capture();
      expect(await apply(['--dir', dir, '--reason', 'bad grant'], c.out, { env })).toBe(2);
      expect(c.lines.join('\n')).toContain(`tenants/acme-research/grants/${id}.json /connectionId`);
    });
  }

  it('a grant whose id starts with a dot survives export, apply --prune and export again', async () => {
    const created = await t.request('POST', `/v1/tenants/${tenant}/grants`, { token: editor, body: grant('.dotted') });
    expect(created.status).toBe(201);
    const dir = join(work, 'dotted');
    expect(await exportCmd(['--dir', dir], capture().out, { env })).toBe(0);
    const c = capture();
    expect(await apply(['--dir', dir, '--prune', '--plan'], c.out, { env })).toBe(0);
    expect(c.lines.filter((l) => l.startsWith('delete'))).toEqual([]);
    const read = await t.request('GET', `/v1/tenants/${tenant}/grants/.dotted`);
    await t.request('DELETE', `/v1/tenants/${tenant}/grants/.dotted`, { headers: { 'if-match': read.headers.get('etag')! } });
  });
});

describe('migration 012 gives grants stored without a URL one', () => {
  it('renames `.`, `..` and over-long ids, audited, after which they can be read, deleted and pruned', async () => {
    const db = t.deps.database.db;
    const seeded = (await db.selectFrom('grants').selectAll().where('tenant', '=', tenant).executeTakeFirstOrThrow()) as { body: string };
    const now = new Date().toISOString();
    const stored = ['.', '..', 'L'.repeat(150)];
    // As a database written before ids were narrowed holds them.
    for (const id of stored) {
      const body = JSON.stringify({ ...JSON.parse(seeded.body), connectionId: id });
      await db.insertInto('grants').values({ tenant, connection_id: id, body, version: 1, created_at: now, updated_at: now }).execute();
    }
    // What the attack did: prune cannot delete them (their URLs normalize away).
    const before = join(work, 'before');
    mkdirSync(join(before));
    expect(await exportCmd(['--dir', before], capture().out, { env })).toBe(0);
    const stuck = capture();
    expect(await apply(['--dir', before, '--prune', '--reason', 'prune'], stuck.out, { env })).not.toBe(0);

    expect(await renameGrantsWithoutUrl(db as unknown as Kysely<unknown>)).toBe(3);
    const ids = (await t.request('GET', `/v1/tenants/${tenant}/grants`)).json.items.map((g: { connectionId: string }) => g.connectionId) as string[];
    for (const id of stored) expect(ids).not.toContain(id);
    const renamed = ids.filter((id) => id.startsWith('renamed-'));
    expect(renamed).toHaveLength(3);
    for (const id of renamed) expect((await t.request('GET', `/v1/tenants/${tenant}/grants/${id}`)).status).toBe(200);

    const audit = await t.request('GET', '/v1/audit?entityType=grant&order=desc&limit=6');
    expect(audit.json.items.every((e: { actor: string; reason: string }) => e.actor === 'system' && /migration 012/.test(e.reason))).toBe(true);
    expect(new Set(audit.json.items.map((e: { entityId: string }) => e.entityId))).toEqual(new Set([...stored, ...renamed]));
    expect((await t.request('GET', '/v1/audit/verify')).json.ok).toBe(true);

    // Prune works again: a directory without them deletes them.
    const after = join(work, 'after');
    expect(await exportCmd(['--dir', after], capture().out, { env })).toBe(0);
    for (const id of renamed) rmSync(join(after, 'tenants', tenant, 'grants', `${id}.json`));
    const pruned = capture();
    expect(await apply(['--dir', after, '--prune', '--reason', 'remove renamed grants'], pruned.out, { env })).toBe(0);
    expect(readdirSync(join(after, 'tenants', tenant, 'grants')).some((f) => f.startsWith('renamed-'))).toBe(false);
    const left = (await t.request('GET', `/v1/tenants/${tenant}/grants`)).json.items.map((g: { connectionId: string }) => g.connectionId);
    for (const id of renamed) expect(left).not.toContain(id);
    expect(await renameGrantsWithoutUrl(db as unknown as Kysely<unknown>)).toBe(0);
  });
});

describe('migration 012 on a database written before it', () => {
  it('renames the stored grants without a URL while migrating, and the audit chain still verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-m012-'));
    const d = new ToolgateDatabase(join(dir, 'toolgate.db'));
    try {
      const migrator = new Migrator({ db: d.db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('011-publish-requests')).error).toBeUndefined();
      const at = '2026-01-01T00:00:00.000Z';
      await sql`INSERT INTO tenants (id, name, version, created_at, updated_at) VALUES ('old', 'Old', 1, ${at}, ${at})`.execute(d.db);
      // One ordinary event first: the migration's events must link to it.
      const first = {
        seq: 1,
        at,
        actor: 'system',
        action: 'create',
        entityType: 'tenant',
        entityId: 'old',
        tenant: 'old',
        before: null,
        after: { id: 'old' },
        reason: null,
        requestId: null,
        prevHash: GENESIS_HASH,
      };
      await sql`INSERT INTO audit_events (seq, at, actor, action, entity_type, entity_id, tenant, before, after, reason, request_id, prev_hash, hash)
        VALUES (1, ${at}, 'system', 'create', 'tenant', 'old', 'old', NULL, '{"id":"old"}', NULL, NULL, ${GENESIS_HASH}, ${eventHash(first as never)})`.execute(
        d.db,
      );
      for (const id of ['..', '.', 'ok-grant']) {
        const body = JSON.stringify({ connectionId: id, label: '', subjects: ['analyst'], tools: ['core__x'] });
        await sql`INSERT INTO grants (tenant, connection_id, body, version, created_at, updated_at) VALUES ('old', ${id}, ${body}, 1, ${at}, ${at})`.execute(
          d.db,
        );
      }
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const ids = (await sql<{ connection_id: string; body: string }>`SELECT connection_id, body FROM grants ORDER BY connection_id`.execute(d.db)).rows;
      expect(ids.map((r) => r.connection_id)).toEqual(['ok-grant', ...[renamedGrantId('.', new Set()), renamedGrantId('..', new Set())].sort()]);
      for (const r of ids) expect(JSON.parse(r.body).connectionId).toBe(r.connection_id);
      const chain = await verifyStoredChain(d.db);
      expect(chain.result()).toMatchObject({ ok: true, count: 5 });
    } finally {
      await d.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
