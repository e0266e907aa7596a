#!/usr/bin/env node
// Builds what production runs with plain `node`: the server and CLI as one ESM file, the runtime
// SDK as the `@toolgate/runtime` package, and the console with Vite.
//   node scripts/build.mjs [server] [runtime] [web] [--if-stale]
// With no target it builds all three. `--if-stale` skips a target whose output is newer than
// every source it is built from (so a second `npm start` starts at once).
// Plain JavaScript on purpose: it must run before anything is compiled, without tsx.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync, renameSync, rmSync, copyFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Where each target writes, what it is built from, and the stamp that says when it was built. */
export const targets = {
  server: {
    stamp: 'dist/server/.built',
    sources: ['server', 'runtime', 'gateway', 'policy-schemas', 'migrations', 'package.json', 'scripts/build.mjs'],
  },
  runtime: {
    stamp: 'runtime/dist/.built',
    sources: ['runtime', 'policy-schemas', 'runtime/package.json', 'scripts/build.mjs'],
  },
  web: {
    stamp: 'dist/.web-built', // not inside dist/web, which is served as it is
    sources: ['web', 'runtime', 'policy-schemas', 'vite.config.ts', 'package.json'],
  },
};

const ignoredDirs = new Set(['node_modules', 'dist']);

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isDirectory() && ignoredDirs.has(entry.name)) continue;
    // Tests never reach the built output: editing one must not force a rebuild.
    if (/\.test\.tsx?$/.test(entry.name)) continue;
    newest = Math.max(newest, newestMtime(join(path, entry.name)));
  }
  return newest;
}

/** True when the target's output is missing or older than one of its sources. */
export function isStale(name) {
  const t = targets[name];
  const stamp = join(root, t.stamp);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return t.sources.some((s) => newestMtime(join(root, s)) > built);
}

function writeStamp(name) {
  const stamp = join(root, targets[name].stamp);
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

/**
 * Bundling moves every module into one file, so `import.meta.url` would point at the bundle.
 * Modules that read files beside themselves (the schemas, the demo data) get the URL of the place
 * their files are in the built layout instead: `locate(sourcePath)` answers it relative to the
 * output file's folder.
 */
function importMetaUrlPlugin(outDir, locate) {
  return {
    name: 'import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.tsx?$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const target = locate(args.path);
        let rel = relative(outDir, target).split('\\').join('/');
        if (!rel.startsWith('.')) rel = `./${rel}`;
        return {
          contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
          loader: args.path.endsWith('x') ? 'tsx' : 'ts',
        };
      });
    },
  };
}

/**
 * Packages stay external, but a JSON file imported from one is inlined: esbuild drops the
 * `with { type: 'json' }` attribute of external imports, without which Node refuses to load JSON.
 */
const inlinePackageJson = {
  name: 'inline-package-json',
  setup(build) {
    build.onResolve({ filter: /^[^./].*\.json$/ }, (args) => ({ path: requireFrom(args.resolveDir).resolve(args.path) }));
  },
};

function requireFrom(dir) {
  return createRequire(join(dir, 'noop.js'));
}

