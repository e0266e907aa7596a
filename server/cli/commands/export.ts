import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { ServerRefusal, clientOptionsFromEnv, createApiClient } from '../../config-as-code/api-client.ts';
import { fileBytes, parsePath } from '../../config-as-code/layout.ts';
import { MANAGED_DIRS, layoutFiles } from '../../config-as-code/read-dir.ts';
import { readServer } from '../../config-as-code/read-server.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate export --dir DIR   (with TOOLGATE_URL and TOOLGATE_TOKEN set)';

type Deps = { env?: NodeJS.ProcessEnv; fetch?: typeof fetch };

/**
 * `toolgate export --dir D`: writes the server's configuration into D, one deterministic file per
 * entity (see config-as-code/layout.ts), and removes layout files of entities that no longer
 * exist, so D can be committed as is. Other files in D (README, CI, .git) are left alone.
 */
export async function run(args: string[], out: Output = consoleOutput, deps: Deps = {}): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { dir: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate export: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.dir) {
    out.error(USAGE);
    return 2;
  }
  const options = clientOptionsFromEnv(deps.env ?? process.env);
  if (typeof options === 'string') {
    out.error(`toolgate export: ${options}`);
    return 2;
  }
  const api = createApiClient({ ...options, fetch: deps.fetch });
  let entities;
  try {
    entities = await readServer(api);
  } catch (err) {
    out.error(`toolgate export: ${err instanceof ServerRefusal ? `the server refused: ${err.lines().join('\n')}` : (err as Error).message}`);
    return 1;
  }
  const dir = values.dir;
  mkdirSync(dir, { recursive: true });
  let removed = 0;
  for (const path of layoutFiles(dir)) {
    if (parsePath(path) && !entities.has(path)) {
      rmSync(join(dir, path));
      removed++;
    }
  }
  for (const e of entities.values()) {
    mkdirSync(dirname(join(dir, e.path)), { recursive: true });
    writeFileSync(join(dir, e.path), fileBytes(e.doc));
  }
  for (const d of MANAGED_DIRS) removeEmptyDirs(join(dir, d));
  out.log(`exported ${entities.size} files from ${api.url} into ${dir}${removed ? ` (removed ${removed} of entities that no longer exist)` : ''}`);
  return 0;
}

function removeEmptyDirs(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return;
  }
  for (const n of names) removeEmptyDirs(join(dir, n));
  if (readdirSync(dir).length === 0) rmdirSync(dir);
}
