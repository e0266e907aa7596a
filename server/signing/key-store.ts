import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { KeySet, RootPublicKey } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import { KEYSET_FORMAT } from '../../runtime/key-set-format.ts';
import { signKeySet } from './sign.ts';

export type KeyStatus = 'next' | 'active' | 'retired';

/** Who signed a new key set: this process, or another sharing the keys directory. */
export type KeySetOrigin = 'this-process' | 'another-process';

/** Runs `fn` while holding a lock other processes sharing the keys directory respect. */
export type CrossProcessLock = <T>(fn: () => Promise<T>) => Promise<T>;

/** One Ed25519 signing key as kept on disk (`<kid>.json`, mode 0600; `<kid>.json.retired` once retired). */
type KeyFile = {
  kid: string;
  seq: number;
  createdAt: string;
  privateJwk: JWK;
  /** Absent in files written before staged rotation: such a key is active. */
  status?: 'next' | 'active';
  /** Orders promotions: the active key promoted last signs. Defaults to `seq`. */
  activatedSeq?: number;
  /** A `next` key to promote automatically at this time (`keys rotate --promote-after`). */
  promoteAt?: string;
};

/** A root private key (`<kid>.root.json`, mode 0600, or any file given as `--root-key`). */
type RootFile = { kid: string; createdAt: string; privateJwk: JWK };

export type SigningKey = {
  readonly kid: string;
  readonly seq: number;
  readonly createdAt: string;
  readonly status: KeyStatus;
  readonly activatedSeq: number;
  readonly promoteAt?: string;
  readonly publicJwk: JWK;
  readonly privateKey: CryptoKey | Uint8Array;
};

export type RootKey = { kid: string; publicJwk: RootPublicKey; privateKey: CryptoKey | Uint8Array; file: string };

export type KeyInfo = { kid: string; createdAt: string; status: KeyStatus; signing: boolean; promoteAt?: string };

/** The latest signed key set: its exact bytes, its JWS and what they say. */
export type SignedKeySet = { bytes: Buffer; signature: string; keySet: KeySet };

export type KeyStoreOptions = {
  /** A root private key kept outside the keys directory (`--root-key FILE`). */
  rootKeyFile?: string;
  /** How long a key set stays valid (default `TOOLGATE_KEYSET_TTL_SECONDS` or 30 days). */
  keySetTtlSeconds?: number;
  now?: () => Date;
};

/** Changing the key set needs a root private key; the server may not hold one. */
export class RootKeyUnavailableError extends Error {
  constructor(readonly roots: string[]) {
    super(
      `the root key (${roots.join(', ') || 'none'}) is not on this server, so the key set cannot be changed here; ` +
        'run the toolgate keys command with --root-key FILE where the root key is kept',
    );
  }
}

/**
 * A change named the key-set version it was based on and the key set has moved on since: another
 * change (here, in another replica, or from the CLI) came first. Checked under the store's lock.
 */
export class KeySetVersionMismatchError extends Error {
  constructor(
    readonly expected: number,
    readonly current: number,
  ) {
    super(`the key set is at version ${current}, not ${expected}`);
    this.name = 'KeySetVersionMismatchError';
  }
}

/** What a change of the key set may require: the key-set version its author saw (omitted: none). */
export type KeySetCondition = { ifKeySetVersion?: number };

const KEY_FILE = /^[A-Za-z0-9_-]{43}\.json$/;
const RETIRED_KEY_FILE = /^[A-Za-z0-9_-]{43}\.json\.retired$/;
const ROOT_FILE = /^[A-Za-z0-9_-]{43}\.root\.json$/;
const KEYSET_FILE = /^v(\d+)\.json$/;
const DEFAULT_KEYSET_TTL_SECONDS = 30 * 86400;

/** The keys directory: `TOOLGATE_KEYS_DIR`, default `./data/keys`. */
export function defaultKeysDir(): string {
  return resolve(process.env.TOOLGATE_KEYS_DIR ?? './data/keys');
}

