import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { run } from '../../server/cli/commands/approvals.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';

const tenant = 'acme-research';
let srv: ServedApp;
let runtime: string;
let editor: string;

beforeAll(async () => {
  srv = await startServedApp();
  runtime = await srv.tokenFor('runtime', [tenant]);
  editor = await srv.tokenFor('editor', [tenant]);
});
afterAll(async () => srv.close());

async function cli(args: string[], token = editor) {
  const lines: string[] = [];
  const errors: string[] = [];
  const code = await run(args, { log: (l) => lines.push(l), error: (l) => errors.push(l) }, { env: { TOOLGATE_URL: srv.url, TOOLGATE_TOKEN: token } });
  return { code, out: lines.join('\n'), err: errors.join('\n') };
}

async function open(to: string): Promise<Approval> {
  const r = await srv.request('POST', `/v1/tenants/${tenant}/approvals`, {
    token: runtime,
    body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to }, reason: 'mail outside the company needs a person' },
  });
  return r.json as Approval;
}

describe('toolgate approvals', () => {
  it('lists the pending queue with subject, tool, the rule that asked and the arguments', async () => {
    const a = await open('press@newspaper.example');
    const r = await cli(['list', '--tenant', tenant]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`${a.id}  pending`);
    expect(r.out).toContain('agent:research-bot → core__send_email');
    expect(r.out).toContain('asked by: mail outside the company needs a person');
    expect(r.out).toContain('"to":"press@newspaper.example"');
  });

  it('approves with a reason and prints the receipt’s expiry; denies likewise', async () => {
    const a = await open('partner@supplier.example');
    const approved = await cli(['approve', a.id, '--tenant', tenant, '--reason', 'the contract says so']);
    expect(approved.code, approved.err).toBe(0);
    expect(approved.out).toMatch(new RegExp(`^approved ${a.id}: agent:research-bot → core__send_email \\(receipt valid until `));
    const b = await open('rival@competitor.example');
    const denied = await cli(['deny', b.id, '--tenant', tenant, '--reason', 'not to a competitor']);
    expect(denied.out).toBe(`denied ${b.id}: agent:research-bot → core__send_email`);
    const decided = await cli(['list', '--tenant', tenant, '--state', 'decided']);
    expect(decided.out).toContain('denied by token:');
    expect(decided.out).toContain(': not to a competitor');
  });

  it('refuses a decision without a reason, and passes on the server’s refusal with exit 1', async () => {
    const a = await open('someone@elsewhere.example');
    const noReason = await cli(['approve', a.id, '--tenant', tenant]);
    expect(noReason.code).toBe(2);
    expect(noReason.err).toContain('--reason is required');
    const own = await cli(['approve', a.id, '--tenant', tenant, '--reason', 'me'], runtime);
    expect(own.code).toBe(1);
    expect(own.err).toContain('403 forbidden');
    expect((await cli(['approve', a.id, '--tenant', tenant, '--reason', 'fine'])).code).toBe(0);
    const again = await cli(['deny', a.id, '--tenant', tenant, '--reason', 'too late']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('409 conflict');
    expect((await cli(['maybe', '--tenant', tenant])).code).toBe(2);
    expect((await cli(['list'])).code).toBe(2);
  });
});
