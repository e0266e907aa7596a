import { Hono } from 'hono';
import type { KeyAction, KeyOverview } from '../../policy-schemas/types.gen.ts';
import { authorize } from '../auth/guard.ts';
import type { ChangeMeta } from '../audit/change.ts';
import { type AppEnv, actorName } from '../context.ts';
import type { Context } from 'hono';
import { ApiError } from '../errors.ts';
import { readOptionalJson, takeReason, validOrThrow } from '../http/body.ts';
import { promoteSigningKey, retireSigningKey, rotateSigningKey, tenantsSignedBy } from '../signing/key-changes.ts';
import { sharedKeyStore } from '../signing/key-store.ts';

/**
 * `/v1/keys`: the signing keys and the key set, for the console's Keys page. Every signed-in role
 * but runtime reads; admins rotate (add a `next` key), promote and retire, each audited. A server
 * whose root key is kept elsewhere answers 409 to changes, naming the CLI to use instead.
 */
export const keyRoutes = new Hono<AppEnv>();

keyRoutes.get('/', async (c) => {
  authorize(c, 'key', 'read');
  const deps = c.get('deps');
  const store = sharedKeyStore(deps.config.keysDir);
  const { keySet } = await store.keySet();
  const root = await store.rootInfo();
  const keys: KeyOverview['keys'] = [];
  for (const k of await store.list()) keys.push({ ...k, latestBundleOf: await tenantsSignedBy(deps, k.kid) });
  return c.json<KeyOverview>({
    keys,
    keySet: { version: keySet.version, issuedAt: keySet.issuedAt, expiresAt: keySet.expiresAt },
    roots: root.roots,
    rootOnServer: root.canSign,
  });
});

keyRoutes.post('/rotate', async (c) => {
  authorize(c, 'key', 'write');
  const { meta, body } = await action(c);
  const r = await rotateSigningKey(c.get('deps'), meta, sharedKeyStore(c.get('deps').config.keysDir), { promoteAfterSeconds: body.promoteAfterSeconds });
  return c.json(r, 201);
});

keyRoutes.post('/:kid/promote', async (c) => {
  authorize(c, 'key', 'write');
  const { meta } = await action(c);
  return c.json(await promoteSigningKey(c.get('deps'), meta, sharedKeyStore(c.get('deps').config.keysDir), c.req.param('kid')));
});

keyRoutes.post('/:kid/retire', async (c) => {
  authorize(c, 'key', 'write');
  const { meta, body } = await action(c);
  return c.json(await retireSigningKey(c.get('deps'), meta, sharedKeyStore(c.get('deps').config.keysDir), c.req.param('kid'), { reissue: body.reissue }));
});

/** The body (optional) and the reason every key change needs. */
async function action(c: Context<AppEnv>): Promise<{ meta: ChangeMeta; body: KeyAction }> {
  const raw = await readOptionalJson(c);
  const object = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  const reason = takeReason(c, object);
  const body = validOrThrow<KeyAction>('key-action', raw ?? {});
  if (reason === null) {
    throw new ApiError(400, 'validation', 'A key change needs a reason (body "reason" or the Toolgate-Reason header)', {
      errors: [{ pointer: '/reason', message: 'is required' }],
    });
  }
  return { meta: { actor: actorName(c.get('actor')), requestId: c.get('requestId'), reason }, body };
}