function defaultKeySetTtl(): number {
  const v = Number(process.env.TOOLGATE_KEYSET_TTL_SECONDS);
  return Number.isInteger(v) && v > 0 ? v : DEFAULT_KEYSET_TTL_SECONDS;
}

/**
 * Ed25519 bundle-signing keys, the root keys that vouch for them, and the signed key set, in one
 * directory. Rotation is staged: a new key is published as `next`, then promoted to sign; an
 * older key stays `active` until retired. Every change is published as a new key-set version
 * signed by the current root (`keyset/v<N>.json` + `.jws`, every version kept so a runtime can
 * follow a root rotation). The directory is re-read whenever it changes, so a `toolgate keys`
 * command in another process takes effect in a running server without a restart. On first use
 * the first signing key, a root key (unless one is given) and key set v1 are created.
 */
export class KeyStore {
  private keys: SigningKey[] = [];
  private roots: RootKey[] = [];
  private keySetVersions: number[] = [];
  private latestKeySet: SignedKeySet | undefined;
  // The key-set version the listeners were last told of (or the first one this store read).
  private announcedVersion: number | undefined;
  private seen = '';
  private lock: Promise<unknown> = Promise.resolve();
  private readonly keySetListeners = new Set<(origin: KeySetOrigin) => void>();
  private crossProcessLock: CrossProcessLock | undefined;
  private readonly now: () => Date;
  private readonly ttlSeconds: number;

  constructor(
    readonly dir: string = defaultKeysDir(),
    private readonly options: KeyStoreOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.ttlSeconds = options.keySetTtlSeconds ?? defaultKeySetTtl();
  }

  private get keySetDir(): string {
    return join(this.dir, 'keyset');
  }

  /** The key that signs now: the active key promoted last (creating the first key and key set if there are none). */
  async signer(): Promise<SigningKey> {
    await this.ready();
    const active = this.keys.filter((k) => k.status === 'active');
    if (active.length === 0) throw new Error(`no active signing key in ${this.dir}; run toolgate keys promote`);
    return active.reduce((a, b) => (b.activatedSeq > a.activatedSeq ? b : a));
  }

  /** The public keys with status next or active, for `GET /.well-known/jwks.json`. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.ready();
    return {
      keys: this.keys
        .filter((k) => k.status !== 'retired')
        .map((k) => ({ ...k.publicJwk }))
        .sort((a, b) => ((a.kid ?? '') < (b.kid ?? '') ? -1 : 1)),
    };
  }

  /**
   * Calls `listener` after each new key set this store signs (`this-process`), and once for each
   * newer one another process signed that this store reads from the shared directory
   * (`another-process`: found by reload() or by any other read, whichever comes first); returns
   * the function that stops it. The first key set the store reads is its starting point, not a change.
   */
  onKeySetChanged(listener: (origin: KeySetOrigin) => void): () => void {
    this.keySetListeners.add(listener);
    return () => this.keySetListeners.delete(listener);
  }

  /**
   * Re-reads the directory now (another replica changed it); the listeners hear of a key set newer
   * than the last one they were told of. What this store held when reload() was called is no
   * measure: the re-read waits behind this store's other changes, which may read the same new key
   * set first, and a listener added meanwhile must not hear of a key set that was already current.
   */
  async reload(): Promise<void> {
    await this.exclusiveHere(() => this.refresh(true));
  }

  /**
   * Makes every change of the directory (first keys, rotation, promotion, retirement, re-issue)
   * also hold `lock`, so replicas sharing the directory change it one at a time.
   */
  setCrossProcessLock(lock: CrossProcessLock | undefined): void {
    this.crossProcessLock = lock;
  }

  /** The latest signed key set, for `GET /.well-known/toolgate-keyset.json`. */
  async keySet(): Promise<SignedKeySet> {
    await this.ready();
    if (!this.latestKeySet) throw new Error(`no key set in ${this.keySetDir}`);
    return this.latestKeySet;
  }

