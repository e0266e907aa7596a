import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { ChangeMeta } from '../../audit/change.ts';
import { type Cluster, startCluster } from '../../cluster/cluster.ts';
import { ClusterEvents } from '../../cluster/cluster-events.ts';
import { ToolgateDatabase, isPostgresUrl } from '../../db/database.ts';
import { ApiError } from '../../errors.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { promoteSigningKey, reissueKeySet, retireSigningKey, rotateRootKey, rotateSigningKey, tenantsSignedBy } from '../../signing/key-changes.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = [
  'usage: toolgate keys list',
  '       toolgate keys rotate [--promote-after DURATION]     add a next key (published before it signs)',
  '       toolgate keys promote [KID]                         make the next key the signer',
  "       toolgate keys retire KID [--reissue]                retire a key no tenant's latest bundle uses",
  '       toolgate keys rotate-root [--new-root-key FILE]     the current root announces a new root',
  '       toolgate keys reissue                               sign the key set again with a later expiry',
  '       toolgate keys root                                  print the root public keys (what runtimes are configured with)',
  'options: --root-key FILE (the root private key, when it is kept off the server), --reason TEXT',
].join('\n');

/**
 * `toolgate keys …`: staged rotation of the bundle-signing keys and the root-signed key set. A
 * running server picks every change up without a restart. Changes are audited.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  const [sub, ...rest] = args;
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        reason: { type: 'string' },
        reissue: { type: 'boolean' },
        'root-key': { type: 'string' },
        'promote-after': { type: 'string' },
        'new-root-key': { type: 'string' },
      },
    }));
  } catch (err) {
    out.error(`toolgate keys: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const settings = settingsFromEnv();
  const rootKeyFile = values['root-key'];
  if (rootKeyFile && !existsSync(rootKeyFile)) {
    out.error(`toolgate keys: no root key file ${rootKeyFile}`);
    return 1;
  }
  const store = new KeyStore(settings.keysDir, { rootKeyFile });
  const expect = (n: number) => {
    if (positionals.length > n) throw new UsageError();
  };

  const database = isPostgresUrl(settings.dbFile) || existsSync(settings.dbFile) || sub === 'retire' ? new ToolgateDatabase(settings.dbFile) : undefined;
  let cluster: Cluster | undefined;
  try {
    if (database) await database.migrateToLatest();
    // This command's events: nobody in this process hears them; on PostgreSQL they reach the replicas (below).
    const deps = { database, metrics: createMetrics(), cluster: new ClusterEvents() };
    // On PostgreSQL: change the shared keys directory under the replicas' lock, and tell them.
    if (database?.engine === 'postgres') cluster = await startCluster({ ...deps, database, logger: pino({ level: 'silent' }) }, store, { lead: false });
    const meta = (fallback: string): ChangeMeta => ({ actor: 'system', requestId: null, reason: values.reason ?? fallback });
    switch (sub) {
      case 'list': {
        expect(0);
        const ks = (await store.keySet()).keySet;
        const root = await store.rootInfo();
        for (const k of await store.list()) {
          const uses = database ? await tenantsSignedBy(deps, k.kid) : [];
          const notes = [
            k.signing ? 'signing' : '',
            k.promoteAt ? `promotes at ${k.promoteAt}` : '',
            uses.length ? `latest bundle of ${uses.join(', ')}` : '',
          ].filter(Boolean);
          out.log(`${k.kid}  ${k.status.padEnd(7)}  ${k.createdAt}${notes.length ? `  ${notes.join('; ')}` : ''}`);
        }
        out.log(
          `key set v${ks.version}, expires ${ks.expiresAt}; root ${root.roots.map((r) => `${r.kid}${r.available ? '' : ' (not on this machine)'}`).join(', ')}`,
        );
        return 0;
      }
      case 'root': {
        expect(0);
        out.log(JSON.stringify({ keys: (await store.keySet()).keySet.roots }, null, 2));
        return 0;
      }
      case 'rotate': {
        expect(0);
        let promoteAfterSeconds: number | undefined;
        if (values['promote-after'] !== undefined) {
          promoteAfterSeconds = parseDuration(values['promote-after']);
          if (promoteAfterSeconds === undefined) {
            out.error('toolgate keys rotate: --promote-after takes a duration such as 90s, 10m, 24h or 7d');
            return 2;
          }
          if (!(await store.rootInfo()).canSign && !rootKeyFile) {
            out.error('toolgate keys rotate: --promote-after needs the root key on the server (the scheduled promotion re-signs the key set there)');
            return 1;
          }
        }
        const r = await rotateSigningKey(deps, meta('toolgate keys rotate'), store, { promoteAfterSeconds });
        out.log(
          `${r.kid} added as next in key set v${r.keySetVersion}; ${r.promoteAt ? `it signs from ${r.promoteAt}` : 'run toolgate keys promote once runtimes have the key set'}`,
        );
        return 0;
      }
      case 'promote': {
        expect(1);
        const r = await promoteSigningKey(deps, meta('toolgate keys promote'), store, positionals[0]);
        out.log(`${r.kid} now signs (key set v${r.keySetVersion})${r.previous ? `; ${r.previous} stays active until retired` : ''}`);
        return 0;
      }
      case 'retire': {
        if (positionals.length !== 1) throw new UsageError();
        const r = await retireSigningKey(deps, meta('toolgate keys retire'), store, positionals[0], { reissue: values.reissue });
        for (const x of r.reissued) out.log(`${x.tenant}: re-issued as version ${x.version}`);
        out.log(`${r.kid} retired (key set v${r.keySetVersion}): runtimes refuse what it signed`);
        return 0;
      }
      case 'rotate-root': {
        expect(0);
        const r = await rotateRootKey(deps, meta('toolgate keys rotate-root'), store, { newRootFile: values['new-root-key'] });
        out.log(`root ${r.root} announced by ${r.previous} in key set v${r.keySetVersion}; runtimes that follow the key set trust it from now on`);
        return 0;
      }
      case 'reissue': {
        expect(0);
        const ks = await reissueKeySet(deps, meta('toolgate keys reissue'), store);
        out.log(`key set v${ks.version} signed, expires ${ks.expiresAt}`);
        return 0;
      }
      default:
        throw new UsageError();
    }
  } catch (err) {
    if (err instanceof UsageError) {
      out.error(USAGE);
      return 2;
    }
    if (err instanceof ApiError || err instanceof Error) {
      out.error(`toolgate keys ${sub}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await cluster?.close();
    await database?.close();
  }
}

class UsageError extends Error {}

/** `90`, `90s`, `10m`, `24h`, `7d` → seconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  const seconds = Number(m[1]) * unit;
  return seconds <= 365 * 86400 ? seconds : undefined;
}
