import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/** Debian's PostgreSQL server binaries, newest version first. */
function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const dir = versions.map((v) => join(base, v, 'bin')).find((d) => existsSync(join(d, 'initdb')));
  if (!dir) throw new Error('PostgreSQL server binaries not found: install Debian\'s "postgresql" package (bash .ci/run does)');
  return dir;
}

/**
 * A throwaway PostgreSQL cluster on 127.0.0.1 in a temp directory, for the portability test.
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user.
 */
export async function startTempPostgres(opts: { durable?: boolean } = {}): Promise<{ url: string; stop: () => void }> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    const r = spawnSync(full[0] as string, full[1] as string[], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  // Locale C: text sorts by code point, as SQLite's BINARY collation does.
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'toolgate', '--no-sync', '--locale=C', '--encoding=UTF8']);
  // Tests skip fsync; `durable` keeps it (benchmarks comparing engines must pay for durability on both).
  const fsync = opts.durable ? '' : ' -c fsync=off';
  run('pg_ctl', ['-D', data, '-w', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${fsync}`, 'start']);
  return {
    url: `postgres://toolgate@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
