import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { startTempPostgres } from '../support/postgres.ts';
import { jsonOrUndefined } from '../support/json-or-undefined.ts';
import { killProcessGroup, serveEnv } from '../support/spawned-server.ts';

// Two real `toolgate serve` processes (replicas A and B) on one throwaway PostgreSQL cluster,
// sharing one keys directory, as the README's "Running more than one replica" sets them up (with
// the default demo seed, so both find the database new at the same moment).
const ADMIN = 'tg_replicas_test_admin_0123456789abcdef';
const ROOT = join(import.meta.dirname, '..', '..');

type Replica = { name: string; url: string; child: ChildProcess; stderr: string[] };

let pgUrl = '';
let stopPg: () => void = () => undefined;
const dir = mkdtempSync(join(tmpdir(), 'toolgate-replicas-'));
const replicas: Replica[] = [];

function startReplica(name: string, port: number): Replica {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'serve'], {
    cwd: ROOT,
    // Its own process group, so the whole group is killed (SIGKILL included) and nothing outlives the test.
    detached: true,
    env: serveEnv({ port, dir, adminToken: ADMIN, db: pgUrl, logLevel: 'warn', extra: { TOOLGATE_REISSUE_CHECK_SECONDS: '1' } }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString('utf8')));
  const r = { name, url: `http://127.0.0.1:${port}`, child, stderr };
  replicas.push(r);
  return r;
}

function killGroup(r: Replica, signal: NodeJS.Signals): void {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  killProcessGroup(r.child, signal);
}

