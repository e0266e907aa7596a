import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeySet, VerifyCode } from '../../policy-schemas/types.gen.ts';
import type { TrustedKeys } from '../verify-bundle.ts';
import { rootsOf, verifyKeySet } from '../verify-key-set.ts';
import type { RootKey } from '../verify-key-set.ts';
import { atomicWrite } from './cache.ts';
import { requestSignal } from './request-signal.ts';

export type KeySetRefresh = { ok: true; keySet: KeySet; changed: boolean } | { ok: false; code: VerifyCode | 'unreachable' | 'server_error'; message: string };

const STATE_FORMAT = 'toolgate.keyset-cache/v1';
/** Where the key set in use came from: the control plane, or a static mirror (weaker, see wantsServerKeySet). */
type KeySetOrigin = 'server' | 'mirror';
/** How many key-set versions a runtime walks to follow root rotations it missed. */
const MAX_WALK = 1000;

/**
 * The key set a runtime trusts bundles through. It starts from the configured root keys; every key
 * set it verifies names the roots that sign the next one (TUF's root chain), so a root rotation
 * announced by the current root is followed, also after the fact by walking the versions in between.
 * The newest verified key set, the highest version seen and the roots it names are kept beside the
 * cached bundle (`keyset.json`, `keyset.jws`, `keyset.state.json`): the cache directory is trusted
 * as much as the configuration.
 */
export class KeySetSource {
  private current: { keySet: KeySet; trusted: TrustedKeys; from: KeySetOrigin } | undefined;
  private highestVersionSeen = 0;
  private roots: RootKey[];

  constructor(
    private readonly opts: {
      url: string;
      trustedRoots: readonly RootKey[];
      cacheDir: string;
      fetch: typeof fetch;
      signal: AbortSignal;
      now: () => Date;
      /** Static mirrors to read `keyset.json(.jws)` from when the server cannot be reached. */
      mirrors?: readonly string[];
      /**
       * Whether the server answered lately (its bundle pulls): then a failed key-set fetch is a
       * hiccup, not an outage, and no mirror is asked. Mirrors answer only what the server cannot.
       */
      serverReachable?: () => boolean;
    },
  ) {
    this.roots = [...opts.trustedRoots];
  }

  /** The signing keys of the newest verified, unexpired key set; undefined when there is none. */
  trustedKeys(): TrustedKeys | undefined {
    if (!this.current) return undefined;
    if (Date.parse(this.current.keySet.expiresAt) <= this.opts.now().getTime()) return undefined;
    return this.current.trusted;
  }

  keySet(): KeySet | undefined {
    return this.current?.keySet;
  }

  /**
   * Whether the key set in use came from a mirror (or there is none yet): a mirror may serve an
   * old, unexpired key set that still lists a key retired since, so the server's key set is taken
   * as soon as the server answers.
   */
  wantsServerKeySet(): boolean {
    return this.current?.from !== 'server';
  }

  /** Loads the persisted key set, checked again as if it had just arrived (an expired one is not used). */
  async load(): Promise<{ ok: true } | { ok: false; code: VerifyCode; message: string }> {
    let state: { format?: unknown; highestVersionSeen?: unknown; roots?: unknown; from?: unknown };
    try {
      state = JSON.parse(await readFile(this.file('keyset.state.json'), 'utf8'));
    } catch {
      return { ok: true };
    }
    if (state.format !== STATE_FORMAT || !Number.isSafeInteger(state.highestVersionSeen))
      return { ok: false, code: 'keyset_malformed', message: 'the cached key-set state is not readable' };
    this.highestVersionSeen = state.highestVersionSeen as number;
    if (Array.isArray(state.roots) && state.roots.length > 0) this.roots = state.roots as RootKey[];
    let bytes: Buffer;
    let signature: string;
    try {
      [bytes, signature] = await Promise.all([readFile(this.file('keyset.json')), readFile(this.file('keyset.jws'), 'utf8')]);
    } catch {
      return { ok: true };
    }
    const r = await verifyKeySet(bytes, signature.trim(), { trustedRoots: this.roots, highestVersionSeen: this.highestVersionSeen, now: this.opts.now() });
    if (!r.ok) return r;
    this.current = { keySet: r.keySet, trusted: r.trustedKeys, from: state.from === 'server' ? 'server' : 'mirror' };
    this.roots = rootsOf(r.keySet);
    return { ok: true };
  }