  /** One earlier key-set version (every version is kept), or undefined. */
  async keySetVersion(version: number): Promise<SignedKeySet | undefined> {
    await this.ready();
    if (!this.keySetVersions.includes(version)) return undefined;
    return this.readKeySet(version);
  }

  /** Every signing key, oldest first, with its status and which one signs (creating the first unless `create` is false). */
  async list(opts: { create?: boolean } = {}): Promise<KeyInfo[]> {
    if (opts.create === false) await this.refresh();
    else await this.ready();
    const active = this.keys.filter((k) => k.status === 'active');
    const current = active.length ? active.reduce((a, b) => (b.activatedSeq > a.activatedSeq ? b : a)).kid : undefined;
    return this.keys.map((k) => ({
      kid: k.kid,
      createdAt: k.createdAt,
      status: k.status,
      signing: k.kid === current,
      ...(k.promoteAt ? { promoteAt: k.promoteAt } : {}),
    }));
  }

  /** The root public keys the latest key set names, and which of them this store can sign with. */
  async rootInfo(): Promise<{ roots: { kid: string; available: boolean }[]; canSign: boolean }> {
    await this.ready();
    const named = this.latestKeySet?.keySet.roots ?? [];
    const roots = named.map((r) => ({ kid: r.kid, available: this.roots.some((k) => k.kid === r.kid) }));
    return { roots, canSign: roots.some((r) => r.available) };
  }

  /**
   * Publishes a new key as `next`: runtimes learn it from the key set before it ever signs.
   * `promoteAt` schedules its promotion (done by maintain()). Answers the key with the key-set
   * version that published it.
   */
  async rotate(opts: { promoteAt?: Date } & KeySetCondition = {}): Promise<SigningKey & { keySetVersion: number }> {
    await this.ready();
    return this.exclusive(async () => {
      await this.refresh(true);
      this.expectKeySetVersion(opts);
      this.currentRoot();
      const kid = await this.createKey('next', opts.promoteAt?.toISOString());
      await this.refresh(true);
      const published = await this.publishKeySet();
      return { ...this.find(kid), keySetVersion: published.keySet.version };
    });
  }

  /** Makes a `next` key (the newest one when `kid` is omitted) the signer; the previous signer stays active. */
  async promote(kid?: string, opts: KeySetCondition = {}): Promise<{ key: SigningKey; previous: string | null; keySetVersion: number }> {
    await this.ready();
    return this.exclusive(async () => {
      await this.refresh(true);
      this.expectKeySetVersion(opts);
      this.currentRoot();
      const candidates = this.keys.filter((k) => k.status === 'next');
      const key = kid ? this.keys.find((k) => k.kid === kid) : candidates[candidates.length - 1];
      if (!key) throw new Error(kid ? `no key ${kid} (see toolgate keys list)` : 'no next key to promote; run toolgate keys rotate first');
      if (key.status !== 'next') throw new Error(`${key.kid} is ${key.status}, not next: only a next key can be promoted`);
      const previous = (await this.signerOrNull())?.kid ?? null;
      const activatedSeq = this.keys.reduce((m, k) => Math.max(m, k.activatedSeq), 0) + 1;
      this.rewriteKeyFile(key.kid, (f) => {
        const { promoteAt: _p, ...rest } = f;
        return { ...rest, status: 'active', activatedSeq };
      });
      await this.refresh(true);
      const published = await this.publishKeySet();
      return { key: this.find(key.kid), previous, keySetVersion: published.keySet.version };
    });
  }

