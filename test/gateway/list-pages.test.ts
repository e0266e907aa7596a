import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/gateway.ts';
import type { HttpListener } from '../../gateway/http-listener.ts';
import { LIST_PAGE_SIZE } from '../../gateway/list-pages.ts';
import { answerModernMessage } from '../../gateway/modern-http.ts';
import { StateHandles } from '../../gateway/state-handles.ts';
import type { Bundle } from '../../policy-schemas/types.gen.ts';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';
import { legacyClient, modernClient, modernMeta, postModern } from './era-clients.ts';
import { mcpBundle } from './mcp-bundle.ts';
import { listenOver, scriptedClient, scriptedGateway } from './scripted-gateway.ts';

// tools/list towards clients in pages past LIST_PAGE_SIZE, in both protocol eras: the official
// 1.x SDK client (2025-11-25 sessions) and the 2.x one (2026-07-28, stateless) walk every page
// and get the whole list once, in the gateway's order; a cursor the gateway did not give for this
// very list (garbage, tampered, from the bundle before a publish) is invalid params, -32602.
const COUNT = 2 * LIST_PAGE_SIZE + 37;
const upstreamState: UpstreamFixtureState = {
  tools: Array.from({ length: COUNT }, (_, i) => ({
    name: `tool_${String(i).padStart(4, '0')}`,
    description: `tool number ${i}`,
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
  })),
};
const EXPECTED = upstreamState.tools.map((t) => `mcp__rec__${t.name}`).sort();
const KEY = 'list-pages-client-0123456789';

let listener: HttpListener;
let gateway: Gateway;
let hold: (b: Bundle) => void;

beforeAll(async () => {
  ({ gateway, hold } = scriptedGateway(mcpBundle('pages', 1, 'rec', upstreamState), upstreamState, () => ({ ok: true, result: { content: [] } })));
  listener = await listenOver(gateway, { a: KEY }, 'pages');
});

afterAll(async () => {
  await listener?.close();
  gateway?.close();
});

const legacy = () => legacyClient(listener.url, KEY);
const modern = () => modernClient(listener.url, KEY);

type Lister = (params?: { cursor?: string; _meta?: Record<string, unknown> }) => Promise<{ tools: Array<{ name: string }>; nextCursor?: string }>;

/** Follows nextCursor from the first page to the last: every page's names, in order. */
async function walk(list: Lister, meta?: Record<string, unknown>): Promise<{ pages: string[][]; cursors: string[] }> {
  const pages: string[][] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor === undefined ? (meta ? { _meta: meta } : undefined) : { cursor, ...(meta ? { _meta: meta } : {}) });
    pages.push(page.tools.map((t) => t.name));
    cursor = page.nextCursor;
    if (cursor !== undefined) cursors.push(cursor);
    expect(pages.length).toBeLessThanOrEqual(10);
  } while (cursor !== undefined);
  return { pages, cursors };
}

function expectWholeList(pages: string[][]): void {
  expect(pages.map((p) => p.length)).toEqual([LIST_PAGE_SIZE, LIST_PAGE_SIZE, COUNT - 2 * LIST_PAGE_SIZE]);
  const all = pages.flat();
  expect(all).toEqual(EXPECTED);
  expect(new Set(all).size).toBe(COUNT);
}

/** A cursor of the right shape that names no page the gateway gave: its offset moved by one. */
function shifted(cursor: string): string {
  const [offset, fingerprint] = Buffer.from(cursor, 'base64url').toString('latin1').split(':');
  return Buffer.from(`${Number(offset) + 1}:${fingerprint}`, 'latin1').toString('base64url');
}

const BAD_CURSORS = ['garbage', '', 'not base64url!', 'x'.repeat(5000), Buffer.from('100:short', 'latin1').toString('base64url')];

describe('tools/list in pages, 2025-11-25 sessions (the 1.x SDK client)', () => {
  it('hands out the whole list once, in order, a page at a time, with the same cursors every time', async () => {
    const client = await legacy();
    try {
      const first = await walk((p) => client.listTools(p));
      expectWholeList(first.pages);
      expect(first.cursors).toHaveLength(2);
      // Stable: the same list gives the same cursors, and a cursor can be asked again.
      expect((await walk((p) => client.listTools(p))).cursors).toEqual(first.cursors);
      const again = await client.listTools({ cursor: first.cursors[1] });
      expect(again.tools.map((t) => t.name)).toEqual(first.pages[2]);
      expect(again.nextCursor).toBeUndefined();
      // A request the SDK's own handler answers (a progress token in _meta) pages the same way.
      expect((await walk((p) => client.listTools(p), { progressToken: 'p-1' })).pages).toEqual(first.pages);
    } finally {
      await client.close();
    }
  });

  it('refuses a cursor it did not give as invalid params, on both request paths', async () => {
    const client = await legacy();
    try {
      const { cursors } = await walk((p) => client.listTools(p));
      for (const cursor of [...BAD_CURSORS, shifted(cursors[0])]) {
        await expect(client.listTools({ cursor }), cursor.slice(0, 20)).rejects.toMatchObject({ code: -32602, message: /Invalid cursor/ });
        await expect(client.listTools({ cursor, _meta: { progressToken: 'p-2' } })).rejects.toMatchObject({ code: -32602 });
      }
      // The session is still served.
      expect((await client.listTools()).tools).toHaveLength(LIST_PAGE_SIZE);
    } finally {
      await client.close();
    }
  });
});