  /**
   * Fetches the latest key set and accepts it only through verifyKeySet. Signed by a root this
   * runtime does not trust yet, it walks the versions after the newest one it verified to follow
   * the root chain, then tries the latest again.
   */
  async refresh(opts: { serverOnly?: boolean } = {}): Promise<KeySetRefresh> {
    const latest = await this.get(undefined, opts.serverOnly);
    if (!latest.ok) return latest;
    let r = await this.accept(latest.bytes, latest.signature, false, latest.from);
    if (!r.ok && r.code === 'keyset_untrusted_root' && latest.version > this.highestVersionSeen + 1) {
      for (let v = this.highestVersionSeen + 1; v < latest.version && v <= this.highestVersionSeen + MAX_WALK; v++) {
        const step = await this.get(v);
        if (!step.ok) return step;
        const accepted = await this.accept(step.bytes, step.signature, true);
        // An expired intermediate version still vouches for the roots after it; anything else breaks the chain.
        if (!accepted.ok && accepted.code !== 'keyset_expired') return accepted;
      }
      r = await this.accept(latest.bytes, latest.signature, false, latest.from);
    }
    return r;
  }

  private async accept(bytes: Buffer, signature: string | null, intermediate = false, from: KeySetOrigin = 'server'): Promise<KeySetRefresh> {
    const r = await verifyKeySet(bytes, signature, { trustedRoots: this.roots, highestVersionSeen: this.highestVersionSeen, now: this.opts.now() });
    if (!r.ok) {
      if (!(intermediate && r.code === 'keyset_expired')) return r;
      // Expired but signed by a trusted root: follow the roots it names, use none of its keys.
      const doc = JSON.parse(bytes.toString('utf8')) as KeySet;
      this.roots = rootsOf(doc);
      this.highestVersionSeen = Math.max(this.highestVersionSeen, doc.version);
      return r;
    }
    const changed = this.current?.keySet.version !== r.keySet.version;
    this.highestVersionSeen = Math.max(this.highestVersionSeen, r.keySet.version);
    this.roots = rootsOf(r.keySet);
    if (!intermediate) this.current = { keySet: r.keySet, trusted: r.trustedKeys, from };
    await this.persist(intermediate ? undefined : { bytes, signature: signature!.trim() });
    return { ok: true, keySet: r.keySet, changed };
  }

  private async persist(files?: { bytes: Buffer; signature: string }): Promise<void> {
    try {
      await mkdir(this.opts.cacheDir, { recursive: true });
      if (files) {
        await atomicWrite(this.file('keyset.json'), files.bytes);
        await atomicWrite(this.file('keyset.jws'), `${files.signature}\n`);
      }
      const state = { format: STATE_FORMAT, highestVersionSeen: this.highestVersionSeen, roots: this.roots, from: this.current?.from };
      await atomicWrite(this.file('keyset.state.json'), `${JSON.stringify(state, null, 2)}\n`);
    } catch {
      // Verified and in use; persisting is retried with the next key set.
    }
  }

  private async get(
    version?: number,
    serverOnly = false,
  ): Promise<
    | { ok: true; bytes: Buffer; signature: string | null; version: number; from: KeySetOrigin }
    | { ok: false; code: 'unreachable' | 'server_error'; message: string }
  > {
    const url = `${this.opts.url}/.well-known/toolgate-keyset.json${version === undefined ? '' : `?version=${version}`}`;
    const request = requestSignal(this.opts.signal, 10_000);
    try {
      const res = await this.opts.fetch(url, { headers: { accept: 'application/json' }, signal: request.signal });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) return { ok: false, code: 'server_error', message: `the key set answered ${res.status}` };
      return { ok: true, bytes, signature: res.headers.get('toolgate-signature'), version: Number(res.headers.get('toolgate-version')) || 0, from: 'server' };
    } catch (err) {
      // Only when the server cannot be reached at all: a mirror's key set may be old.
      const mirrorsAllowed = version === undefined && !serverOnly && !(this.opts.serverReachable?.() ?? false);
      const mirrored = mirrorsAllowed ? await this.fromMirror() : undefined;
      return mirrored ?? { ok: false, code: 'unreachable', message: `cannot fetch the key set: ${(err as Error).message}` };
    } finally {
      request.done();
    }
  }

  /** The latest key set from the first static mirror that has one; it gets the same checks as the server's. */
  private async fromMirror(): Promise<{ ok: true; bytes: Buffer; signature: string | null; version: number; from: KeySetOrigin } | undefined> {
    for (const base of this.opts.mirrors ?? []) {
      const request = requestSignal(this.opts.signal, 10_000);
      try {
        const signal = request.signal;
        const [doc, jws] = await Promise.all([this.opts.fetch(`${base}/keyset.json`, { signal }), this.opts.fetch(`${base}/keyset.json.jws`, { signal })]);
        if (doc.status !== 200 || jws.status !== 200) continue;
        const bytes = Buffer.from(await doc.arrayBuffer());
        const signature = (await jws.text()).trim();
        let version = 0;
        try {
          version = Number((JSON.parse(bytes.toString('utf8')) as { version?: unknown }).version) || 0;
        } catch {
          // Unparseable: verification refuses it.
        }
        return { ok: true, bytes, signature, version, from: 'mirror' };
      } catch {
        // Try the next mirror.
      } finally {
        request.done();
      }
    }
    return undefined;
  }

  private file(name: string): string {
    return join(this.opts.cacheDir, name);
  }
}
