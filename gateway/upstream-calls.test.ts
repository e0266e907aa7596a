import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import { UpstreamCalls } from './upstream-calls.ts';

/** A transport whose sent messages are kept and whose incoming messages the test delivers. */
function fakeTransport() {
  const sent: Array<Record<string, unknown>> = [];
  const toSdk: JSONRPCMessage[] = [];
  const transport = {
    sendFails: undefined as Error | undefined,
    async start() {},
    async close() {},
    async send(m: JSONRPCMessage) {
      if (transport.sendFails) throw transport.sendFails;
      sent.push(m as Record<string, unknown>);
    },
    // What the SDK client installed when it connected.
    onmessage: ((m: JSONRPCMessage) => void toSdk.push(m)) as ((m: JSONRPCMessage) => void) | undefined,
  };
  return { transport, sent, toSdk, deliver: (m: unknown) => transport.onmessage!(m as JSONRPCMessage) };
}

const echo = { content: [{ type: 'text', text: 'echo: hi' }] };

describe('UpstreamCalls', () => {
  it('sends tools/call under its own ids and resolves with the answer, leaving the SDK client its own traffic', async () => {
    const { transport, sent, toSdk, deliver } = fakeTransport();
    const calls = new UpstreamCalls(transport);
    const a = calls.call('echo', { text: 'hi' }, 1000);
    const b = calls.call('echo', { text: 'ho' }, 1000);
    await Promise.resolve();
    expect(sent.map((m) => m.method)).toEqual(['tools/call', 'tools/call']);
    expect(sent[0].params).toEqual({ name: 'echo', arguments: { text: 'hi' } });
    expect(typeof sent[0].id).toBe('string');
    expect(sent[0].id).not.toBe(sent[1].id);
    // Answers in the other order, and the SDK client's own answer (numeric id) and a notification pass by.
    deliver({ jsonrpc: '2.0', id: 0, result: { tools: [] } });
    deliver({ jsonrpc: '2.0', id: sent[1].id, result: { content: [{ type: 'text', text: 'echo: ho' }] } });
    deliver({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    deliver({ jsonrpc: '2.0', id: sent[0].id, result: echo });
    await expect(a).resolves.toEqual(echo);
    await expect(b).resolves.toEqual({ content: [{ type: 'text', text: 'echo: ho' }] });
    expect(toSdk).toEqual([
      { jsonrpc: '2.0', id: 0, result: { tools: [] } },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
  });

  it('rejects with the code of an error answer, and with the schema issues of a result that is not a tool result', async () => {
    const { transport, sent, deliver } = fakeTransport();
    const calls = new UpstreamCalls(transport);
    const refused = calls.call('echo', {}, 1000);
    const wrong = calls.call('echo', {}, 1000);
    await Promise.resolve();
    deliver({ jsonrpc: '2.0', id: sent[0].id, error: { code: -32602, message: 'bad params' } });
    deliver({ jsonrpc: '2.0', id: sent[1].id, result: { content: 'not a list' } });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    await expect(wrong).rejects.toHaveProperty('issues');
  });

  it('on timeout tells the server the call is cancelled, rejects with RequestTimeout, and swallows the late answer', async () => {
    vi.useFakeTimers();
    try {
      const { transport, sent, toSdk, deliver } = fakeTransport();
      const calls = new UpstreamCalls(transport);
      const late = calls.call('hang', {}, 50);
      const outcome = late.catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(60);
      expect(await outcome).toMatchObject({ code: -32001 });
      expect(sent[1]).toMatchObject({ method: 'notifications/cancelled', params: { requestId: sent[0].id } });
      // Without the lane the SDK would see an answer to an id it never sent and report an error.
      deliver({ jsonrpc: '2.0', id: sent[0].id, result: echo });
      expect(toSdk).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects a call whose message could not be sent with the transport error', async () => {
    const { transport } = fakeTransport();
    transport.sendFails = Object.assign(new Error('Error POSTing to endpoint (HTTP 404)'), { code: 404 });
    await expect(new UpstreamCalls(transport).call('echo', {}, 1000)).rejects.toMatchObject({ code: 404 });
  });

  it('fails every waiting call as a closed connection on close, and every later one at once', async () => {
    const { transport, sent } = fakeTransport();
    const calls = new UpstreamCalls(transport);
    const waiting = calls.call('echo', {}, 1000);
    await Promise.resolve();
    calls.close();
    await expect(waiting).rejects.toMatchObject({ code: -32000 });
    await expect(calls.call('echo', {}, 1000)).rejects.toMatchObject({ code: -32000 });
    expect(sent).toHaveLength(1);
  });
});