describe('tools/list in pages, 2026-07-28 (the 2.x SDK client and raw requests)', () => {
  it('is walked page by page and aggregated whole by the client, each page with its cache hints', async () => {
    const client = await modern();
    try {
      // The 2.x client asked without a cursor follows every page itself, so the first page is asked raw.
      const { pages, cursors } = await walk((p) => (p?.cursor === undefined ? firstPage() : client.listTools(p)));
      expectWholeList(pages);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(EXPECTED);
      // The list is the client's, not the session's: a 2025-11-25 session of the same client gets the same cursors.
      const session = await legacy();
      try {
        expect((await walk((p) => session.listTools(p))).cursors).toEqual(cursors);
      } finally {
        await session.close();
      }
      const res = await post({ cursor: cursors[0] });
      const body = await res.json();
      expect(body.result).toMatchObject({ resultType: 'complete', nextCursor: cursors[1], cacheScope: 'private', ttlMs: expect.any(Number) });
      expect(body.result.tools[0].name).toBe(EXPECTED[LIST_PAGE_SIZE]);
      expect(body.result.tools[0].inputSchema.properties).toHaveProperty('toolgate_state');
    } finally {
      await client.close();
    }
  });

  it('refuses a cursor it did not give as invalid params, over HTTP and stdio', async () => {
    const client = await modern();
    try {
      const first = await firstPage();
      expect(first.nextCursor).toBeDefined();
      for (const cursor of [...BAD_CURSORS, shifted(first.nextCursor!)]) {
        await expect(client.listTools({ cursor })).rejects.toMatchObject({ code: -32602 });
        const res = await post({ cursor });
        expect(res.status).toBe(200);
        expect((await res.json()).error).toMatchObject({ code: -32602, message: /Invalid cursor/ });
      }
      expect((await (await post({ cursor: 7 })).json()).error.code).toBe(-32602);

      const ctx = { gateway, handles: new StateHandles(randomBytes(32), 'pages'), version: '1', instructions: 'x' };
      const out: Array<Record<string, any>> = [];
      const ask = (cursor: unknown) =>
        answerModernMessage(
          ctx,
          { ...scriptedClient(), name: 'a' },
          { jsonrpc: '2.0', id: 9, method: 'tools/list', params: { cursor, _meta: modernMeta() } },
          (m) => void out.push(m),
        );
      await ask('garbage');
      expect(out.at(-1)!.error).toMatchObject({ code: -32602 });
      await ask(first.nextCursor);
      expect(out.at(-1)!.result.tools.map((t: { name: string }) => t.name)).toEqual(EXPECTED.slice(LIST_PAGE_SIZE, 2 * LIST_PAGE_SIZE));
    } finally {
      await client.close();
    }
  });
});

describe('a cursor outlives no publish', () => {
  it('refuses a cursor of the list before a new bundle in both eras; listing again from the start gives the new list', async () => {
    const legacyOne = await legacy();
    const modernOne = await modern();
    try {
      const before = (await legacyOne.listTools()).nextCursor!;
      const shorter: UpstreamFixtureState = { tools: upstreamState.tools.slice(1) };
      hold(mcpBundle('pages', 2, 'rec', shorter));
      await expect(legacyOne.listTools({ cursor: before })).rejects.toMatchObject({ code: -32602 });
      await expect(modernOne.listTools({ cursor: before })).rejects.toMatchObject({ code: -32602 });
      const { pages } = await walk((p) => legacyOne.listTools(p));
      expect(pages.flat()).toEqual(EXPECTED.slice(1));
    } finally {
      await legacyOne.close();
      await modernOne.close();
      hold(mcpBundle('pages', 1, 'rec', upstreamState));
    }
  });
});

/** The first page of a 2026-07-28 listing, as the server answers it. */
async function firstPage(): Promise<{ tools: Array<{ name: string }>; nextCursor?: string }> {
  return (await (await post({})).json()).result;
}

/** A raw 2026-07-28 tools/list POST. */
function post(params: Record<string, unknown>): Promise<Response> {
  return postModern(listener.url, KEY, { method: 'tools/list', params: { ...params, _meta: modernMeta() } });
}
