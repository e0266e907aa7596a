import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ToolgateDatabase } from '../../db/database.ts';
import { StaticMirror } from '../../distribution/static-mirror.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate mirror --dir DIR   (reads TOOLGATE_DB and TOOLGATE_KEYS_DIR)';

/** `toolgate mirror --dir D`: writes the static mirror (key set and every tenant's latest bundle) once. */
export async function run(args: string[], out: Output = consoleOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { dir: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate mirror: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.dir) {
    out.error(USAGE);
    return 2;
  }
  const settings = settingsFromEnv(env);
  const database = new ToolgateDatabase(settings.dbFile);
  try {
    await database.migrateToLatest();
    const dir = resolve(values.dir);
    const written = await new StaticMirror(dir, database.db, new KeyStore(settings.keysDir)).writeAll();
    out.log(`wrote key set v${written.keySetVersion} and the latest bundle of ${written.tenants} tenant(s) to ${dir}`);
    return 0;
  } catch (err) {
    out.error(`toolgate mirror: ${(err as Error).message}`);
    return 1;
  } finally {
    await database.close();
  }
}
