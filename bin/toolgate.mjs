#!/usr/bin/env node
// `npx toolgate …`: runs the TypeScript CLI through tsx (Node 20 cannot strip types itself).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsx = createRequire(import.meta.url).resolve('tsx');
const r = spawnSync(process.execPath, ['--import', tsx, join(root, 'server/cli/main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
