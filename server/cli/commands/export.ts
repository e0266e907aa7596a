import { lstatSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ServerRefusal, clientOptionsFromEnv, createApiClient } from '../../config-as-code/api-client.ts';
import {
  type ContainmentProblem,
  ContainmentError,
  isContainedPath,
  removeContained,
  removeEmptyFolders,
  resolveDir,
  scanFiles,
  writeContained,
} from '../../config-as-code/contained-files.ts';
import { type Entity, fileBytes, parsePath } from '../../config-as-code/layout.ts';
import { MANAGED_DIRS } from '../../config-as-code/read-dir.ts';
import { readServer } from '../../config-as-code/read-server.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate export --dir DIR   (with TOOLGATE_URL and TOOLGATE_TOKEN set)';

type Deps = { env?: NodeJS.ProcessEnv; fetch?: typeof fetch };

/**
 * `toolgate export --dir D`: writes the server's configuration into D, one deterministic file per
 * entity (see config-as-code/layout.ts), and removes layout files of entities that no longer
 * exist, so D can be committed as is. Other files in D (README, CI, .git) are left alone. It
 * never follows a symbolic link inside D nor writes outside it (config-as-code/contained-files.ts).
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
  const written = writeExport(dir, entities);
  if (!written.ok) {
    out.error(`toolgate export: nothing was written to ${dir}:`);
    for (const p of written.problems) out.error(`  ${p.path}: ${p.message}`);
    return 2;
  }
  out.log(
    `exported ${entities.size} files from ${api.url} into ${dir}${written.removed ? ` (removed ${written.removed} of entities that no longer exist)` : ''}`,
  );
  return 0;
}

/**
 * Makes the layout folders of `dir` hold exactly `entities`. Every path is checked first: a link
 * (or a special file) anywhere in the layout, or an entity whose path would leave the directory,
 * refuses the whole export before anything is written or removed.
 */
function writeExport(dir: string, entities: Map<string, Entity>): { ok: true; removed: number } | { ok: false; problems: ContainmentProblem[] } {
  const lexists = (p: string) => {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  if (!lexists(dir)) mkdirSync(dir, { recursive: true });
  const root = resolveDir(dir);
  if (root === undefined) return { ok: false, problems: [{ path: dir, message: 'is not a directory' }] };
  const scan = scanFiles(root, MANAGED_DIRS);
  const problems = [...scan.problems];
  for (const path of entities.keys()) if (!isContainedPath(path)) problems.push({ path, message: 'is not a path inside the configuration directory' });
  if (problems.length > 0) return { ok: false, problems };
  try {
    let removed = 0;
    for (const path of scan.files) {
      if (parsePath(path) && !entities.has(path)) {
        removeContained(root, path);
        removed++;
      }
    }
    for (const e of entities.values()) writeContained(root, e.path, fileBytes(e.doc));
    for (const d of MANAGED_DIRS) removeEmptyFolders(root, d);
    return { ok: true, removed };
  } catch (err) {
    // A link that appeared after the scan: refused where it was met.
    if (err instanceof ContainmentError) return { ok: false, problems: [err.problem] };
    throw err;
  }
}
