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
});
