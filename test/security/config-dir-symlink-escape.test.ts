import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as apply } from '../../server/cli/commands/apply.ts';
import { run as exportCmd } from '../../server/cli/commands/export.ts';
import { ContainmentError, readContained, writeContained } from '../../server/config-as-code/contained-files.ts';
import { type ServedApp, startServedApp } from '../support/served-app.ts';

// A configuration directory is often a clone of a repository someone else can write to. `toolgate
// export` used to write through a symlinked file, delete `*.json` in a symlinked folder outside
// --dir, and `apply --plan` read a symlinked folder. Neither follows a link now, at any depth:
// each refuses with the path of the link and touches nothing.

let s: ServedApp;
let work: string;
let n = 0;

beforeAll(async () => {
  s = await startServedApp();
  work = mkdtempSync(join(tmpdir(), 'toolgate-links-'));
});
afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

const capture = () => {
  const lines: string[] = [];
  return { lines, text: () => lines.join('\n'), out: { log: (l: string) => lines.push(l), error: (l: string) => lines.push(l) } };
};

/** A fresh exported directory and, beside it, a folder outside it that must stay untouched. */
async function exportedDir(): Promise<{ dir: string; outside: string }> {
  n++;
  const dir = join(work, `config-${n}`);
  const outside = join(work, `outside-${n}`);
  mkdirSync(outside);
  writeFileSync(join(outside, 'victim.json'), '{"keep":"me"}\n');
  writeFileSync(join(outside, 'secret.txt'), 'do not read\n');
  expect(await exportCmd(['--dir', dir], capture().out, { env: s.env })).toBe(0);
  return { dir, outside };
}

const outsideState = (outside: string) => Object.fromEntries(readdirSync(outside).map((f) => [f, readFileSync(join(outside, f), 'utf8')]));

describe('toolgate export never follows a link', () => {
  const cases: [string, (dir: string, outside: string) => string][] = [
    [
      'a symlinked entity file pointing outside',
      (dir, outside) => {
        rmSync(join(dir, 'groups/default.json'));
        symlinkSync(join(outside, 'victim.json'), join(dir, 'groups/default.json'));
        return 'groups/default.json';
      },
    ],
    [
      'a dangling link where an entity file goes',
      (dir, outside) => {
        rmSync(join(dir, 'groups/default.json'));
        symlinkSync(join(outside, 'created-by-export.json'), join(dir, 'groups/default.json'));
        return 'groups/default.json';
      },
    ],
    [
      "a tenant's grants folder linked outside",
      (dir, outside) => {
        rmSync(join(dir, 'tenants/acme-research/grants'), { recursive: true });
        symlinkSync(outside, join(dir, 'tenants/acme-research/grants'));
        return 'tenants/acme-research/grants';
      },
    ],
    [
      'a top-level layout folder linked outside',
      (dir, outside) => {
        rmSync(join(dir, 'states'), { recursive: true });
        symlinkSync(outside, join(dir, 'states'));
        return 'states';
      },
    ],
    [
      'a whole tenant folder linked outside',
      (dir, outside) => {
        rmSync(join(dir, 'tenants/acme-research'), { recursive: true });
        symlinkSync(outside, join(dir, 'tenants/acme-research'));
        return 'tenants/acme-research';
      },
    ],
    [
      'a stale file that is a link (export would delete it)',
      (dir, outside) => {
        symlinkSync(join(outside, 'victim.json'), join(dir, 'groups/gone.json'));
        return 'groups/gone.json';
      },
    ],
  ];
  for (const [name, plant] of cases) {
    it(`${name}: refused naming the link, nothing outside written or removed`, async () => {
      const { dir, outside } = await exportedDir();
      const before = outsideState(outside);
      const link = plant(dir, outside);
      const c = capture();
      expect(await exportCmd(['--dir', dir], c.out, { env: s.env })).toBe(2);
      expect(c.text()).toContain(`${link}: is a symbolic link`);
      expect(c.text()).toContain('nothing was written');
      expect(outsideState(outside)).toEqual(before);
    });
  }

  it('the directory named by --dir may itself be a link: it is resolved once and written inside', async () => {
    const { dir } = await exportedDir();
    const alias = join(work, `alias-${n}`);
    symlinkSync(dir, alias);
    rmSync(join(dir, 'groups/default.json'));
    expect(await exportCmd(['--dir', alias], capture().out, { env: s.env })).toBe(0);
    expect(existsSync(join(dir, 'groups/default.json'))).toBe(true);
  });

  it('links outside the layout folders (a README, .git) are left alone and do not stop an export', async () => {
    const { dir, outside } = await exportedDir();
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'README.md'));
    expect(await exportCmd(['--dir', dir], capture().out, { env: s.env })).toBe(0);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('do not read\n');
  });
});

