import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runChange } from '../../audit/change.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';

const USAGE = 'usage: toolgate keys list | toolgate keys rotate [--reason TEXT]';

type Output = { log: (line: string) => void; error: (line: string) => void };

/**
 * `toolgate keys list` prints the signing keys (kid, created, which signs); `toolgate keys rotate`
 * makes a new key the signer while older keys stay in the JWKS. A running server picks the new key
 * up on its next signature, without a restart. Rotation is audited when the database exists.
 */
export async function run(args: string[], out: Output = { log: (l) => console.log(l), error: (l) => console.error(l) }): Promise<number> {
  const [sub, ...rest] = args;
  let values;
  try {
    ({ values } = parseArgs({ args: rest, options: { reason: { type: 'string' } } }));
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
  if (sub !== 'rotate') {
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
