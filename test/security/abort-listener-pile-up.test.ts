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