describe('toolgate apply and apply --plan never read through a link', () => {
  const cases: [string, (dir: string, outside: string) => string][] = [
    [
      'a tenant folder linked to one outside',
      (dir, outside) => {
        mkdirSync(join(outside, 'evil'));
        writeFileSync(join(outside, 'evil/tenant.json'), JSON.stringify({ id: 'evil', name: 'Evil' }));
        symlinkSync(join(outside, 'evil'), join(dir, 'tenants/evil'));
        return 'tenants/evil';
      },
    ],
    [
      'a group file linked to a file outside',
      (dir, outside) => {
        writeFileSync(join(outside, 'g.json'), JSON.stringify({ name: 'from-outside' }));
        symlinkSync(join(outside, 'g.json'), join(dir, 'groups/from-outside.json'));
        return 'groups/from-outside.json';
      },
    ],
    [
      'a top-level layout folder linked outside',
      (dir, outside) => {
        writeFileSync(join(outside, 'picked.json'), JSON.stringify({ name: 'picked' }));
        rmSync(join(dir, 'states'), { recursive: true });
        symlinkSync(outside, join(dir, 'states'));
        return 'states';
      },
    ],
  ];
  for (const [name, plant] of cases) {
    for (const mode of [['--plan'], ['--reason', 'linked']]) {
      it(`${name} (${mode[0]}): exit 2 naming the link, nothing applied`, async () => {
        const { dir, outside } = await exportedDir();
        const link = plant(dir, outside);
        const seq = (await s.request('GET', '/v1/audit?order=desc&limit=1')).json.items[0].seq;
        const c = capture();
        expect(await apply(['--dir', dir, ...mode], c.out, { env: s.env })).toBe(2);
        expect(c.text()).toContain(`${link}: is a symbolic link`);
        expect(c.text()).not.toMatch(/create/);
        expect((await s.request('GET', '/v1/audit?order=desc&limit=1')).json.items[0].seq).toBe(seq);
      });
    }
  }
});

describe('a folder swapped for a link between the checks and the open', () => {
  // The race itself cannot be timed in a test; what it leaves is a path whose folders resolve
  // somewhere else than the root the checks were made under. That is what the open is held to.
  it.runIf(existsSync('/proc/self/fd'))('a file opened somewhere else than under the root is neither read nor written', () => {
    n++;
    const real = join(work, `real-${n}`);
    mkdirSync(join(real, 'states'), { recursive: true });
    writeFileSync(join(real, 'states', 'a.json'), '{"secret":"outside"}\n');
    const seenAs = join(work, `seen-as-${n}`);
    symlinkSync(real, seenAs);
    expect(() => readContained(seenAs, 'states/a.json')).toThrow(ContainmentError);
    expect(() => writeContained(seenAs, 'states/b.json', '{}\n')).toThrow(ContainmentError);
    expect(readdirSync(join(real, 'states'))).toEqual(['a.json']);
    // Under its real path the same files are read and written.
    expect(readContained(real, 'states/a.json')).toContain('outside');
    writeContained(real, 'states/b.json', '{}\n');
    expect(readdirSync(join(real, 'states')).sort()).toEqual(['a.json', 'b.json']);
  });
});

describe('a named pipe where a file is read', () => {
  // A pipe swapped in after the scan would hold a plain open until some writer came: the whole
  // command (and its event loop) hung. It is opened without waiting and refused.
  it.runIf(process.platform === 'linux')('is refused as not a regular file, at once', () => {
    n++;
    const root = join(work, `pipe-${n}`);
    mkdirSync(join(root, 'states'), { recursive: true });
    execFileSync('mkfifo', [join(root, 'states', 'a.json')]);
    expect(() => readContained(root, 'states/a.json')).toThrow(/neither a regular file nor a folder/);
  });
});