  /**
   * Retires a key for good: runtimes refuse what it signed. The key that signs now cannot be
   * retired (promote another first). Its file is kept as `<kid>.json.retired`; the key set lists it
   * as retired; answers the key as it was. `beforeRetiring` runs under the lock once every check passed (re-signing what the
   * key signed): no other key change can come between it and the retirement, and if it throws
   * nothing is retired.
   */
  async retire(
    kid: string,
    opts: KeySetCondition & { beforeRetiring?: (key: KeyInfo) => Promise<void> } = {},
  ): Promise<{ key: KeyInfo; keySetVersion: number }> {
    await this.ready();
    return this.exclusive(async () => {
      await this.refresh(true);
      this.expectKeySetVersion(opts);
      const key = this.keys.find((k) => k.kid === kid);
      if (!key || key.status === 'retired') throw new Error(key ? `${kid} is already retired` : `no key ${kid} (see toolgate keys list)`);
      if ((await this.signerOrNull())?.kid === kid) throw new Error(`${kid} signs now; promote another key before retiring it`);
      this.currentRoot();
      const info: KeyInfo = { kid, createdAt: key.createdAt, status: key.status, signing: false, ...(key.promoteAt ? { promoteAt: key.promoteAt } : {}) };
      await opts.beforeRetiring?.(info);
      renameSync(join(this.dir, `${kid}.json`), join(this.dir, `${kid}.json.retired`));
      await this.refresh(true);
      const published = await this.publishKeySet();
      return { key: info, keySetVersion: published.keySet.version };
    });
  }

  /**
   * Replaces the root: the current root signs one last key set that names only the new root,
   * which signs every key set after it. The new private key goes to `newRootFile`, or beside the
   * signing keys; an old root file in the keys directory is kept as `.retired`.
   */
  async rotateRoot(opts: { newRootFile?: string } = {}): Promise<{ previous: string; root: string; keySetVersion: number }> {
    await this.ready();
    return this.exclusive(async () => {
      await this.refresh(true);
      const current = this.currentRoot();
      const file = opts.newRootFile ? resolve(opts.newRootFile) : undefined;
      if (file && existsSync(file)) throw new Error(`${file} exists; the new root key is written to a new file`);
      const created = await this.createRoot(file);
      const signed = await this.publishKeySet({ roots: [created.publicJwk], signer: current });
      if (current.file.startsWith(`${this.dir}/`) && current.file.endsWith('.root.json')) renameSync(current.file, `${current.file}.retired`);
      await this.refresh(true);
      return { previous: current.kid, root: created.kid, keySetVersion: signed.keySet.version };
    });
  }

  /** Signs the same key set again as a new version with a later expiry. */
  async reissueKeySet(): Promise<SignedKeySet> {
    await this.ready();
    return this.exclusive(async () => {
      await this.refresh(true);
      return this.publishKeySet();
    });
  }

  /** The first use: the first signing key, a root key (unless one exists or was given) and key set v1. */
  private async ready(): Promise<void> {
    await this.refresh();
    if (this.keys.some((k) => k.status === 'active') && this.latestKeySet) return;
    await this.exclusive(async () => {
      await this.refresh(true);
      if (!this.keys.some((k) => k.status !== 'retired')) {
        await this.createKey('active');
        await this.refresh(true);
      }
      if (!this.latestKeySet) {
        if (this.roots.length === 0) await this.createRoot();
        await this.refresh(true);
        await this.publishKeySet({ roots: [this.roots[0].publicJwk], signer: this.roots[0] });
      }
    });
  }

  /** Refuses a change based on a key set that is no longer the latest (call after the re-read under the lock). */
  private expectKeySetVersion({ ifKeySetVersion }: KeySetCondition): void {
    const current = this.latestKeySet?.keySet.version ?? 0;
    if (ifKeySetVersion !== undefined && ifKeySetVersion !== current) throw new KeySetVersionMismatchError(ifKeySetVersion, current);
  }

  private async signerOrNull(): Promise<SigningKey | null> {
    const active = this.keys.filter((k) => k.status === 'active');
    return active.length ? active.reduce((a, b) => (b.activatedSeq > a.activatedSeq ? b : a)) : null;
  }

  /** The root that may sign the next key set: one the latest key set names and whose private key is here. */
  private currentRoot(): RootKey {
    const named = this.latestKeySet?.keySet.roots.map((r) => r.kid) ?? [];
    const root = this.roots.find((r) => named.includes(r.kid));
    if (!root) throw new RootKeyUnavailableError(named);
    return root;
  }

