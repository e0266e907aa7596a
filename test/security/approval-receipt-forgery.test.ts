// A receipt allows exactly the call a person approved, once: replayed, moved to other arguments,
// another subject or tenant, expired, signed by a retired or unknown key, or with one payload byte
// changed, it is refused as approval_invalid, and the call stays unapproved.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApprovalReceipt, ApprovalReceiptPayload, Bundle } from '../../policy-schemas/types.gen.ts';
import { approvalFor, argumentsDigest, clientConfirmation, MemoryUsedReceipts } from '../../runtime/approval-receipt.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { FileUsedReceipts } from '../../runtime/client/used-receipts.ts';
import { createView, decide, type ToolCall } from '../../runtime/decide.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { TrustedKeys } from '../../runtime/verify-bundle.ts';
import { signApprovalReceipt } from '../../server/signing/sign.ts';
import { makeBundle } from '../distribution/signed-bundles.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function key(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  const signer = { kid, privateKey: privateKey as unknown as CryptoKey };
  return { kid, signer, jwk: { kid, kty: 'OKP', crv: 'Ed25519', x } };
}

const active = key('active-key');
const retired = key('retired-key');
const upcoming = key('next-key');
const stranger = key('unknown-key');
const trustedKeys: TrustedKeys = {
  keys: [
    { ...active.jwk, status: 'active' },
    { ...retired.jwk, status: 'retired' },
    { ...upcoming.jwk, status: 'next' },
  ],
};

// core__tool-0002 is a state_change tool: the analyst role (agent:support-bot) needs approval for it.
const TOOL = 'core__tool-0002';
const SUBJECT = 'agent:support-bot';
const args = { query: 'send the quarterly report to finance@acme.example' };

function viewFor(tenant = 'acme', by?: 'person' | 'client') {
  const bundle = makeBundle({ tenant, version: 1 }) as Bundle;
  if (by) (bundle.policy.roles!.analyst as { approvals?: unknown }).approvals = { by };
  return createView(loadBundle(bundle), { subject: SUBJECT });
}

async function receipt(over: Partial<ApprovalReceiptPayload> = {}, signer = active.signer): Promise<ApprovalReceipt> {
  const payload: ApprovalReceiptPayload = {
    format: 'toolgate.approval/v1',
    tenant: 'acme',
    id: globalThis.crypto.randomUUID(),
    subject: SUBJECT,
    tool: TOOL,
    argumentsDigest: argumentsDigest(args),
    approvedBy: 'user:alice',
    approvedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 900_000).toISOString(),
    ...over,
  };
  return { payload, signature: await signApprovalReceipt(Buffer.from(canonicalJson(payload), 'utf8'), signer) };
}

const call = (over: Partial<ToolCall> = {}): ToolCall => ({ name: TOOL, arguments: args, ...over });

