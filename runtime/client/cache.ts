import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** What the cache holds: the exact signed bytes, their signature and the highest version accepted. */
export type CachedBundle = { bytes: Buffer; signature: string; version: number; highestVersionSeen: number };

export type CacheRead = { kind: 'empty' } | { kind: 'found'; entry: CachedBundle } | { kind: 'unreadable'; message: string; highestVersionSeen?: number };

const STATE_FORMAT = 'toolgate.bundle-cache/v1';

/**
 * The on-disk cache of one tenant's last good bundle. The bundle and its signature sit in plain
 * files (`<tenant>.v<N>.bundle.json` / `.jws`, checkable with `toolgate verify`); a small state file,
 * replaced atomically last, names the current one, so a crash mid-write leaves the old cache whole.
 */
export class BundleCache {
  constructor(
    private readonly dir: string,
    private readonly tenant: string,
  ) {}

  private stateFile(): string {
    return join(this.dir, `${this.tenant}.state.json`);
  }

  bundleFile(version: number): string {
    return join(this.dir, `${this.tenant}.v${version}.bundle.json`);
  }

  signatureFile(version: number): string {
    return join(this.dir, `${this.tenant}.v${version}.bundle.jws`);
  }

  async read(): Promise<CacheRead> {
    let stateText: string;
    try {
      stateText = await readFile(this.stateFile(), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'empty' };
      return { kind: 'unreadable', message: `cannot read the cache state: ${(err as Error).message}` };
    }
    let state: unknown;
    try {
      state = JSON.parse(stateText);
    } catch {
      return { kind: 'unreadable', message: 'the cache state file is not JSON' };
    }
    const s = state as { format?: unknown; tenant?: unknown; version?: unknown; highestVersionSeen?: unknown };
    const highest = Number.isSafeInteger(s.highestVersionSeen) ? (s.highestVersionSeen as number) : undefined;
    if (s.format !== STATE_FORMAT || s.tenant !== this.tenant || !Number.isSafeInteger(s.version) || highest === undefined) {
      return { kind: 'unreadable', message: 'the cache state file is not a bundle cache state for this tenant', highestVersionSeen: highest };
    }
    const version = s.version as number;
    try {
      const [bytes, signature] = await Promise.all([readFile(this.bundleFile(version)), readFile(this.signatureFile(version), 'utf8')]);
      return { kind: 'found', entry: { bytes, signature: signature.trim(), version, highestVersionSeen: highest } };
    } catch (err) {
      return { kind: 'unreadable', message: `cannot read cached bundle v${version}: ${(err as Error).message}`, highestVersionSeen: highest };
    }
  }

  /** Stores a verified bundle and makes it the current one, then removes older versions' files. */
  async write(entry: CachedBundle): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await atomicWrite(this.bundleFile(entry.version), entry.bytes);
    await atomicWrite(this.signatureFile(entry.version), `${entry.signature}\n`);
    const state = { format: STATE_FORMAT, tenant: this.tenant, version: entry.version, highestVersionSeen: entry.highestVersionSeen };
    await atomicWrite(this.stateFile(), `${JSON.stringify(state, null, 2)}\n`);
    await this.removeOthers(entry.version);
  }

  private async removeOthers(keep: number): Promise<void> {
    const prefix = `${this.tenant}.v`;
    const keepNames = new Set([`${prefix}${keep}.bundle.json`, `${prefix}${keep}.bundle.jws`]);
    for (const name of await readdir(this.dir)) {
      if (!name.startsWith(prefix) || keepNames.has(name)) continue;
      if (!/^v\d+\.bundle\.(json|jws)$/.test(name.slice(this.tenant.length + 1))) continue;
      await rm(join(this.dir, name), { force: true });
    }
  }
}

/** Writes a file so that readers see the old content or the new, never a torn mix: temp file, fsync, rename. */
export async function atomicWrite(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
