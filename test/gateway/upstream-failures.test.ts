import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerTooLargeError, HttpUpstreamTransport } from '../../gateway/http-upstream-transport.ts';
import { Upstream } from '../../gateway/upstream.ts';
import { upstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';

// One upstream's failures, seen from the Upstream object the gateway's sessions share: what a
// busy but healthy server, a stuck call and an endless answer do to the other calls in flight.
const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, '..', 'fixtures', 'mcp', 'gateway-upstream.ts');

describe('an upstream over stdio under load and with a stuck call', () => {
  let dir: string;
  let upstream: Upstream;
  const failures: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-upstream-failures-'));
    const stateFile = join(dir, 'state.json');
    writeFileSync(stateFile, JSON.stringify(upstreamFixtureState()));
    upstream = new Upstream(
      'rec',
      { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE, stateFile, '-'] },
      { backoff: { initialMs: 50, maxMs: 200 }, onFailure: (_id, message) => failures.push(message) },
    );
    await upstream.start();
    expect(upstream.isReady()).toBe(true);
  });

  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers more calls at once than the flood limit allows unsolicited messages a second', async () => {
    // 3,000 answers arrive within about a second; only unsolicited messages count as a flood.
    const answers = await Promise.all(Array.from({ length: 3000 }, (_, i) => upstream.call('echo', { text: `n${i}` }, 20_000)));
    expect(answers.filter((a) => !a.ok)).toEqual([]);
    expect(failures).toEqual([]);
    expect(upstream.status()).toMatchObject({ state: 'ready', restarts: 0 });
  });

  it('keeps other calls in flight when one call times out, and restarts a server that answers nothing', async () => {
    const slow = upstream.call('echo', { text: 'slow:1500' }, 20_000);
    const stuck = await upstream.call('hang', {}, 300);
    expect(stuck).toMatchObject({ ok: false, code: 'timeout' });
    // What the gateway does after a call ran out of time: with another call waiting, only a suspicion.
    upstream.restartAfterTimeout();
    expect(upstream.status()).toMatchObject({ state: 'ready', restarts: 0 });
    expect(await slow).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'echo: slow:1500' }] } });
    // That result showed the server at work: the next stuck call, with another waiting, is again only a suspicion.
    const slowAgain = upstream.call('echo', { text: 'slow:1000' }, 20_000);
    expect(await upstream.call('hang', {}, 300)).toMatchObject({ ok: false, code: 'timeout' });
    upstream.restartAfterTimeout();
    expect(upstream.status()).toMatchObject({ state: 'ready', restarts: 0 });
    expect(await slowAgain).toMatchObject({ ok: true });

    // Stuck with nothing else waiting: restarted, and back.
    expect(await upstream.call('hang', {}, 300)).toMatchObject({ ok: false, code: 'timeout' });
    upstream.restartAfterTimeout();
    expect(upstream.status().restarts).toBe(1);
    expect(failures).toEqual(['did not answer a call in time']);
    await until(() => upstream.isReady());
    expect(await upstream.call('echo', { text: 'back' }, 5000)).toMatchObject({ ok: true });
  });

  it('restarts a server that stays silent through two timeouts, though a call is still waiting', async () => {
    const restarts = upstream.status().restarts;
    const waiting = upstream.call('hang', {}, 20_000);
    expect(await upstream.call('hang', {}, 200)).toMatchObject({ ok: false, code: 'timeout' });
    upstream.restartAfterTimeout();
    expect(upstream.status().restarts).toBe(restarts);
    expect(await upstream.call('hang', {}, 200)).toMatchObject({ ok: false, code: 'timeout' });
    upstream.restartAfterTimeout();
    expect(upstream.status().restarts).toBe(restarts + 1);
    // The restart ends the call that was still waiting on the stuck server.
    expect(await waiting).toMatchObject({ ok: false, code: 'upstream_unavailable' });
    await until(() => upstream.isReady());
  });
});

