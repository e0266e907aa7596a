import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runChange } from '../../audit/change.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { latestBundleRow, publishBundle } from '../../compiler/publish.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';

const USAGE = 'usage: toolgate keys list | toolgate keys rotate [--reason TEXT] | toolgate keys retire KID [--reissue] [--reason TEXT]';

type Output = { log: (line: string) => void; error: (line: string) => void };

/**
 * `toolgate keys list` prints the signing keys (kid, created, which signs); `toolgate keys rotate`
 * makes a new key the signer while older keys stay in the JWKS. A running server picks the new key
 * up on its next signature, without a restart. Rotation is audited when the database exists.
 */
export async function run(args: string[], out: Output = { log: (l) => console.log(l), error: (l) => console.error(l) }): Promise<number> {
  const [sub, ...rest] = args;
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' }, reissue: { type: 'boolean' } } }));
  } catch (err) {
    out.error(`toolgate keys: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const settings = settingsFromEnv();
  const store = new KeyStore(settings.keysDir);
  if (sub === 'list') {
    for (const k of await store.list()) out.log(`${k.kid}  ${k.createdAt}${k.signing ? '  signing' : ''}`);
    return 0;
  }
  if (sub === 'retire') return retire(positionals, values, settings, store, out);
  if (sub !== 'rotate' || positionals.length) {
    out.error(USAGE);
    return 2;
  }
  const before = (await store.list({ create: false })).find((k) => k.signing)?.kid ?? null;
  const key = await store.rotate();
  out.log(`${key.kid} now signs; ${before ? `${before} stays published` : 'it is the first key'}`);
  if (existsSync(settings.dbFile)) {
    const database = new ToolgateDatabase(settings.dbFile);
    try {
      await database.migrateToLatest();
      await runChange({ database, metrics: createMetrics() }, { actor: 'system', requestId: null, reason: values.reason ?? 'toolgate keys rotate' }, (ch) =>
        ch.record({ action: 'rotate', entityType: 'key', entityId: key.kid, tenant: null, before: before ? { signing: before } : null, after: { signing: key.kid } }),
      );
    } finally {
      await database.close();
    }
  }
  return 0;
}

/**
 * `toolgate keys retire KID`: refuses while any tenant's latest bundle is signed by KID (runtimes
 * would refuse their only bundle); with `--reissue` those bundles are first re-signed, content
 * unchanged, by the current key. Audited.
 */
async function retire(
  positionals: string[],
  values: { reason?: string; reissue?: boolean },
  settings: ReturnType<typeof settingsFromEnv>,
  store: KeyStore,
  out: Output,
): Promise<number> {
  const [kid, ...extra] = positionals;
  if (!kid || extra.length) {
    out.error(USAGE);
    return 2;
  }
  const keys = await store.list({ create: false });
  const key = keys.find((k) => k.kid === kid);
  if (!key) {
    out.error(`toolgate keys retire: no key ${kid} (see toolgate keys list)`);
    return 1;
  }
  if (key.signing) {
    out.error(`toolgate keys retire: ${kid} signs now; run toolgate keys rotate first`);
    return 1;
  }
  const database = new ToolgateDatabase(settings.dbFile);
  const deps = { database, metrics: createMetrics() };
  const reason = values.reason ?? 'toolgate keys retire';
  try {
    await database.migrateToLatest();
    const tenants = (await database.db.selectFrom('tenants').select('id').orderBy('id').execute()).map((t) => t.id);
    const affected: string[] = [];
    for (const t of tenants) if ((await latestBundleRow(database.db, t))?.kid === kid) affected.push(t);
    if (affected.length && !values.reissue) {
      out.error(`toolgate keys retire: the latest bundle of ${affected.join(', ')} is signed by ${kid}; runtimes would refuse it. Add --reissue to re-sign those bundles with the current key first.`);
      return 1;
    }
    for (const t of affected) {
      const r = await publishBundle(deps, { actor: 'system', requestId: null, reason: `re-signed before retiring key ${kid}` }, t, { reissue: true }, store);
      out.log(`${t}: re-issued as version ${r.version}`);
    }
    await store.retire(kid);
    await runChange(deps, { actor: 'system', requestId: null, reason }, (ch) =>
      ch.record({ action: 'retire', entityType: 'key', entityId: kid, tenant: null, before: { kid, createdAt: key.createdAt }, after: null }),
    );
    out.log(`${kid} retired: it is no longer in the JWKS`);
    return 0;
  } finally {
    await database.close();
  }
}
