// The attack (or plain wear): a host keeps one AbortSignal for its whole life (its shutdown signal)
// and passes it to every approval wait. Each wait that slept its last fraction of a second left an
// abort listener on that signal, so a long-running runtime collected one per call: memory that is
// never given back, and past Node's limit a MaxListenersExceededWarning on every call after.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { waitForApproval } from '../../runtime/client/approval-requests.ts';

const pending = async () => new Response(JSON.stringify({ id: 'a1', state: 'pending' }), { status: 200, headers: { 'content-type': 'application/json' } });

describe('approval waits sharing one long-lived signal', () => {
  it('leave no abort listener behind once each wait is over', async () => {
    const shutdown = new AbortController();
    const conn = { url: 'http://127.0.0.1:1', tenant: 'acme', token: 't', fetch: pending as typeof fetch };
    for (let i = 0; i < 20; i++) {
      const out = await waitForApproval(conn, 'a1', { timeoutMs: 20, signal: shutdown.signal });
      expect(out).toEqual({ state: 'pending', id: 'a1' });
    }
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });
});

// The same wear through the requests themselves: each request's signal was made with
// AbortSignal.any([signal, AbortSignal.timeout(…)]), and Node 20 keeps a reference to every such
// signal in the one it was made from, for as long as that one lives.
const dependants = (signal: AbortSignal): number => {
  const held = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  return held === undefined ? 0 : ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[held]?.size ?? 0);
};

describe('approval requests sharing one long-lived signal', () => {
  it('leave nothing of theirs held by that signal once each is over', async () => {
    const shutdown = new AbortController();
    const conn = { url: 'http://127.0.0.1:1', tenant: 'acme', token: 't', fetch: pending as typeof fetch };
    for (let i = 0; i < 50; i++) await waitForApproval(conn, 'a1', { timeoutMs: 0, signal: shutdown.signal });
    expect(dependants(shutdown.signal)).toBe(0);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });

  it('still gives up at once when that signal aborts', async () => {
    const shutdown = new AbortController();
    const hanging = ((_url: string, init?: RequestInit) =>
      new Promise<Response>((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }))) as typeof fetch;
    const waiting = waitForApproval({ url: 'http://127.0.0.1:1', tenant: 'acme', token: 't', fetch: hanging }, 'a1', {
      timeoutMs: 60_000,
      signal: shutdown.signal,
    });
    shutdown.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'unreachable' });
  });
});
