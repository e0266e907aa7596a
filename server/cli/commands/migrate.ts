import { ToolgateDatabase } from '../../db/database.ts';
import { settingsFromEnv } from '../../startup.ts';

/** `toolgate migrate [--down]`. */
export async function run(args: string[]): Promise<number> {
  const unknown = args.filter((a) => a !== '--down');
  if (unknown.length) {
    console.error(`toolgate migrate: unknown option ${unknown[0]}`);
    return 2;
  }
  const db = new ToolgateDatabase(settingsFromEnv().dbFile);
  try {
    const ran = args.includes('--down') ? await db.migrateDown() : await db.migrateToLatest();
    console.log(ran.length ? `ran ${ran.join(', ')}` : 'already up to date');
    return 0;
  } finally {
    await db.close();
  }
}
