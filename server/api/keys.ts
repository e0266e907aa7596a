import { Hono } from 'hono';
import type { Context } from 'hono';
import type { KeyAction, KeyOverview } from '../../policy-schemas/types.gen.ts';
import { actorOf, authorize, reachesTenant } from '../auth/guard.ts';
import type { ChangeMeta } from '../audit/change.ts';
import { type Actor, type AppDeps, type AppEnv, actorName } from '../context.ts';
import { ApiError } from '../errors.ts';
import { readOptionalJson, takeReason, validOrThrow } from '../http/body.ts';
import { type ExpectedVersion, changedMeanwhile, etagOf, requiredIfMatch, versionMismatch } from '../http/versioning.ts';
import { promoteSigningKey, retireSigningKey, rotateSigningKey, tenantsSignedBy } from '../signing/key-changes.ts';
import { KeySetVersionMismatchError } from '../signing/key-store.ts';

/**
 * `/v1/keys`: the signing keys and the key set, for the console's Keys page. Every signed-in role
 * but runtime reads; admins rotate (add a `next` key), promote and retire, each audited. A server
 * whose root key is kept elsewhere answers 409 to changes, naming the CLI to use instead.
 *
 * The key set is versioned like every entity: `GET` answers its version as the ETag, and each
 * change needs `If-Match` with it (428 without, 412 with the current overview when another change
 * came first). The store compares it under its lock, so of two changes based on the same key set
 * exactly one is made.
 */
export const keyRoutes = new Hono<AppEnv>();

keyRoutes.get('/', async (c) => {
  authorize(c, 'key', 'read');
  const overview = await keyOverview(c.get('deps'), actorOf(c));
  c.header('ETag', etagOf(overview.keySet.version));
  return c.json<KeyOverview>(overview);
});

keyRoutes.post('/rotate', async (c) => {
  authorize(c, 'key', 'write');
  const expected = requiredIfMatch(c);
  const { meta, body } = await action(c);
  const r = await ifKeySetIs(c, expected, (ifKeySetVersion) =>
    rotateSigningKey(c.get('deps'), meta, keyStore(c), { promoteAfterSeconds: body.promoteAfterSeconds, ifKeySetVersion }),
  );
  c.header('ETag', etagOf(r.keySetVersion));
  return c.json(r, 201);
});

keyRoutes.post('/:kid/promote', async (c) => {
  authorize(c, 'key', 'write');
  const expected = requiredIfMatch(c);
  const { meta } = await action(c);
  const r = await ifKeySetIs(c, expected, (ifKeySetVersion) => promoteSigningKey(c.get('deps'), meta, keyStore(c), c.req.param('kid'), { ifKeySetVersion }));
  c.header('ETag', etagOf(r.keySetVersion));
  return c.json(r);
});

keyRoutes.post('/:kid/retire', async (c) => {
  authorize(c, 'key', 'write');
  const expected = requiredIfMatch(c);
  const { meta, body } = await action(c);
  const r = await ifKeySetIs(c, expected, (ifKeySetVersion) =>
    retireSigningKey(c.get('deps'), meta, keyStore(c), c.req.param('kid'), { reissue: body.reissue, ifKeySetVersion }),
  );
  c.header('ETag', etagOf(r.keySetVersion));
  return c.json(r);
});

const keyStore = (c: Context<AppEnv>) => c.get('deps').keys;

/**
 * What `GET /v1/keys` answers, and what a 412 carries as `current`. `latestBundleOf` names only
 * tenants the reader reaches: a token scoped to some tenants learns nothing of the others, not even
 * their ids (as `/v1/tenants/<other>` answers 404).
 */
async function keyOverview(deps: AppDeps, reader: Actor): Promise<KeyOverview> {
  const store = deps.keys;
  const { keySet } = await store.keySet();
  const root = await store.rootInfo();
  const keys: KeyOverview['keys'] = [];
  for (const k of await store.list()) {
    const tenants = await tenantsSignedBy(deps, k.kid);
    keys.push({ ...k, latestBundleOf: tenants.filter((t) => reachesTenant(reader, t)) });
  }
  return {
    keys,
    keySet: { version: keySet.version, issuedAt: keySet.issuedAt, expiresAt: keySet.expiresAt },
    roots: root.roots,
    rootOnServer: root.canSign,
  };
}

/** Runs a key change that the store makes only while the key set is still at the version the If-Match names. */
async function ifKeySetIs<T>(c: Context<AppEnv>, expected: ExpectedVersion, change: (ifKeySetVersion: number) => Promise<T>): Promise<T> {
  if (typeof expected !== 'number') throw await staleKeySet(c, expected);
  try {
    return await change(expected);
  } catch (err) {
    if (err instanceof KeySetVersionMismatchError) throw await staleKeySet(c, expected);
    throw err;
  }
}

/** The 412 for an If-Match that does not name the current key set, carrying the overview as it is now. */
async function staleKeySet(c: Context<AppEnv>, expected: ExpectedVersion): Promise<ApiError> {
  const current = await keyOverview(c.get('deps'), actorOf(c));
  // The fallback only if the key set went back to the version named, which versions never do.
  return versionMismatch(expected, current.keySet.version, current, 'key set') ?? changedMeanwhile('the key set', current);
}

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