  private async publishKeySet(opts: { roots?: RootPublicKey[]; signer?: RootKey } = {}): Promise<SignedKeySet> {
    const signer = opts.signer ?? this.currentRoot();
    const previous = this.latestKeySet?.keySet;
    const issuedAt = this.now();
    const keySet: KeySet = {
      format: KEYSET_FORMAT,
      version: (previous?.version ?? 0) + 1,
      issuedAt: issuedAt.toISOString(),
      expiresAt: new Date(issuedAt.getTime() + this.ttlSeconds * 1000).toISOString(),
      keys: this.keys.map((k) => ({ kid: k.kid, kty: 'OKP', crv: 'Ed25519', x: String(k.publicJwk.x), status: k.status })),
      roots: (opts.roots ?? previous?.roots ?? [signer.publicJwk]) as KeySet['roots'],
    };
    const bytes = Buffer.from(canonicalJson(keySet), 'utf8');
    const signature = await signKeySet(bytes, signer);
    mkdirSync(this.keySetDir, { recursive: true, mode: 0o700 });
    // The signature first: a reader that sees v<N>.json finds its .jws beside it.
    writeAtomic(join(this.keySetDir, `v${keySet.version}.jws`), `${signature}\n`, 0o644);
    writeAtomic(join(this.keySetDir, `v${keySet.version}.json`), bytes, 0o644);
    // Told below as this process's own: no re-read may tell it as another process's.
    this.announcedVersion = keySet.version;
    await this.refresh(true);
    for (const listener of this.keySetListeners) listener('this-process');
    return { bytes, signature, keySet };
  }