async function healthy(r: Replica): Promise<void> {
  for (;;) {
    if (r.child.exitCode !== null) throw new Error(`replica ${r.name} exited ${r.child.exitCode}: ${r.stderr.join('')}`);
    try {
      if ((await fetch(`${r.url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}

// As a real client or load balancer would: a bounded number of connections per replica. (Two
// thousand sockets at once overflow a server's listen backlog on a loaded machine, and sockets
// left idle between tests race the server's keep-alive close.)
const agent = new Agent({ connections: 32, keepAliveTimeout: 1000 });

async function call(r: Replica, method: string, path: string, opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(r.url + path, {
    dispatcher: agent,
    method,
    headers: {
      authorization: `Bearer ${opts.token ?? ADMIN}`,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  const json = jsonOrUndefined(text);
  return { status: res.status, headers: res.headers, text, json };
}

/** How many notices of `type` from other replicas `r` has applied (its /metrics). */
async function noticesReceived(r: Replica, type: string): Promise<number> {
  const metrics = await call(r, 'GET', '/metrics');
  const line = metrics.text.split('\n').find((l) => l.startsWith(`toolgate_cluster_notices_received_total{type="${type}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function ok(r: Replica, method: string, path: string, body?: unknown) {
  const res = await call(r, method, path, { body });
  if (res.status >= 300) throw new Error(`${r.name} ${method} ${path}: ${res.status} ${res.text}`);
  return res;
}

/** Polls until `check` holds; bounded only by the test's timeout. */
async function until<T>(check: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> {
  for (;;) {
    const v = await check();
    if (v) return v;
    await new Promise((res) => setTimeout(res, everyMs));
  }
}

async function leads(r: Replica): Promise<boolean> {
  const res = await call(r, 'GET', '/metrics');
  return res.status === 200 && /^toolgate_cluster_leader 1$/m.test(res.text);
}

const policy = (ttl?: number) => ({
  roles: { agent: { groups: ['default'], allow: ['core__*'], deny: [], requireApproval: [] } },
  bindings: { 'agent:bot': ['agent'] },
  profiles: {},
  ...(ttl ? { bundleTtlSeconds: ttl } : {}),
});

let A: Replica;
let B: Replica;

beforeAll(async () => {
  const started = await startTempPostgres();
  pgUrl = started.url;
  stopPg = started.stop;
  // Both at once on an empty database and an empty keys directory: migrations and the first keys happen once.
  A = startReplica('A', await freePort());
  B = startReplica('B', await freePort());
  await Promise.all([healthy(A), healthy(B)]);
}, 120_000);

afterAll(() => {
  void agent.close();
  for (const r of replicas) killGroup(r, 'SIGKILL');
  stopPg();
  rmSync(dir, { recursive: true, force: true });
});

describe('two replicas on one PostgreSQL database', () => {
  it('started together on a new database, migrate and seed it once and share one key set', async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const names = (await client.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name')).rows.map((r) => r.name);
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await client.end();
    }
    const [ka, kb] = await Promise.all([fetch(`${A.url}/.well-known/toolgate-keyset.json`), fetch(`${B.url}/.well-known/toolgate-keyset.json`)]);
    expect(ka.headers.get('toolgate-version')).toBe('1');
    expect(await ka.text()).toBe(await kb.text());
    // Both saw a new database; the demo data went in once.
    const seeded = (await ok(B, 'GET', '/v1/audit?entityType=tenant&entityId=acme-research')).json.items;
    expect(seeded.map((e: { action: string }) => e.action)).toEqual(['create']);
    // Exactly one of them runs the background jobs.
    expect([await leads(A), await leads(B)].filter(Boolean)).toHaveLength(1);
  });

  it('a publish through A wakes a long-poll held on B', async () => {
    await ok(A, 'POST', '/v1/tools', {
      id: 'core__lookup',
      description: 'Looks a record up.',
      inputSchema: { type: 'object', additionalProperties: false, required: ['query'], properties: { query: { type: 'string' } } },
      effect: 'read_only',
      redaction: { allow: ['result'] },
    });
    await ok(A, 'POST', '/v1/tenants', { id: 'acme', name: 'Acme', policy: policy() });
    const v1 = (await ok(A, 'POST', '/v1/tenants/acme/bundles', { reason: 'first' })).json;
    const runtime = (await ok(A, 'POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: ['acme'] })).json.token as string;

    const first = await call(B, 'GET', '/v1/tenants/acme/bundles/latest', { token: runtime });
    expect(first.status).toBe(200);
    expect(first.json.version).toBe(v1.version);
    const etag = first.headers.get('etag')!;
    // Held on B: it answers only when a newer bundle exists (or after 60 s with a 304).
    const held = call(B, 'GET', '/v1/tenants/acme/bundles/latest?wait=60', { token: runtime, headers: { 'if-none-match': etag } });
    await ok(A, 'POST', '/v1/states', { name: 'reviewing', description: 'a change worth publishing' });
    const publishedBefore = await noticesReceived(B, 'published');
    const v2 = (await ok(A, 'POST', '/v1/tenants/acme/bundles', { reason: 'second' })).json;
    expect(v2.version).toBe(v1.version + 1);
    const woken = await held;
    expect(woken.status).toBe(200);
    expect(woken.json.version).toBe(v2.version);
    // Woken by A's notice, not only by B's own periodic re-read of the database.
    await until(async () => (await noticesReceived(B, 'published')) > publishedBefore);
  });

  it('a person approving on A wakes the approval long-poll a runtime holds on B', async () => {
    await ok(A, 'POST', '/v1/tenants', { id: 'mailroom', name: 'Mailroom' });
    const runtime = (await ok(A, 'POST', '/v1/tokens', { label: 'runtime', role: 'runtime', tenants: ['mailroom'] })).json.token as string;
    const opened = await call(B, 'POST', '/v1/tenants/mailroom/approvals', {
      token: runtime,
      body: { subject: 'agent:bot', tool: 'core__send_email', arguments: { to: 'buyer@customer.example' }, reason: 'mail outside the company needs a person' },
    });
    expect(opened.status).toBe(201);
    // Held on B: without A's notice it would answer `pending` only after 60 s.
    const held = call(B, 'GET', `/v1/tenants/mailroom/approvals/${opened.json.id}?wait=60`, { token: runtime });
    const before = await noticesReceived(B, 'approval-decided');
    expect((await call(A, 'POST', `/v1/tenants/mailroom/approvals/${opened.json.id}/approve`, { body: { reason: 'expected' } })).status).toBe(200);
    const woken = await held;
    expect(woken.json).toMatchObject({ state: 'approved', decisionReason: 'expected' });
    expect(woken.json.receipt.payload).toMatchObject({ tenant: 'mailroom', id: opened.json.id });
    await until(async () => (await noticesReceived(B, 'approval-decided')) > before);
  });

  it('50 concurrent If-Match edits of one state, split across A and B, have exactly one winner', async () => {
    await ok(A, 'POST', '/v1/states', { name: 'contested', description: 'before' });
    const etag = (await ok(B, 'GET', '/v1/states/contested')).headers.get('etag')!;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 ? A : B, 'PATCH', '/v1/states/contested', { body: { description: `edit ${i}` }, headers: { 'if-match': etag } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(49);
    const winner = answers.find((a) => a.status === 200)!.json.description;
    expect((await ok(A, 'GET', '/v1/states/contested')).json.description).toBe(winner);
    expect((await ok(B, 'GET', '/v1/states/contested')).json.description).toBe(winner);
  });

  it('2,000 concurrent audited writes across both leave one chain that audit verify accepts, with no gap', async () => {
    const before = (await ok(A, 'GET', '/v1/audit?limit=1&order=desc')).json.items[0].seq as number;
    const answers = await Promise.all(
      Array.from({ length: 2000 }, (_, i) => call(i % 2 ? A : B, 'POST', '/v1/states', { body: { name: `s-${i}`, description: `state ${i}` } })),
    );
    expect(answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.text}`)).toEqual([]);

    const exported = await call(B, 'GET', '/v1/audit/export?format=jsonl');
    expect(exported.status).toBe(200);
    const events = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; entityType: string; action: string; entityId: string });
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const created = events.filter((e) => e.seq > before && e.entityType === 'state' && e.action === 'create' && e.entityId.startsWith('s-'));
    expect(created).toHaveLength(2000);

    const file = join(dir, 'audit.jsonl');
    writeFileSync(file, exported.text);
    const verify = spawnSync(process.execPath, ['--import', 'tsx', 'server/cli/main.ts', 'audit', 'verify', file], { cwd: ROOT, encoding: 'utf8' });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    // The database's own chain, read through the other replica.
    expect((await ok(A, 'GET', '/v1/audit/verify')).json).toMatchObject({ ok: true });
  }, 180_000);

  it('a token revoked on A is refused on B', async () => {
    const created = (await ok(A, 'POST', '/v1/tokens', { label: 'to revoke', role: 'viewer', tenants: ['acme'] })).json;
    const token = created.token as string;
    // B has looked it up (and caches the lookup).
    expect((await call(B, 'GET', '/v1/tools', { token })).status).toBe(200);
    const etag = (await ok(A, 'GET', `/v1/tokens/${created.id}`)).headers.get('etag')!;
    const heardBefore = await noticesReceived(B, 'tokens-changed');
    const revoked = await call(A, 'DELETE', `/v1/tokens/${created.id}`, { headers: { 'if-match': etag, 'toolgate-reason': 'leaving' } });
    expect(revoked.status).toBe(204);
    const refused = await until(async () => {
      const r = await call(B, 'GET', '/v1/tools', { token });
      return r.status === 401 ? r : undefined;
    }, 20);
    expect(refused.json.title ?? refused.json.detail).toBeDefined();
    // B dropped its cached lookup because A told it, not because the cache entry aged out.
    await until(async () => (await noticesReceived(B, 'tokens-changed')) > heardBefore);
  });

  it('kill -9 the leader: the other replica takes over and the re-issue job resumes there', async () => {
    // A 60 s bundle lifetime: the leader re-issues it once half of it has gone.
    await ok(A, 'POST', '/v1/tenants', { id: 'quiet', name: 'Quiet', policy: policy(60) });
    const v1 = (await ok(A, 'POST', '/v1/tenants/quiet/bundles', { reason: 'first' })).json.version as number;
    const reissues = async (r: Replica) =>
      ((await ok(r, 'GET', '/v1/audit?entityType=bundle&tenant=quiet&limit=100')).json.items as { actor: string; entityId: string }[]).filter(
        (e) => e.actor === 'system',
      );

    const leader = (await leads(A)) ? A : B;
    const other = leader === A ? B : A;
    expect(await leads(other)).toBe(false);
    // The leader re-issues (proof the job runs there) …
    await until(async () => (await reissues(other)).length >= 1);
    killGroup(leader, 'SIGKILL');
    await new Promise((res) => leader.child.once('exit', res));
    const before = (await reissues(other)).length;

    // … and after its death the other replica leads and re-issues in its place.
    await until(() => leads(other));
    await until(async () => (await reissues(other)).length > before);
    const versions = ((await ok(other, 'GET', '/v1/tenants/quiet/bundles')).json.items as { version: number }[]).map((b) => b.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => v1 + i));
    expect(versions.length).toBeGreaterThanOrEqual(3);
  }, 240_000);
});
