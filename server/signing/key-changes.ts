import { runChange } from '../audit/change.ts';
import type { Change, ChangeMeta } from '../audit/change.ts';
import { publishBundle } from '../compiler/publish.ts';
import { latestBundleRow } from '../store/bundles.ts';
import type { AppDeps } from '../context.ts';
import { ApiError } from '../errors.ts';
import { RootKeyUnavailableError } from './key-store.ts';
import type { KeySetCondition, KeyStore } from './key-store.ts';

/** Without a database (keys managed before the first `serve`) there is no audit log to write to. */
type Deps = Pick<AppDeps, 'metrics' | 'cluster'> & { database?: AppDeps['database']; compiler?: AppDeps['compiler'] };
type NewKeyEvent = Parameters<Change['record']>[0];

async function audit(deps: Deps, meta: ChangeMeta, event: NewKeyEvent): Promise<void> {
  const { database } = deps;
  if (database) await runChange({ database, metrics: deps.metrics, cluster: deps.cluster }, meta, (ch) => ch.record(event));
}

/** What a re-issue publishes with: a server's compiler too, so a large catalog's summary runs in its worker. */
function needDatabase(deps: Deps): Pick<AppDeps, 'database' | 'metrics' | 'cluster'> & Partial<Pick<AppDeps, 'compiler'>> {
  if (!deps.database) throw new Error('this needs the database (TOOLGATE_DB)');
  return { database: deps.database, metrics: deps.metrics, cluster: deps.cluster, compiler: deps.compiler };
}

// Every change of the key set, from the CLI, the console or the scheduler, goes through here so
// that each is refused for the same reasons and audited the same way. The key files change first,
// then the audit event is written: the files are the truth a runtime sees through the key set.
// `ifKeySetVersion` (the API's If-Match) is checked by the store under its lock, so of two changes
// based on the same key set only the first passes; the other throws KeySetVersionMismatchError.

/** Adds a `next` key, published in a new key-set version before it ever signs. */
export async function rotateSigningKey(deps: Deps, meta: ChangeMeta, store: KeyStore, opts: { promoteAfterSeconds?: number } & KeySetCondition = {}) {
  const promoteAt = opts.promoteAfterSeconds === undefined ? undefined : new Date(Date.now() + opts.promoteAfterSeconds * 1000);
  const key = await guard(() => store.rotate({ promoteAt, ifKeySetVersion: opts.ifKeySetVersion }));
  const { keySetVersion } = key;
  await audit(deps, meta, {
    action: 'rotate',
    entityType: 'key',
    entityId: key.kid,
    tenant: null,
    before: null,
    after: { kid: key.kid, status: 'next', keySetVersion, ...(promoteAt ? { promoteAt: promoteAt.toISOString() } : {}) },
  });
  return { kid: key.kid, keySetVersion, promoteAt: promoteAt?.toISOString() ?? null };
}

/** Makes a `next` key the signer; the previous signer stays `active` until retired. */
export async function promoteSigningKey(deps: Deps, meta: ChangeMeta, store: KeyStore, kid?: string, opts: KeySetCondition = {}) {
  const { key, previous, keySetVersion } = await guard(() => store.promote(kid, opts));
  await audit(deps, meta, {
    action: 'promote',
    entityType: 'key',
    entityId: key.kid,
    tenant: null,
    before: { kid: key.kid, status: 'next', signing: previous },
    after: { kid: key.kid, status: 'active', signing: key.kid, keySetVersion },
  });
  return { kid: key.kid, previous, keySetVersion };
}

/** The tenants whose latest bundle `kid` signed: while there are any, retiring it would strand their runtimes. */
export async function tenantsSignedBy(deps: Deps, kid: string): Promise<string[]> {
  if (!deps.database) return [];
  const tenants = (await deps.database.db.selectFrom('tenants').select('id').orderBy('id').execute()).map((t) => t.id);
  const out: string[] = [];
  for (const t of tenants) if ((await latestBundleRow(deps.database.db, t))?.kid === kid) out.push(t);
  return out;
}

/**
 * Retires a key once no tenant's latest bundle is signed by it; with `reissue`, those bundles are
 * first re-signed, content unchanged, by the current signer. The checks and the re-signing run
 * under the store's lock, so a change that loses the race (or is refused) re-signs nothing.
 */
