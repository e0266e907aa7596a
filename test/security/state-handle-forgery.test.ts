import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedClient } from '../../gateway/config.ts';
import { STATE_HANDLE_TTL_MS, StateHandles } from '../../gateway/state-handles.ts';

// The attacks on MCP 2026-07-28 workflow state: a client presents a handle it was not given (made
// up, edited, another client's, another tenant's gateway sharing the cache directory, another
// gateway's, an expired one), or passes the answer to one input request off as another call's.
const client = (name: string, subject = 'agent:research-bot'): ResolvedClient => ({
  name,
  subject,
  keyDigest: null,
  request: { subject },
  initialState: 'undefined',
});
const alice = client('alice');
const key = randomBytes(32);
let clock = Date.parse('2026-01-01T00:00:00Z');
const now = () => clock;
const acme = new StateHandles(key, 'acme', STATE_HANDLE_TTL_MS, now);

describe('state handles', () => {
  it('carries the state back to the client it was issued to', () => {
    expect(acme.read(alice, acme.issue(alice, 'analysis'))).toEqual({ ok: true, state: 'analysis' });
  });

  it('refuses a handle with its payload rewritten to another state', () => {
    const [prefix, , mac] = acme.issue(alice, 'research').split('.');
    const payload = Buffer.from(JSON.stringify(['acme', 'alice', 'agent:research-bot', 'results', clock + 60_000])).toString('base64url');
    expect(acme.read(alice, `${prefix}.${payload}.${mac}`)).toMatchObject({ ok: false, message: expect.stringMatching(/signature does not verify/) });
  });

  it('refuses another client’s handle, even one with the same subject', () => {
    const bob = client('bob');
    expect(acme.read(bob, acme.issue(alice, 'analysis'))).toMatchObject({ ok: false, message: expect.stringMatching(/another client/) });
    expect(acme.read(client('alice', 'agent:other'), acme.issue(alice, 'analysis'))).toMatchObject({ ok: false });
  });

  it('refuses a handle of another tenant’s gateway that shares the key (one cache directory)', () => {
    const globex = new StateHandles(key, 'globex', STATE_HANDLE_TTL_MS, now);
    expect(acme.read(alice, globex.issue(alice, 'analysis'))).toMatchObject({ ok: false, message: expect.stringMatching(/another tenant/) });
  });

  it('refuses a handle of another gateway (another key)', () => {
    const elsewhere = new StateHandles(randomBytes(32), 'acme', STATE_HANDLE_TTL_MS, now);
    expect(acme.read(alice, elsewhere.issue(alice, 'analysis'))).toMatchObject({ ok: false, message: expect.stringMatching(/signature does not verify/) });
  });

  it('refuses an expired handle', () => {
    const handle = acme.issue(alice, 'analysis');
    clock += STATE_HANDLE_TTL_MS;
    expect(acme.read(alice, handle)).toMatchObject({ ok: false, message: expect.stringMatching(/expired/) });
  });

  it('keeps state handles and input-request states apart: neither is taken for the other', () => {
    const retry = acme.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', 'server-state');
    expect(acme.read(alice, retry)).toMatchObject({ ok: false });
    const state = acme.issue(alice, 'analysis');
    expect(acme.readRetry(alice, state, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: false });
    // Swapping the prefix does not make the signature verify under the other kind.
    const [, payload, mac] = retry.split('.');
    expect(acme.read(alice, `tgs1.${payload}.${mac}`)).toMatchObject({ ok: false, message: expect.stringMatching(/signature does not verify/) });
  });

  it('binds an input-request state to its tool and exact arguments', () => {
    const retry = acme.issueRetry(alice, 'mcp__rec__deploy', 'digest-1', 'server-state');
    expect(acme.readRetry(alice, retry, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: true, serverState: 'server-state' });
    expect(acme.readRetry(alice, retry, 'mcp__rec__deploy', 'digest-2')).toMatchObject({ ok: false, message: expect.stringMatching(/another call/) });
    expect(acme.readRetry(alice, retry, 'mcp__rec__delete', 'digest-1')).toMatchObject({ ok: false, message: expect.stringMatching(/another call/) });
    expect(acme.readRetry(client('bob'), retry, 'mcp__rec__deploy', 'digest-1')).toMatchObject({ ok: false, message: expect.stringMatching(/another client/) });
  });
});