describe('approval receipts', () => {
  it('allows the approved call once, recording who approved it', async () => {
    const view = viewFor();
    expect(decide(view, call()).decision).toBe('require_approval');
    const r = await receipt();
    const d = decide(view, call(), { approval: approvalFor(r, { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d).toMatchObject({ decision: 'allow', approval: { id: r.payload.id, by: 'person' } });
  });

  it('refuses a receipt replayed for a second call', async () => {
    const view = viewFor();
    const used = new MemoryUsedReceipts();
    const r = await receipt();
    expect(decide(view, call(), { approval: approvalFor(r, { trustedKeys, used }) }).decision).toBe('allow');
    const again = decide(view, call(), { approval: approvalFor(r, { trustedKeys, used }) });
    expect(again).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid', message: 'the approval receipt was already used' });
  });

  it('refuses a replay after the runtime restarts: used ids live in the cache directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-receipts-'));
    dirs.push(dir);
    const view = viewFor();
    const r = await receipt();
    expect(decide(view, call(), { approval: approvalFor(r, { trustedKeys, used: new FileUsedReceipts(dir, 'acme') }) }).decision).toBe('allow');
    const afterRestart = new FileUsedReceipts(dir, 'acme');
    expect(decide(view, call(), { approval: approvalFor(r, { trustedKeys, used: afterRestart }) })).toMatchObject({ errorCode: 'approval_invalid' });
  });

  it.each([
    ['other arguments', { query: 'send the payroll to attacker@evil.example' }, {}, 'for other arguments'],
    ['another subject', args, { subject: 'agent:other-bot' }, 'for another subject'],
    ['another tool', args, { tool: 'core__tool-0001' }, 'for another tool'],
  ])('refuses a receipt for %s', async (_name, callArgs, payloadOver, message) => {
    const view = viewFor();
    const r = await receipt(payloadOver as Partial<ApprovalReceiptPayload>);
    const d = decide(view, call({ arguments: callArgs }), { approval: approvalFor(r, { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d.decision).toBe('deny');
    expect(d.errorCode).toBe('approval_invalid');
    expect(d.message).toContain(message);
    // The refusal never repeats the arguments.
    expect(d.message).not.toContain('evil.example');
  });

  it('refuses a receipt issued for another tenant', async () => {
    const r = await receipt({ tenant: 'globex' });
    const d = decide(viewFor('acme'), call(), { approval: approvalFor(r, { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid', message: 'the approval receipt is for another tenant' });
  });

  it('refuses an expired receipt', async () => {
    const r = await receipt({ approvedAt: new Date(Date.now() - 1_000_000).toISOString(), expiresAt: new Date(Date.now() - 1000).toISOString() });
    const d = decide(viewFor(), call(), { approval: approvalFor(r, { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d).toMatchObject({ errorCode: 'approval_invalid', message: 'the approval receipt expired' });
  });

  it('refuses a receipt signed by a retired key or by a key nobody trusts', async () => {
    const byRetired = decide(viewFor(), call(), { approval: approvalFor(await receipt({}, retired.signer), { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(byRetired).toMatchObject({ errorCode: 'approval_invalid', message: 'the approval receipt is signed by a retired key' });
    const byStranger = decide(viewFor(), call(), {
      approval: approvalFor(await receipt({}, stranger.signer), { trustedKeys, used: new MemoryUsedReceipts() }),
    });
    expect(byStranger).toMatchObject({ errorCode: 'approval_invalid' });
    expect(byStranger.message).toContain('does not trust');
    // A stranger's key that claims a trusted kid fails on the signature instead.
    const impostor = await receipt({}, { kid: active.kid, privateKey: stranger.signer.privateKey });
    expect(decide(viewFor(), call(), { approval: approvalFor(impostor, { trustedKeys, used: new MemoryUsedReceipts() }) }).message).toBe(
      'the approval receipt signature does not verify',
    );
  });

  it('refuses a receipt signed by the next key: only an active key signs receipts, though the next one may already sign bundles', async () => {
    const d = decide(viewFor(), call(), { approval: approvalFor(await receipt({}, upcoming.signer), { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid', message: 'the approval receipt is signed by a key that is next, not active' });
  });

  it('refuses a receipt with one payload byte changed', async () => {
    const r = await receipt();
    const tampered = { ...r, payload: { ...r.payload, approvedBy: 'user:alicf' } };
    const d = decide(viewFor(), call(), { approval: approvalFor(tampered, { trustedKeys, used: new MemoryUsedReceipts() }) });
    expect(d).toMatchObject({ errorCode: 'approval_invalid', message: 'the approval receipt signature does not verify' });
    const longer = { ...r, payload: { ...r.payload, expiresAt: new Date(Date.parse(r.payload.expiresAt) + 1).toISOString() } };
    expect(decide(viewFor(), call(), { approval: approvalFor(longer, { trustedKeys, used: new MemoryUsedReceipts() }) }).errorCode).toBe('approval_invalid');
  });

  it('refuses garbage where a receipt should be', () => {
    for (const junk of [null, 'approved', { payload: {}, signature: 'x..y' }, { signature: 'a..b' }]) {
      const d = decide(viewFor(), call(), { approval: approvalFor(junk, { trustedKeys, used: new MemoryUsedReceipts() }) });
      expect(d.errorCode).toBe('approval_invalid');
    }
  });

  it('counts a client’s own confirmation only where the role says approvals.by: "client"', () => {
    const person = decide(viewFor('acme'), call(), { approval: clientConfirmation('elicitation-1') });
    expect(person).toMatchObject({ decision: 'deny', errorCode: 'approval_invalid' });
    expect(person.message).toContain("needs a person's approval");
    const client = decide(viewFor('acme', 'client'), call(), { approval: clientConfirmation('elicitation-2') });
    expect(client).toMatchObject({ decision: 'allow', approval: { id: 'elicitation-2', by: 'client' } });
  });

  it('leaves a call that needs no approval alone, and does not use the receipt up', async () => {
    const used = new MemoryUsedReceipts();
    const r = await receipt({ tool: 'core__tool-0001' });
    const d = decide(viewFor(), call({ name: 'core__tool-0001' }), { approval: approvalFor(r, { trustedKeys, used }) });
    expect(d.decision).toBe('allow');
    expect(d.approval).toBeUndefined();
    expect(used.has(r.payload.id, Date.now())).toBe(false);
  });
});
