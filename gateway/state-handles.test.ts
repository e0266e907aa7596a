import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedClient } from './config.ts';
import { STATE_HANDLE_TTL_MS, StateHandles, serverStateFits } from './state-handles.ts';

const alice: ResolvedClient = {
  name: 'alice',
  subject: 'agent:research-bot',
  keyDigest: null,
  request: { subject: 'agent:research-bot' },
  initialState: 'undefined',
};
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same handle spelled otherwise: the spare low bit of the mac's last character flipped (a 32-byte mac leaves two spare bits). */
function respelled(handle: string): string {
  const last = handle.at(-1) as string;
  return handle.slice(0, -1) + ALPHABET[ALPHABET.indexOf(last) ^ 1];
}

describe('state handles are taken only as issued, letter for letter', () => {
  const handles = new StateHandles(randomBytes(32), 'acme', STATE_HANDLE_TTL_MS, () => Date.parse('2026-01-01T00:00:00Z'));

  it('refuses a confirmed requestState respelled (padding, spare bits) after it was spent', () => {
    const confirmed = handles.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', undefined, 'confirmed');
    expect(handles.readRetry(alice, confirmed, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: true, approval: 'confirmed' });
    expect(handles.spendConfirmation(alice, confirmed)).toBe(true);
    for (const replay of [respelled(confirmed), `${confirmed}=`, `${confirmed}==`]) {
      expect(handles.readRetry(alice, replay, 'mcp__rec__deploy', 'digest-1')).toMatchObject({
        ok: false,
        message: expect.stringMatching(/signature does not verify/),
      });
    }
  });

  it('takes a confirmation once, and past the remembered number refuses more rather than forget one still good', () => {
    let nowMs = Date.parse('2026-01-01T00:00:00Z');
    const counted = new StateHandles(randomBytes(32), 'acme', STATE_HANDLE_TTL_MS, () => nowMs);
    const bob: ResolvedClient = { ...alice, name: 'bob' };
    const first = counted.issueRetry(alice, 'mcp__rec__deploy', 'digest-0', undefined, 'confirmed');
    expect(counted.spendConfirmation(alice, first)).toBe(true);
    expect(counted.spendConfirmation(alice, first)).toBe('answered');
    for (let i = 1; i < 10_000; i++) expect(counted.spendConfirmation(alice, `tgr1.${i}.x`)).toBe(true);
    expect(counted.spendConfirmation(alice, 'tgr1.more.x')).toBe('too_many');
    // The first is still remembered, and another client is not held back.
    expect(counted.spendConfirmation(alice, first)).toBe('answered');
    expect(counted.spendConfirmation(bob, first)).toBe(true);
    // Ten minutes on, the spent ones have expired with their requestStates, and there is room again.
    nowMs += 10 * 60_000 + 1;
    expect(counted.spendConfirmation(alice, 'tgr1.more.x')).toBe(true);
  });

  it("takes back a requestState carrying a large upstream state (the server's own, 20 KB)", () => {
    const serverState = 'x'.repeat(20_000);
    const retry = handles.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', serverState);
    expect(handles.readRetry(alice, retry, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: true, serverState });
  });

  it('takes back every upstream state it carries, the largest of each kind of text included', () => {
    // Plain text, text that JSON escapes six-fold, and four-byte characters, each at the largest carried.
    for (const unit of ['x', '\u0001', '😀']) {
      let serverState = '';
      for (let step = 1 << 18; step >= 1; step >>= 1) if (serverStateFits(serverState + unit.repeat(step))) serverState += unit.repeat(step);
      expect(serverStateFits(serverState + unit)).toBe(false);
      const retry = handles.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', serverState);
      expect(handles.readRetry(alice, retry, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: true, serverState });
    }
    expect(serverStateFits('x'.repeat(200_000))).toBe(false);
  });

  it('refuses a respelled state handle', () => {
    const handle = handles.issue(alice, 'analysis');
    expect(handles.read(alice, handle)).toEqual({ ok: true, state: 'analysis' });
    expect(handles.read(alice, respelled(handle))).toMatchObject({ ok: false });
    expect(handles.read(alice, `${handle}=`)).toMatchObject({ ok: false });
  });
});
