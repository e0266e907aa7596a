import { Hono } from 'hono';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';

/**
 * `GET /.well-known/jwks.json`: the bundle-signing public keys with status next or active.
 * `GET /.well-known/toolgate-keyset.json`: the root-signed key set, its exact RFC 8785 bytes with the
 * detached JWS in `Toolgate-Signature`; `?version=N` answers an earlier version, so a runtime that
 * missed a root rotation can walk the chain of key sets from the root it trusts. Both public, and
 * re-read from the keys directory when it changes (rotation needs no restart).
 */
export const jwksRoutes = new Hono<AppEnv>();

jwksRoutes.get('/jwks.json', async (c) => {
  const jwks = await c.get('deps').keys.jwks();
  return c.json(jwks, 200, { 'Cache-Control': 'public, max-age=60' });
});

jwksRoutes.get('/toolgate-keyset.json', async (c) => {
  const store = c.get('deps').keys;
  const asked = c.req.query('version');
  let signed = await store.keySet();
  if (asked !== undefined) {
    const version = Number(asked);
    if (!/^[1-9][0-9]{0,8}$/.test(asked)) {
      throw new ApiError(400, 'validation', 'version must be a key-set version (a whole number from 1)', {
        errors: [{ pointer: '/version', message: 'must be a whole number from 1' }],
      });
    }
    const old = await store.keySetVersion(version);
    if (!old) throw new ApiError(404, 'not_found', `no key-set version ${version}; the latest is ${signed.keySet.version}`);
    signed = old;
  }
  const etag = `"keyset-v${signed.keySet.version}"`;
  const headers = {
    'Content-Type': 'application/json',
    'Toolgate-Signature': signed.signature,
    'Toolgate-Version': String(signed.keySet.version),
    ETag: etag,
    // Short for the latest (it changes on rotation), long for a fixed older version.
    'Cache-Control': asked === undefined ? 'public, max-age=60' : 'public, max-age=86400, immutable',
  };
  if (c.req.header('if-none-match') === etag) return c.body(null, 304, headers);
  return c.body(new Uint8Array(signed.bytes), 200, headers);
});