  private find(kid: string): SigningKey {
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`the key ${kid} did not load`);
    return key;
  }

  private rewriteKeyFile(kid: string, change: (f: KeyFile) => KeyFile): void {
    const path = join(this.dir, `${kid}.json`);
    const file = JSON.parse(readFileSync(path, 'utf8')) as KeyFile;
    writeAtomic(path, `${JSON.stringify(change(file), null, 2)}\n`, 0o600);
  }

  private async createKey(status: 'next' | 'active', promoteAt?: string): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const { privateJwk, kid } = await newEd25519();
    const seq = this.keys.reduce((m, k) => Math.max(m, k.seq), 0) + 1;
    const activatedSeq = this.keys.reduce((m, k) => Math.max(m, k.activatedSeq), 0) + 1;
    const file: KeyFile = {
      kid,
      seq,
      createdAt: this.now().toISOString(),
      privateJwk: { ...privateJwk, kid, alg: 'EdDSA' },
      status,
      ...(status === 'active' ? { activatedSeq } : {}),
      ...(promoteAt ? { promoteAt } : {}),
    };
    writeAtomic(join(this.dir, `${kid}.json`), `${JSON.stringify(file, null, 2)}\n`, 0o600, true);
    return kid;
  }

  private async createRoot(path?: string): Promise<RootKey> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const { privateJwk, kid } = await newEd25519();
    const file: RootFile = { kid, createdAt: this.now().toISOString(), privateJwk: { ...privateJwk, kid, alg: 'EdDSA' } };
    const target = path ?? join(this.dir, `${kid}.root.json`);
    writeAtomic(target, `${JSON.stringify(file, null, 2)}\n`, 0o600, true);
    return loadRoot(target);
  }

  private readKeySet(version: number): SignedKeySet {
    const bytes = readFileSync(join(this.keySetDir, `v${version}.json`));
    const signature = readFileSync(join(this.keySetDir, `v${version}.jws`), 'utf8').trim();
    return { bytes, signature, keySet: JSON.parse(bytes.toString('utf8')) as KeySet };
  }

  /** One change at a time: in this process, and across processes when a cross-process lock is set. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const lock = this.crossProcessLock;
    return this.exclusiveHere(lock ? () => lock(fn) : fn);
  }

  private exclusiveHere<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async refresh(force = false): Promise<void> {
    let names: string[];
    let setNames: string[] = [];
    let stamp: string;
    try {
      const st = statSync(this.dir);
      names = readdirSync(this.dir).sort();
      stamp = `${st.mtimeMs}:${names.join(',')}`;
      try {
        const ks = statSync(this.keySetDir);
        setNames = readdirSync(this.keySetDir).sort();
        stamp += `|${ks.mtimeMs}:${setNames.join(',')}`;
      } catch {
        // No key set yet.
      }
    } catch {
      names = [];
      stamp = '';
    }
    if (this.options.rootKeyFile) {
      try {
        stamp += `|${statSync(this.options.rootKeyFile).mtimeMs}`;
      } catch {
        throw new Error(`cannot read the root key file ${this.options.rootKeyFile}`);
      }
    }
    if (!force && stamp === this.seen) return;
    const keys: SigningKey[] = [];
    for (const name of names) {
      const retired = RETIRED_KEY_FILE.test(name);
      if (!retired && !KEY_FILE.test(name)) continue;
      const file = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as KeyFile;
      const { d: _d, ...pub } = file.privateJwk;
      keys.push({
        kid: file.kid,
        seq: file.seq,
        createdAt: file.createdAt,
        status: retired ? 'retired' : (file.status ?? 'active'),
        activatedSeq: file.status === 'next' ? 0 : (file.activatedSeq ?? file.seq),
        ...(file.promoteAt && !retired ? { promoteAt: file.promoteAt } : {}),
        publicJwk: { kty: pub.kty, crv: pub.crv, x: pub.x, kid: file.kid, alg: 'EdDSA', use: 'sig' },
        privateKey: await importJWK(file.privateJwk, 'EdDSA'),
      });
    }
    keys.sort((a, b) => a.seq - b.seq || (a.kid < b.kid ? -1 : 1));
    const roots: RootKey[] = [];
    for (const name of names) if (ROOT_FILE.test(name)) roots.push(await loadRoot(join(this.dir, name)));
    if (this.options.rootKeyFile) {
      const extra = await loadRoot(resolve(this.options.rootKeyFile));
      if (!roots.some((r) => r.kid === extra.kid)) roots.push(extra);
    }
    const versions = setNames
      .map((n) => KEYSET_FILE.exec(n)?.[1])
      .filter((v): v is string => v !== undefined)
      .map(Number)
      .filter((v) => setNames.includes(`v${v}.jws`))
      .sort((a, b) => a - b);
    this.keys = keys;
    this.roots = roots;
    this.keySetVersions = versions;
    this.latestKeySet = versions.length ? this.readKeySet(versions[versions.length - 1]) : undefined;
    this.seen = stamp;
    const version = this.latestKeySet?.keySet.version;
    if (version === undefined || (this.announcedVersion !== undefined && version <= this.announcedVersion)) return;
    const first = this.announcedVersion === undefined;
    this.announcedVersion = version;
    if (!first) for (const listener of [...this.keySetListeners]) listener('another-process');
  }
}

async function newEd25519(): Promise<{ privateJwk: JWK; kid: string }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  return { privateJwk: await exportJWK(privateKey), kid };
}

/** Reads a root private key file (as written by the store, or any Ed25519 private JWK with or without a wrapper). */
export async function loadRoot(path: string): Promise<RootKey> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the root key ${path}: ${(err as Error).message}`);
  }
  const jwk = ((parsed as { privateJwk?: JWK }).privateJwk ?? parsed) as JWK;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || typeof jwk.d !== 'string') {
    throw new Error(`${path} is not an Ed25519 private key`);
  }
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x });
  return {
    kid,
    publicJwk: { kid, kty: 'OKP', crv: 'Ed25519', x: jwk.x },
    privateKey: await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d }, 'EdDSA'),
    file: path,
  };
}

/** Writes a file that readers see whole or not at all (temp file, then rename). */
function writeAtomic(path: string, data: string | Buffer, mode: number, exclusive = false): void {
  if (exclusive && existsSync(path)) throw new Error(`${path} exists`);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode, flag: 'w' });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
