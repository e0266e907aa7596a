#!/usr/bin/env node
// `npx toolgate …`: runs the compiled CLI in this process. A checkout whose server sources
// changed since the last build (or that was never built) is built first.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist/server/main.js');
const buildScript = join(root, 'scripts/build.mjs');

if (existsSync(buildScript) && existsSync(join(root, 'node_modules/esbuild'))) {
  const { buildTargets } = await import(pathToFileURL(buildScript).href);
  await buildTargets(['server'], { ifStale: true, quiet: true });
} else if (!existsSync(main)) {
  console.error('toolgate: the CLI is not built; run `npm run build` in the project first');
  process.exit(1);
}
await import(pathToFileURL(main).href);
