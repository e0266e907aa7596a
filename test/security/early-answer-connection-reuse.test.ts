import { serve } from '@hono/node-server';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type TestApp, startTestApp } from '../support/harness.ts';

// An answer sent before the body was read used to keep the connection open and then drop it, so
// a client reusing it (Node's fetch keeps connections alive) failed with "other side closed".
let t: TestApp;
let server: Server;
let base: string;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
  server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  if (!server.listening) await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
});

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A body sent in pieces with a pause, as a slow client on a long upload does. */
function slowBody(bytes: number, pauseMs: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    async pull(controller) {
      if (sent >= bytes) return controller.close();
      if (sent > 0) await new Promise((r) => setTimeout(r, pauseMs));
      const chunk = new Uint8Array(Math.min(256 * 1024, bytes - sent)).fill(0x20);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

async function thenANormalRequestWorks(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${base}/v1/groups`, { headers: admin });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
}

describe('early answers close the connection', () => {
  it('413 for a declared 2 MiB body, then the next request on the same client succeeds', async () => {
    const r = await fetch(`${base}/v1/groups`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(r.status).toBe(413);
    expect(r.headers.get('connection')).toBe('close');
    expect((await r.json()).code).toBe('payload_too_large');
    await thenANormalRequestWorks();
  });

  it('401 before a 300 KiB body was read, then the next request succeeds', async () => {
    const body = JSON.stringify({ name: 'g', description: 'd'.repeat(300 * 1024) });
    const r = await fetch(`${base}/v1/groups`, { method: 'POST', headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/json' }, body });
    expect(r.status).toBe(401);
    expect(r.headers.get('connection')).toBe('close');
    await r.arrayBuffer();
    await thenANormalRequestWorks();
  });

  it('413 for a slow chunked upload past the limit, then the next request succeeds', async () => {
    const r = await fetch(`${base}/v1/groups`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: slowBody(3 * 1024 * 1024, 100),
      duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(413);
    expect(r.headers.get('connection')).toBe('close');
    await r.arrayBuffer();
    await thenANormalRequestWorks();
  });

  it('keeps the connection for answers that read the body, even refusals', async () => {
    const r = await fetch(`${base}/v1/groups`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bad Name!' }),
    });
    expect(r.status).toBe(400);
    expect(r.headers.get('connection')).not.toBe('close');
    await r.arrayBuffer();
    await thenANormalRequestWorks();
  });
});
