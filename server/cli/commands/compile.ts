import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compileBundle } from '../../compiler/compile-bundle.ts';
import { latestBundleRow } from '../../store/bundles.ts';
import { runChange } from '../../audit/change.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { signBundle } from '../../signing/sign.ts';
import { settingsFromEnv } from '../../startup.ts';
import { loadDraftSnapshot } from '../../store/snapshot.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate compile --tenant T --out DIR [--sign [--reason TEXT]]';

/**
 * `toolgate compile --tenant T --out DIR [--sign]`: compiles the tenant's current draft from
 * TOOLGATE_DB as the next version into DIR/bundle.json. Publishes nothing. Only with `--sign` is
 * DIR/bundle.jws written, signed with the production key of TOOLGATE_KEYS_DIR (a bundle every
 * runtime would trust), and that signing is recorded in the audit log (action `sign`). Exit 1
 * listing every compile error.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { tenant: { type: 'string' }, out: { type: 'string' }, sign: { type: 'boolean' }, reason: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate compile: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.tenant || !values.out || (values.reason !== undefined && !values.sign)) {
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
    const dir = resolve(values.out);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'bundle.json'), r.bytes);
    const described = `${join(dir, 'bundle.json')} (${r.bytes.length} bytes, version ${r.bundle.version}, ${r.revision})`;
    if (!values.sign) {
      out.log(`wrote ${described}, unsigned (add --sign to sign it with the production key, audited)`);
      return 0;
    }
    const key = await new KeyStore(settings.keysDir).signer();
    const jws = await signBundle(r.bytes, key);
    // Recorded before the signature leaves this process: a signed bundle nobody can account for is
    // as good as a published one.
    // A command on its own: no server's cluster events to tell (the next checkpoint counts the event anyway).
    await runChange(
      { database, metrics: createMetrics(), cluster: null },
      { actor: 'system', requestId: null, reason: values.reason ?? 'toolgate compile --sign' },
      (ch) =>
        ch.record({
          action: 'sign',
          entityType: 'bundle',
          entityId: String(r.bundle.version),
          tenant: values.tenant,
          before: null,
          after: { version: r.bundle.version, revision: r.revision, kid: key.kid, via: 'toolgate compile --sign' },
        }),
    );
    writeFileSync(join(dir, 'bundle.jws'), `${jws}\n`);
    out.log(`wrote ${described} and bundle.jws (kid ${key.kid}); the signing is in the audit log`);
    return 0;
  } finally {
    await database.close();
  }
}
