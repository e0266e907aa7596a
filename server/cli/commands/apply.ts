import { parseArgs } from 'node:util';
import { ServerRefusal, clientOptionsFromEnv, createApiClient } from '../../config-as-code/api-client.ts';
import { applyChanges } from '../../config-as-code/apply-changes.ts';
import { type Change, describePlan, planChanges } from '../../config-as-code/plan.ts';
import { readDir } from '../../config-as-code/read-dir.ts';
import { readServer } from '../../config-as-code/read-server.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate apply --dir DIR [--plan] [--prune] --reason TEXT   (with TOOLGATE_URL and TOOLGATE_TOKEN set)';

type Deps = { env?: NodeJS.ProcessEnv; fetch?: typeof fetch };

const verb = { create: 'created', update: 'updated', delete: 'deleted' } as const;
const describe = (c: Change) => (c.op === 'note' ? c.path : `${verb[c.op]} ${c.path}`);

/**
 * `toolgate apply --dir D [--plan] [--prune] --reason R`: makes the server match D. Every file is
 * checked against its schema before anything is sent (a bad file: exit 2, nothing applied). The
 * plan comes from what the server has now; `--plan` prints it and changes nothing. Apply sends each
 * change with If-Match of what it read, in reference order, and stops at the first refusal (exit 1),
 * naming the file, the server's problem, and what was applied before it.
 */
export async function run(args: string[], out: Output = consoleOutput, deps: Deps = {}): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { dir: { type: 'string' }, plan: { type: 'boolean' }, prune: { type: 'boolean' }, reason: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate apply: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.dir) {
    out.error(USAGE);
    return 2;
  }
  const reason = values.reason?.trim();
  if (!values.plan && !reason) {
    out.error(`toolgate apply: --reason is required (it goes into the audit log of every change)\n${USAGE}`);
    return 2;
  }
  const options = clientOptionsFromEnv(deps.env ?? process.env);
  if (typeof options === 'string') {
    out.error(`toolgate apply: ${options}`);
    return 2;
  }
  const read = readDir(values.dir);
  if (!read.ok) {
    out.error(`toolgate apply: ${values.dir} has ${read.problems.length} problem${read.problems.length === 1 ? '' : 's'}; nothing was applied:`);
    for (const p of read.problems) out.error(`  ${p.path}${p.pointer ? ` ${p.pointer}` : ''}: ${p.message}`);
    return 2;
  }
  const api = createApiClient({ ...options, reason, fetch: deps.fetch });
  let changes: Change[];
  try {
    changes = planChanges(read.entities, await readServer(api), { prune: !!values.prune });
  } catch (err) {
    out.error(`toolgate apply: ${err instanceof ServerRefusal ? `the server refused to be read: ${err.lines().join('\n')}` : (err as Error).message}`);
    return 1;
  }
  if (values.plan) {
    for (const l of describePlan(changes)) out.log(l);
    return 0;
  }
  for (const c of changes) if (c.op === 'note') out.log(`note    ${c.path}: ${c.message}`);
  const result = await applyChanges(api, changes, (c) => out.log(describe(c)));
  if (result.failed) {
    const { change, error } = result.failed;
    out.error(
      `refused: ${change.path} (${change.op === 'note' ? '' : change.op}): ${error instanceof ServerRefusal ? error.lines().join('\n') : error.message}`,
    );
    if (result.done.length) {
      out.error(`applied before the refusal (${result.done.length}):`);
      for (const c of result.done) out.error(`  ${describe(c)}`);
    } else {
      out.error('nothing was applied');
    }
    return 1;
  }
  const applied = result.done.filter((c) => !(c.op === 'create' && c.withTenant)).length;
  out.log(applied ? `applied ${applied} change${applied === 1 ? '' : 's'} to ${api.url}` : `no changes: ${api.url} matches ${values.dir}`);
  return 0;
}
