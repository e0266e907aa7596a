import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { Bundle, EvaluationRequest } from '../../../policy-schemas/types.gen.ts';
import { evaluate } from '../../../runtime/evaluate.ts';
import { loadBundle } from '../../../runtime/load-bundle.ts';
import { BUNDLE_MAX_DEPTH, readJsonFile } from '../read-json-file.ts';
import { type Output, consoleOutput } from '../output.ts';

const USAGE = 'usage: toolgate evaluate --bundle FILE --request FILE';

/**
 * `toolgate evaluate --bundle F --request F`: prints exactly what `POST …/simulate` answers for the
 * same request (the same evaluate(), the same JSON), here over a bundle file instead of the draft.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { bundle: { type: 'string' }, request: { type: 'string' } } }));
  } catch (err) {
    out.error(`toolgate evaluate: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.bundle || !values.request) {
    out.error(USAGE);
    return 2;
  }
  const bundle = readJsonArg(values.bundle, out, BUNDLE_MAX_DEPTH);
  const request = readJsonArg(values.request, out);
  if (bundle === undefined || request === undefined) return 1;
  const check = validate<EvaluationRequest>('evaluation-request', request);
  if (!check.ok) {
    out.error(`toolgate evaluate: ${values.request} is not a valid request:`);
    for (const e of check.errors) out.error(`  ${e.pointer || '/'}: ${e.message}`);
    return 1;
  }
  let loaded;
  try {
    loaded = loadBundle(bundle as Bundle);
  } catch (err) {
    out.error(`toolgate evaluate: ${values.bundle} is not a usable bundle: ${(err as Error).message}`);
    return 1;
  }
  out.log(JSON.stringify(evaluate(loaded, check.value)));
  return 0;
}

function readJsonArg(file: string, out: Output, maxDepth?: number): unknown {
  try {
    return readJsonFile(file, maxDepth);
  } catch (err) {
    out.error(`toolgate evaluate: cannot read ${file}: ${(err as Error).message}`);
    return undefined;
  }
}
