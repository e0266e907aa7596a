#!/usr/bin/env node
// `npm start`: builds what is missing or older than its sources (the server, the console), then
// runs the built server in this same process. A separate prestart script cost every start a
// second Node process just to find nothing stale.
// Plain JavaScript on purpose: it must run before anything is compiled, without tsx.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildTargets } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
try {
  await buildTargets(['server', 'web'], { ifStale: true });
} catch (err) {
  console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
// The CLI reads its command from process.argv (`serve`, passed by the start script).
await import(pathToFileURL(join(root, 'dist/server/main.js')).href);
