import { Hono } from 'hono';
import type { AppEnv } from '../context.ts';
import { sharedKeyStore } from '../signing/key-store.ts';

/**
 * `GET /.well-known/jwks.json`: every bundle-signing public key, the current signer and older
 * ones alike. Public, and re-read from the keys directory when it changes (rotation needs no restart).
 */
export const jwksRoutes = new Hono<AppEnv>();

jwksRoutes.get('/jwks.json', async (c) => {
  const jwks = await sharedKeyStore(c.get('deps').config.keysDir).jwks();
  return c.json(jwks, 200, { 'Cache-Control': 'public, max-age=60' });
});
