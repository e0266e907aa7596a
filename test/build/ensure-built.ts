import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

type BuildScript = { buildTargets: (names: string[], opts?: { ifStale?: boolean; quiet?: boolean }) => Promise<void> };

async function buildScript(): Promise<BuildScript> {
  return (await import(pathToFileURL(join(ROOT, 'scripts/build.mjs')).href)) as BuildScript;
}

/** Builds the server (dist/server) unless it is newer than its sources. */
export async function ensureServerBuilt(): Promise<void> {
  await (await buildScript()).buildTargets(['server'], { ifStale: true, quiet: true });
}

/** Builds the runtime package (runtime/dist) unless it is newer than its sources. */
export async function ensureRuntimeBuilt(): Promise<void> {
  await (await buildScript()).buildTargets(['runtime'], { ifStale: true, quiet: true });
}

/** Builds the console (dist/web) unless it is newer than its sources. */
export async function ensureWebBuilt(): Promise<void> {
  await (await buildScript()).buildTargets(['web'], { ifStale: true, quiet: true });
}