/** Fails the build when our code imports a package its package.json does not depend on. */
function checkDependencies(metafile, dependencies, what) {
  const used = new Set();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    if (file.includes('node_modules/')) continue;
    for (const imp of input.imports) {
      const spec = imp.original ?? imp.path;
      if (/^[./]/.test(spec) || spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      used.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  }
  const missing = [...used].filter((n) => !(n in dependencies)).sort();
  if (missing.length) throw new Error(`${what} imports ${missing.join(', ')} at run time: move to "dependencies"`);
  // A required peer of a package we use (zod for the MCP SDK) is a run-time dependency too.
  const peers = new Set();
  for (const name of used) {
    const meta = packageMeta(name);
    for (const peer of Object.keys(meta?.peerDependencies ?? {})) {
      if (!meta.peerDependenciesMeta?.[peer]?.optional) peers.add(peer);
    }
  }
  const unused = Object.keys(dependencies).filter((n) => !used.has(n) && !peers.has(n));
  if (unused.length) throw new Error(`${what} never imports ${unused.join(', ')}: move to "devDependencies"`);
}

function packageMeta(name) {
  try {
    return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

async function buildServer() {
  const { build } = await import('esbuild');
  const compileThread = join(root, 'server/compiler/compile-thread.ts');
  // Built beside the live output and swapped in at the end, so a server or CLI starting meanwhile
  // never loads half a build. Same depth as dist/server: relocated URLs stay right after the swap.
  const finalDir = join(root, 'dist/server');
  const outDir = join(root, `dist/server-${process.pid}`);
  rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    // The compile worker is a thread of the server with an entry of its own (server/compiler/compile-thread.ts).
    entryPoints: { main: 'server/cli/main.ts', 'compile-worker': 'server/compiler/compile-worker.ts' },
    outdir: outDir,
    bundle: true,
    splitting: true, // CLI commands stay lazily loaded chunks: `serve` does not load `apply`.
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Packages are bundled too: one file loads far faster than thousands of small modules
    // (kysely, the MCP SDK, undici). The native addon stays external, and so do packages that
    // find files of their own at run time.
    external: ['better-sqlite3'],
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    // Bundled CommonJS packages call require(); ESM output has none unless given one.
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __toolgateCreateRequire } from 'node:module';\nconst require = __toolgateCreateRequire(import.meta.url);",
    },
    // Chunks sit beside main.js so every module's relocated import.meta.url resolves alike.
    chunkNames: '[name]-[hash]',
    // The schemas and demo data are read from the source tree, which ships with the server; the
    // module that starts the compile worker finds its entry beside the built files instead.
    plugins: [inlinePackageJson, importMetaUrlPlugin(outDir, (path) => (path === compileThread ? join(outDir, 'compile-thread.js') : path))],
  });
  checkDependencies(result.metafile, rootPackage.dependencies ?? {}, 'the built server');
  writeFileSync(join(outDir, 'meta.json'), JSON.stringify(result.metafile));
  rmSync(finalDir, { recursive: true, force: true });
  renameSync(outDir, finalDir);
  writeStamp('server');
}

async function buildRuntime() {
  const { build } = await import('esbuild');
  const pkgDir = join(root, 'runtime');
  const outDir = join(pkgDir, 'dist');
  const runtimePackage = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  rmSync(outDir, { recursive: true, force: true });
  // The bundle schemas travel inside the package: policy-schemas/index.ts reads them beside itself.
  const schemaDir = join(outDir, 'schemas');
  mkdirSync(schemaDir, { recursive: true });
  for (const f of readdirSync(join(root, 'policy-schemas'))) {
    if (f.endsWith('.schema.json')) copyFileSync(join(root, 'policy-schemas', f), join(schemaDir, f));
  }
  const common = {
    absWorkingDir: root,
    outdir: outDir,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [inlinePackageJson, importMetaUrlPlugin(outDir, (path) => (path.startsWith(join(root, 'policy-schemas')) ? join(schemaDir, 'index.js') : path))],
  };
  const node = await build({ ...common, entryPoints: { index: 'runtime/index.ts' }, platform: 'node' });
  // The browser entry must load in a page: no node: module may reach it.
  const browser = await build({ ...common, entryPoints: { browser: 'runtime/browser.ts' }, platform: 'browser' });
  const nodeImports = Object.values(browser.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.path.startsWith('node:')).map((i) => i.path));
  if (nodeImports.length) throw new Error(`runtime/browser.ts reaches ${[...new Set(nodeImports)].join(', ')}`);
  checkDependencies({ inputs: { ...node.metafile.inputs, ...browser.metafile.inputs } }, runtimePackage.dependencies ?? {}, '@toolgate/runtime');
  // Type declarations: tsc writes them for runtime/ and the generated types it imports.
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(pkgDir, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) throw new Error('tsc could not write the runtime declarations');
  writeStamp('runtime');
}

async function buildWeb() {
  const { build } = await import('vite');
  await build({ configFile: join(root, 'vite.config.ts'), root: join(root, 'web'), logLevel: 'warn' });
  writeStamp('web');
}

const builders = { server: buildServer, runtime: buildRuntime, web: buildWeb };

/** Builds the named targets (all when empty); with `ifStale`, only those whose sources changed. */
export async function buildTargets(names, { ifStale = false, quiet = false } = {}) {
  for (const name of names.length ? names : Object.keys(builders)) {
    if (!(name in builders)) throw new Error(`unknown build target "${name}" (server, runtime, web)`);
    if (ifStale && !isStale(name)) continue;
    const started = performance.now();
    await builders[name]();
    // stderr: the CLI's stdout may be piped into a file.
    if (!quiet) console.error(`built ${name} in ${Math.round(performance.now() - started)} ms`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const ifStale = args.includes('--if-stale');
  buildTargets(
    args.filter((a) => !a.startsWith('--')),
    { ifStale },
  ).catch((err) => {
    console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