export async function retireSigningKey(deps: Deps, meta: ChangeMeta, store: KeyStore, kid: string, opts: { reissue?: boolean } & KeySetCondition = {}) {
  // Read without creating keys: retiring in an empty directory must not make the first key.
  if (!(await store.list({ create: false })).some((k) => k.kid === kid)) throw new ApiError(404, 'not_found', `no key ${kid} (see toolgate keys list)`);
  const reissued: { tenant: string; version: number }[] = [];
  const { key, keySetVersion } = await guard(() =>
    store.retire(kid, {
      ifKeySetVersion: opts.ifKeySetVersion,
      beforeRetiring: async () => {
        const db = needDatabase(deps);
        const affected = await tenantsSignedBy(deps, kid);
        if (affected.length && !opts.reissue) {
          throw new ApiError(
            409,
            'conflict',
            `the latest bundle of ${affected.join(', ')} is signed by ${kid}; runtimes would refuse it. Publish those tenants again, or retire with reissue (--reissue) to re-sign them with the current key first.`,
            { extra: { tenants: affected } },
          );
        }
        for (const t of affected) {
          const r = await publishBundle(
            db,
            { actor: meta.actor, requestId: meta.requestId, reason: `re-signed before retiring key ${kid}` },
            t,
            { reissue: true },
            store,
          );
          reissued.push({ tenant: t, version: r.version });
        }
      },
    }),
  );
  await audit(deps, meta, {
    action: 'retire',
    entityType: 'key',
    entityId: kid,
    tenant: null,
    before: { kid, status: key.status, createdAt: key.createdAt },
    after: { kid, status: 'retired', keySetVersion },
  });
  return { kid, reissued, keySetVersion };
}

/** Replaces the root key: the current root signs a key set naming only the new one. */
export async function rotateRootKey(deps: Deps, meta: ChangeMeta, store: KeyStore, opts: { newRootFile?: string } = {}) {
  const r = await guard(() => store.rotateRoot(opts));
  await audit(deps, meta, {
    action: 'rotate',
    entityType: 'keyset',
    entityId: String(r.keySetVersion),
    tenant: null,
    before: { root: r.previous },
    after: { root: r.root, keySetVersion: r.keySetVersion },
  });
  return r;
}

/** Signs the key set again, unchanged, as a new version with a later expiry. */
export async function reissueKeySet(deps: Deps, meta: ChangeMeta, store: KeyStore) {
  const before = (await store.keySet()).keySet;
  const signed = await guard(() => store.reissueKeySet());
  await audit(deps, meta, {
    action: 'publish',
    entityType: 'keyset',
    entityId: String(signed.keySet.version),
    tenant: null,
    before: { version: before.version, expiresAt: before.expiresAt },
    after: { version: signed.keySet.version, expiresAt: signed.keySet.expiresAt },
  });
  return signed.keySet;
}

/**
 * The scheduler's share: promotes keys whose `--promote-after` time has come and re-issues the
 * key set before it expires, audited as `system`. Without the root key on this server it only
 * reports that it could not.
 */
export async function maintainKeys(deps: Pick<AppDeps, 'database' | 'metrics' | 'logger' | 'cluster' | 'compiler'>, store: KeyStore): Promise<void> {
  const meta: ChangeMeta = { actor: 'system', requestId: null, reason: null };
  const due = (await store.list()).filter((k) => k.status === 'next' && k.promoteAt && Date.parse(k.promoteAt) <= Date.now());
  const root = await store.rootInfo();
  if (!root.canSign) {
    const ks = (await store.keySet()).keySet;
    const issued = Date.parse(ks.issuedAt);
    const expires = Date.parse(ks.expiresAt);
    if (due.length || Date.now() >= issued + (expires - issued) / 2) {
      deps.logger.warn(
        { keySetVersion: ks.version, expiresAt: ks.expiresAt, due: due.map((k) => k.kid) },
        'the key set needs the root key, which is not on this server: run toolgate keys reissue/promote --root-key FILE',
      );
    }
    return;
  }
  for (const k of due) {
    const r = await promoteSigningKey(deps, { ...meta, reason: `scheduled promotion (rotate --promote-after, due ${k.promoteAt})` }, store, k.kid);
    deps.logger.info({ kid: r.kid, keySetVersion: r.keySetVersion }, 'promoted the next signing key on schedule');
  }
  const ks = (await store.keySet()).keySet;
  const issued = Date.parse(ks.issuedAt);
  const expires = Date.parse(ks.expiresAt);
  if (due.length === 0 && Date.now() >= issued + (expires - issued) / 2) {
    const next = await reissueKeySet(deps, { ...meta, reason: 're-issued before expiry; keys unchanged' }, store);
    deps.logger.info({ keySetVersion: next.version, expiresAt: next.expiresAt }, 're-issued the key set before expiry');
  }
}

/** Store errors as API errors: a missing root or a refused change is a 409, an unknown key a 404. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const message = (err as Error).message;
    if (err instanceof RootKeyUnavailableError) throw new ApiError(409, 'conflict', message);
    if (/^no key /.test(message)) throw new ApiError(404, 'not_found', message);
    if (/not next|already retired|signs now|no next key|exists/.test(message)) throw new ApiError(409, 'conflict', message);
    throw err;
  }
}
