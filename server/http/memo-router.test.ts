import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { MemoRouter } from './memo-router.ts';

describe('MemoRouter', () => {
  // The shape that makes Hono fall back from RegExpRouter to the trie: a fixed segment beside a parameter.
  const app = new Hono({ router: new MemoRouter() });
  app.use('/v1/*', async (c, next) => {
    await next();
    c.header('x-seen', 'v1');
  });
  app.post('/v1/keys/rotate', (c) => c.text('rotate'));
  app.post('/v1/keys/:kid/promote', (c) => c.text(`promote ${c.req.param('kid')}`));
  app.get('/v1/tenants/:tenant/bundles/:version{[0-9]+}', (c) => c.json(c.req.param()));

  it('answers every path as the plain router does, the first time and when it remembers the match', async () => {
    for (let round = 0; round < 2; round++) {
      expect(await (await app.request('/v1/keys/rotate', { method: 'POST' })).text()).toBe('rotate');
      expect(await (await app.request('/v1/keys/k1/promote', { method: 'POST' })).text()).toBe('promote k1');
      expect(await (await app.request('/v1/keys/k2/promote', { method: 'POST' })).text()).toBe('promote k2');
      const pinned = await app.request('/v1/tenants/acme/bundles/7');
      expect(await pinned.json()).toEqual({ tenant: 'acme', version: '7' });
      expect(pinned.headers.get('x-seen')).toBe('v1');
      expect((await app.request('/v1/tenants/acme/bundles/seven')).status).toBe(404);
      expect((await app.request('/v1/keys/rotate')).status).toBe(404);
    }
  });

  it('keeps answering right after it has forgotten (more distinct paths than it keeps)', async () => {
    for (let i = 0; i < 1500; i++) expect((await app.request(`/v1/tenants/t${i}/bundles/${i}`)).status).toBe(200);
    expect(await (await app.request('/v1/tenants/t3/bundles/3')).json()).toEqual({ tenant: 't3', version: '3' });
  });
});