describe('an upstream over HTTP that sends an endless answer', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => void endlessMcp(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps the notification stream through any number of keep-alive comments, and cuts off one event past the limit', async () => {
    for (const mode of ['pings', 'bigevent'] as const) {
      const transport = new HttpUpstreamTransport(new URL(`${url}?mode=${mode}`), { maxMessageBytes: 4096 });
      const errors: Error[] = [];
      const messages: unknown[] = [];
      transport.onerror = (e) => errors.push(e);
      transport.onmessage = (m) => messages.push(m);
      try {
        // Accepted (202): the transport then opens the server's notification stream.
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        if (mode === 'pings') {
          // 16 KB of comments, four times the limit, then the notification.
          await until(() => messages.length > 0);
          expect(errors).toEqual([]);
          expect(messages).toEqual([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
        } else {
          await until(() => errors.length > 0);
          expect(errors[0]).toBeInstanceOf(AnswerTooLargeError);
          expect(messages).toEqual([]);
        }
      } finally {
        await transport.close();
      }
    }
  });

  it("lets go of a call's answer once the call timed out, without failing the upstream", async () => {
    const failures: string[] = [];
    const upstream = new Upstream('trickle', { kind: 'http', url: `${url}?mode=trickle` }, { onFailure: (_id, m) => failures.push(m) });
    try {
      await upstream.start();
      const closedBefore = trickleClosed;
      expect(await upstream.call('endless', {}, 300)).toMatchObject({ ok: false, code: 'timeout' });
      // The answer's connection is closed: an upstream cannot hold one open per timed-out call.
      await until(() => trickleClosed > closedBefore, 5000);
      expect(failures).toEqual([]);
      expect(upstream.status()).toMatchObject({ state: 'ready', restarts: 0 });
    } finally {
      await upstream.close();
    }
  });

  for (const mode of ['json', 'sse'] as const) {
    it(`cuts off a ${mode} answer past the size limit: upstream_unavailable, not a timeout, and not the memory`, async () => {
      const failures: string[] = [];
      const upstream = new Upstream('endless', { kind: 'http', url: `${url}?mode=${mode}` }, { onFailure: (_id, m) => failures.push(m) });
      try {
        await upstream.start();
        expect(upstream.isReady()).toBe(true);
        const rss = process.memoryUsage().rss;
        const answer = await upstream.call('endless', {}, 60_000);
        expect(answer).toMatchObject({ ok: false, code: 'upstream_unavailable' });
        expect(failures).toEqual(['sent a message larger than 16 MiB']);
        // 16 MiB held at most (and freed), where the answer alone would grow without end.
        expect(process.memoryUsage().rss - rss).toBeLessThan(256 * 1024 * 1024);
      } finally {
        await upstream.close();
      }
    });
  }
});

/** How many trickling answers the client has let go of (their connection closed). */
let trickleClosed = 0;

/** A minimal streamable HTTP MCP server whose one tool answers without end (JSON body or SSE event, or a trickle). */
async function endlessMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const mode = new URL(req.url ?? '/', 'http://x').searchParams.get('mode');
  if (req.method === 'GET' && (mode === 'pings' || mode === 'bigevent')) return notificationStream(res, mode);
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number | string; method: string };
  const json = (result: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'endless' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  };
  if (message.method === 'initialize')
    return json({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'endless', version: '1' } });
  if (message.id === undefined) return void res.writeHead(202).end();
  if (message.method === 'tools/list') return json({ tools: [{ name: 'endless', inputSchema: { type: 'object' } }] });
  const sse = mode === 'sse';
  res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
  res.write(
    sse
      ? `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`
      : `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`,
  );
  if (mode === 'trickle') {
    // A byte now and then, never the end: under any size limit, until the client lets go.
    const drip = setInterval(() => res.write('x'), 20);
    res.on('close', () => {
      clearInterval(drip);
      trickleClosed++;
    });
    return;
  }
  const block = 'x'.repeat(64 * 1024);
  const more = () => {
    // Until the client goes away: it never ends on its own.
    while (!res.destroyed && res.write(block));
    if (!res.destroyed) res.once('drain', more);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  more();
}

/** The server's notification stream: many keep-alive comments then a notification, or one event without end. */
function notificationStream(res: ServerResponse, mode: 'pings' | 'bigevent'): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (mode === 'pings') {
    res.write(': ping\n\n'.repeat(2000));
    // Later, so that it does not arrive in the same chunk as the comments.
    setTimeout(() => res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n'), 200);
  } else {
    res.write(`event: message\ndata: ${'x'.repeat(10_000)}`);
  }
}

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
