// The example agent loop, end to end through an approval: the call that needs one waits while a
// person approves it on the server, and the receipt lets exactly that call through.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { startLiveServer } from './live-server.ts';
import type { LiveServer } from './live-server.ts';
import { jwksOf, makeBundle, makeKey, revisionOf, signDocument } from './signed-bundles.ts';

let srv: LiveServer;
let dir: string;

beforeAll(async () => {
  srv = await startLiveServer();
  dir = await mkdtemp(join(tmpdir(), 'toolgate-example-approval-'));
});

afterAll(async () => {
  await srv?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('runtime/examples/agent-loop.ts with a call that needs approval', () => {
  it('waits for a person, then runs the call the receipt allows', async () => {
    const key = await makeKey('example-approval-key');
    await srv.createTenant('mailroom');
    // Every call of the analyst role needs a person's approval.
    const bundle = makeBundle({ tenant: 'mailroom', version: 1 });
    bundle.policy.roles!.analyst.requireApproval = ['read_only', 'state_change'];
    bundle.revision = revisionOf(bundle);
    const signed = await signDocument(bundle, key);
    await srv.place('mailroom', 1, { ...signed, revision: bundle.revision });
    const token = await srv.tokenFor('runtime', ['mailroom']);
    // The runtime trusts the bundle's key and the server's signing keys (which sign receipts).
    const serverKeys = (await srv.api('GET', '/.well-known/jwks.json', { token: null })).json.keys as unknown[];
    const jwksFile = join(dir, 'jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [...jwksOf(key).keys, ...serverKeys] }));

    const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/examples/agent-loop.ts'], {
      env: {
        ...process.env,
        TOOLGATE_URL: srv.url,
        TOOLGATE_TENANT: 'mailroom',
        TOOLGATE_TOKEN: token,
        TOOLGATE_SUBJECT: 'agent:support-bot',
        TOOLGATE_JWKS_FILE: jwksFile,
        TOOLGATE_CACHE_DIR: join(dir, 'cache'),
        TOOLGATE_APPROVAL_WAIT_MS: '60000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

    let request: Approval | undefined;
    for (let i = 0; i < 600 && !request; i++) {
      const pending = await srv.api('GET', '/v1/tenants/mailroom/approvals?state=pending');
      request = (pending.json.items as Approval[])[0];
      if (!request) await new Promise((r) => setTimeout(r, 50));
    }
    expect(request, out).toBeDefined();
    expect(request).toMatchObject({ subject: 'agent:support-bot', tool: 'core__tool-0001', arguments: { query: 'example' } });
    expect((await srv.api('POST', `/v1/tenants/mailroom/approvals/${request!.id}/approve`, { body: { reason: 'looks right' } })).status).toBe(200);

    const code = await exited;
    expect(code, out).toBe(0);
    expect(out).toContain('core__tool-0001 → require_approval');
    expect(out).toContain(`waiting for a person: approval request ${request!.id}`);
    expect(out).toContain('approved by token:bootstrap-admin: core__tool-0001 → allow');
    expect(out).toContain('result (redacted for logs): {"result":"ran core__tool-0001","items":[{"id":1}]}');
  }, 60_000);
});
