import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// DESIGN's folder layout is part of the design: the runtime SDK and the gateway are runtimes a
// tenant deploys without the control plane, so neither may reach into the server's code (nor the
// SDK into the gateway). Checked on every import and dynamic import of their sources (tests may
// use the server to make fixtures: they are not shipped).
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const FORBIDDEN: Record<string, string[]> = {
  runtime: ['server', 'gateway', 'web'],
  gateway: ['server', 'web'],
};

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|tsx)$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Every relative module specifier a file imports, exports from or imports dynamically. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g)) out.push(m[2]);
  return out;
}

describe('folder boundaries', () => {
  for (const [folder, forbidden] of Object.entries(FORBIDDEN)) {
    it(`${folder}/ imports nothing from ${forbidden.map((f) => `${f}/`).join(', ')}`, () => {
      const files = sources(folder);
      expect(files.length).toBeGreaterThan(5);
      const crossings: string[] = [];
      for (const file of files) {
        for (const spec of relativeImports(file)) {
          const target = relative(root, resolve(dirname(file), spec)).split(/[\\/]/)[0];
          if (forbidden.includes(target)) crossings.push(`${relative(root, file)} → ${spec}`);
        }
      }
      expect(crossings).toEqual([]);
    });
  }

  it('finds a crossing when there is one (the check reads imports as written)', () => {
    const file = join(root, 'gateway', 'gateway.ts');
    expect(relativeImports(file)).toContain('../runtime/decide.ts');
  });
});
