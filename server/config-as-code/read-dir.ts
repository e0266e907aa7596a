import { validate } from '../../policy-schemas/index.ts';
import { parseSafeJson } from '../http/safe-json.ts';
import { ContainmentError, readContained, resolveDir, scanFiles } from './contained-files.ts';
import { type Entity, KEY_FIELD, SCHEMA_OF, fileDocument, parsePath } from './layout.ts';

/** Top-level folders of the layout; anything else in the directory (README, CI files, .git) is left alone. */
export const MANAGED_DIRS = ['states', 'groups', 'mcp-servers', 'tools', 'tenants'] as const;

export type FileProblem = { path: string; pointer: string; message: string };

/**
 * Every file under the layout's folders, relative and with `/`, sorted; dot-files other than
 * `.json` ones are skipped, and links are never followed (scanFiles says where they are).
 */
export function layoutFiles(dir: string): string[] {
  const root = resolveDir(dir);
  return root === undefined ? [] : scanFiles(root, MANAGED_DIRS).files;
}

/**
 * Reads and checks a configuration directory before anything is sent: each file must be JSON,
 * valid against its schema (defaults filled in, as the server would), named after the entity it
 * holds, and belong to a tenant that has its tenant.json. Returns the entities, or every problem.
 */
export function readDir(dir: string): { ok: true; entities: Map<string, Entity> } | { ok: false; problems: FileProblem[] } {
  const root = resolveDir(dir);
  if (root === undefined) return { ok: false, problems: [{ path: dir, pointer: '', message: 'is not a directory' }] };
  const scan = scanFiles(root, MANAGED_DIRS);
  // A link anywhere in the layout refuses the whole directory: nothing is read through it.
  const problems: FileProblem[] = scan.problems.map((p) => ({ path: p.path, pointer: '', message: p.message }));
  const entities = new Map<string, Entity>();
  for (const path of scan.files) {
    const where = parsePath(path);
    if (!where) {
      problems.push({ path, pointer: '', message: 'is not part of the layout (see "Keeping the configuration in git" in the README)' });
      continue;
    }
    // Read as the API reads a body: keys that reshape objects and excessive depth are refused.
    let text: string;
    try {
      text = readContained(root, path);
    } catch (err) {
      if (!(err instanceof ContainmentError)) throw err;
      problems.push({ path: err.problem.path, pointer: '', message: err.problem.message });
      continue;
    }
    const parsed = parseSafeJson(text);
    if (!parsed.ok) {
      if (parsed.kind === 'syntax') problems.push({ path, pointer: '', message: `is not JSON: ${parsed.message}` });
      else for (const p of parsed.problems) problems.push({ path, pointer: p.pointer, message: p.message });
      continue;
    }
    const doc = parsed.value;
    const check = validate<Record<string, unknown>>(SCHEMA_OF[where.kind], doc);
    if (!check.ok) {
      for (const e of check.errors) problems.push({ path, pointer: e.pointer, message: e.message });
      continue;
    }
    const field = KEY_FIELD[where.kind];
    if (field && check.value[field] !== where.key) {
      problems.push({
        path,
        pointer: `/${field}`,
        message: `must be ${JSON.stringify(where.key)}, the name of the file${where.kind === 'tenant' ? "'s folder" : ''}`,
      });
      continue;
    }
    if (where.kind === 'tenant' && check.value.policy !== undefined) {
      problems.push({ path, pointer: '/policy', message: `belongs in tenants/${where.key}/policy.json` });
      continue;
    }
    for (const k of ['version', 'createdAt', 'updatedAt', 'tenant']) {
      if (check.value[k] !== undefined) problems.push({ path, pointer: `/${k}`, message: 'is set by the server; remove it from the file' });
    }
    entities.set(path, {
      kind: where.kind,
      path,
      key: where.key,
      ...(where.tenant ? { tenant: where.tenant } : {}),
      doc: fileDocument(where.kind, check.value),
    });
  }
  for (const e of entities.values()) {
    const tenant = e.kind === 'grant' ? e.tenant : e.kind === 'policy' || e.kind === 'tests' ? e.key : undefined;
    if (tenant !== undefined && !entities.has(`tenants/${tenant}/tenant.json`)) {
      problems.push({ path: e.path, pointer: '', message: `belongs to tenant ${tenant}, which has no tenants/${tenant}/tenant.json` });
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, entities };
}
