import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compileBundle } from '../../compiler/compile-bundle.ts';
import { latestBundleRow } from '../../compiler/publish.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { sharedKeyStore } from '../../signing/key-store.ts';
import { signBundle } from '../../signing/sign.ts';
import { settingsFromEnv } from '../../startup.ts';
import { loadDraftSnapshot } from '../../store/snapshot.ts';

const USAGE = 'usage: toolgate compile --tenant T --out DIR';

type Output = { log: (line: string) => void; error: (line: string) => void };

/**
 * `toolgate compile --tenant T --out DIR`: compiles the tenant's current draft from TOOLGATE_DB as
 * the next version and writes DIR/bundle.json (exact signed bytes) and DIR/bundle.jws, signed with
 * the current key of TOOLGATE_KEYS_DIR. Publishes nothing. Exit 1 listing every compile error.
 */
export async function run(args: string[], out: Output = { log: (l) => console.log(l), error: (l) => console.error(l) }): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { tenant: { type: 'string' }, out: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate compile: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.tenant || !values.out) {
    out.error(USAGE);
    return 2;
  }
  const settings = settingsFromEnv();
  const database = new ToolgateDatabase(settings.dbFile);
  try {
    await database.migrateToLatest();
    const snapshot = await loadDraftSnapshot(database.db, values.tenant);
    if (!snapshot) {
      out.error(`toolgate compile: tenant ${values.tenant} does not exist`);
      return 1;
    }
    const latest = await latestBundleRow(database.db, values.tenant);
    const r = compileBundle(snapshot, { version: (latest?.version ?? 0) + 1, previousRevision: latest?.revision ?? null, issuedAt: new Date().toISOString() });
    if (!r.ok) {
      out.error(`toolgate compile: the draft of ${values.tenant} does not compile (${r.errors.length} error${r.errors.length === 1 ? '' : 's'}):`);
      for (const e of r.errors) out.error(`  ${e.pointer}: ${e.message} [${e.code}]`);
      return 1;
    }
    const key = await sharedKeyStore(settings.keysDir).signer();
    const jws = await signBundle(r.bytes, key);
    const dir = resolve(values.out);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'bundle.json'), r.bytes);
    writeFileSync(join(dir, 'bundle.jws'), jws + '\n');
    out.log(`wrote ${join(dir, 'bundle.json')} (${r.bytes.length} bytes, version ${r.bundle.version}, ${r.revision}) and bundle.jws (kid ${key.kid})`);
    return 0;
  } finally {
    await database.close();
  }
}
