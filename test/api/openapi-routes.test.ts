import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../server/api/openapi.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ seed: false });
});
afterAll(async () => {
  await t?.close();
});

// Parameter names and Hono's inline patterns (`:version{[0-9]+}`) do not change which requests a
// route answers, so both sides are compared with every parameter written `{}`.
const shape = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:\w+(\{[^}]*\})?/g, '{}').replace(/\{\w+\}/g, '{}')}`;

/** Every method and path the mounted app answers with a handler (not middleware, not the console's fallback). */
function mountedRoutes(): Set<string> {
  return new Set(t.app.routes.filter((r) => r.method !== 'ALL' && !r.path.includes('*') && r.path !== '/').map((r) => shape(r.method, r.path)));
}

function documentedRoutes(): Set<string> {
  const paths = buildOpenApi().paths as Record<string, Record<string, unknown>>;
  return new Set(Object.entries(paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => shape(method, path))));
}

describe('the OpenAPI document and the mounted routes', () => {
  it('documents every mounted route', () => {
    const documented = documentedRoutes();
    expect([...mountedRoutes()].filter((r) => !documented.has(r))).toEqual([]);
  });

  it('documents no route the app does not mount', () => {
    const mounted = mountedRoutes();
    expect([...documentedRoutes()].filter((r) => !mounted.has(r))).toEqual([]);
  });

  it('declares what a conditional pull of the latest bundle sends (If-None-Match, Toolgate-Version, wait) and its 304', () => {
    const op = (buildOpenApi().paths as Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }>>)[
      '/v1/tenants/{tenant}/bundles/latest'
    ].get;
    expect((op.parameters ?? []).map((p) => `${p.in} ${p.name}`)).toEqual(
      expect.arrayContaining(['path tenant', 'header If-None-Match', 'header Toolgate-Version', 'query wait']),
    );
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '304']));
  });

  it('declares If-Match, with its 412 and 428, on the changes that need it and on no read', async () => {
    const paths = buildOpenApi().paths as Record<
      string,
      Record<string, { parameters?: { name: string; in: string; required?: boolean }[]; responses: Record<string, unknown> }>
    >;
    const declares = (path: string, method: string) => {
      const op = paths[path][method];
      const header = (op.parameters ?? []).find((p) => p.in === 'header' && p.name === 'If-Match');
      return header?.required === true && '412' in op.responses && '428' in op.responses;
    };
    for (const [path, method] of [
      ['/v1/groups/{name}', 'put'],
      ['/v1/groups/{name}', 'patch'],
      ['/v1/groups/{name}', 'delete'],
      ['/v1/tools/{id}/approve', 'post'],
      ['/v1/tokens/{id}', 'delete'],
      ['/v1/keys/rotate', 'post'],
      ['/v1/tenants/{tenant}/policy', 'put'],
    ]) {
      expect(declares(path, method), `${method} ${path}`).toBe(true);
    }
    for (const [path, method] of [
      ['/v1/groups/{name}', 'get'],
      ['/v1/groups', 'post'],
      ['/v1/tools', 'get'],
    ]) {
      expect(declares(path, method), `${method} ${path}`).toBe(false);
    }
    // And the server asks for it where the document says so.
    const created = await t.request('POST', '/v1/groups', { body: { name: 'openapi-check', description: 'x', includes: [] } });
    expect(created.status).toBe(201);
    const unnamed = await t.request('PUT', '/v1/groups/openapi-check', { body: { name: 'openapi-check', description: 'y', includes: [] } });
    expect(unnamed.status).toBe(428);
  });
});
