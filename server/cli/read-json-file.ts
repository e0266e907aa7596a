import { readFileSync } from 'node:fs';
import { MAX_DEPTH, describeSafeParse, parseSafeJson } from '../http/safe-json.ts';

/** Bundles nest stored entities a few levels below their own root, so they may go a little deeper than a body. */
export const BUNDLE_MAX_DEPTH = MAX_DEPTH + 16;

/**
 * Reads a JSON file given on the command line with the same refusals as an API body (keys that
 * reshape objects, excessive depth); throws an Error naming the file and the first problem.
 */
export function readJsonFile(file: string, maxDepth = MAX_DEPTH): unknown {
  const r = parseSafeJson(readFileSync(file, 'utf8'), maxDepth);
  if (!r.ok) throw new Error(`${file}: ${describeSafeParse(r)}`);
  return r.value;
}
