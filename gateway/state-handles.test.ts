import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedClient } from './config.ts';
import { STATE_HANDLE_TTL_MS, StateHandles } from './state-handles.ts';

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
    expect(handles.spendConfirmation(confirmed)).toBe(true);
    for (const replay of [respelled(confirmed), `${confirmed}=`, `${confirmed}==`]) {
      expect(handles.readRetry(alice, replay, 'mcp__rec__deploy', 'digest-1')).toMatchObject({
        ok: false,
        message: expect.stringMatching(/signature does not verify/),
      });
    }
  });

  it("takes back a requestState carrying a large upstream state (the server's own, 20 KB)", () => {
    const serverState = 'x'.repeat(20_000);
    const retry = handles.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', serverState);
    expect(handles.readRetry(alice, retry, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: true, serverState });
  });

  it('refuses a respelled state handle', () => {
    const handle = handles.issue(alice, 'analysis');
    expect(handles.read(alice, handle)).toMatchObject({ ok: true, state: 'analysis' });
    expect(handles.read(alice, respelled(handle))).toMatchObject({ ok: false });
    expect(handles.read(alice, `${handle}=`)).toMatchObject({ ok: false });
  });
});

describe('a state handle the workflow has moved past', () => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const now = () => clock;
  const key = randomBytes(32);
  const chainOf = (handles: StateHandles, handle: string) => {
    const read = handles.read(alice, handle);
    if (!read.ok) throw new Error(read.message);
    return read.chain;
  };

  it('is refused once a later handle of its workflow moved the state, while one that kept the state stays good', () => {
    const handles = new StateHandles(key, 'acme', STATE_HANDLE_TTL_MS, now);
    const analysis = handles.issue(alice, 'analysis');
    const kept = handles.issue(alice, 'analysis', chainOf(handles, analysis));
    expect(handles.read(alice, analysis)).toMatchObject({ ok: true, state: 'analysis' });
    const results = handles.issue(alice, 'results', chainOf(handles, kept));
    for (const old of [analysis, kept]) expect(handles.read(alice, old)).toMatchObject({ ok: false, message: expect.stringMatching(/superseded/) });
    expect(handles.read(alice, results)).toMatchObject({ ok: true, state: 'results' });
    // Another workflow of the same client is its own: its handles are untouched.
    const other = handles.issue(alice, 'analysis');
    expect(handles.read(alice, other)).toMatchObject({ ok: true, state: 'analysis' });
  });

  it('is refused by another replica sharing the key once that replica has seen the newer handle', () => {
    const first = new StateHandles(key, 'acme', STATE_HANDLE_TTL_MS, now);
    const second = new StateHandles(key, 'acme', STATE_HANDLE_TTL_MS, now);
    const analysis = first.issue(alice, 'analysis');
    const results = first.issue(alice, 'results', chainOf(first, analysis));
    expect(second.read(alice, results)).toMatchObject({ ok: true, state: 'results' });
    expect(second.read(alice, analysis)).toMatchObject({ ok: false, message: expect.stringMatching(/superseded/) });
  });

  it('cannot be brought back by making the gateway forget its workflow: a forgotten workflow is refused', () => {
    const handles = new StateHandles(key, 'acme', STATE_HANDLE_TTL_MS, now, 2);
    const bob: ResolvedClient = { ...alice, name: 'bob' };
    const analysis = handles.issue(alice, 'analysis');
    handles.issue(alice, 'results', chainOf(handles, analysis));
    clock += 1;
    // Another client's workflows do not count against alice's.
    for (let i = 0; i < 5; i++) handles.issue(bob, 'analysis');
    expect(handles.read(alice, analysis)).toMatchObject({ ok: false, message: expect.stringMatching(/superseded/) });
    for (let i = 0; i < 2; i++) handles.issue(alice, 'research');
    expect(handles.read(alice, analysis)).toMatchObject({ ok: false, message: expect.stringMatching(/no longer follows/) });
  });

  it('is good for an hour at most, and a handle of the earlier format is refused', () => {
    const handles = new StateHandles(key, 'acme', undefined, now);
    const analysis = handles.issue(alice, 'analysis');
    clock += 3600_000;
    expect(handles.read(alice, analysis)).toMatchObject({ ok: false, message: expect.stringMatching(/expired/) });
    const [, payload, mac] = handles.issue(alice, 'analysis').split('.');
    expect(handles.read(alice, `tgs1.${payload}.${mac}`)).toMatchObject({ ok: false, message: expect.stringMatching(/earlier format/) });
  });
});
