import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';

/** One Ed25519 signing key as kept on disk (`<kid>.json`, mode 0600). */
type KeyFile = { kid: string; seq: number; createdAt: string; privateJwk: JWK };

export type SigningKey = {
  readonly kid: string;
  readonly seq: number;
  readonly createdAt: string;
  readonly publicJwk: JWK;
  readonly privateKey: CryptoKey | Uint8Array;
};

export type KeyInfo = { kid: string; createdAt: string; signing: boolean };

/** The keys directory: `TOOLGATE_KEYS_DIR`, default `./data/keys`. */
export function defaultKeysDir(): string {
  return resolve(process.env.TOOLGATE_KEYS_DIR ?? './data/keys');
}

/**
 * Ed25519 bundle-signing keys in a directory. The newest key signs; every key stays in the JWKS.
 * The directory is re-read whenever it changes, so `toolgate keys rotate` in another process takes
 * effect in a running server without a restart. The first key is created on first use.
 */
export class KeyStore {
  private keys: SigningKey[] = [];
  private seen = '';

  constructor(readonly dir: string = defaultKeysDir()) {}

  /** The key that signs now (creating the first one if there is none). */
  async signer(): Promise<SigningKey> {
    await this.refresh();
    if (this.keys.length === 0) {
      await this.createKey();
      await this.refresh(true);
    }
    return this.keys[this.keys.length - 1];
  }

  /** The public keys, for `GET /.well-known/jwks.json`. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.signer();
    return { keys: this.keys.map((k) => ({ ...k.publicJwk })).sort((a, b) => ((a.kid ?? '') < (b.kid ?? '') ? -1 : 1)) };
  }

  /** Every key, oldest first, marking the one that signs (creating the first unless `create` is false). */
  async list(opts: { create?: boolean } = {}): Promise<KeyInfo[]> {
    if (opts.create === false) await this.refresh();
    else await this.signer();
    const current = this.keys[this.keys.length - 1]?.kid;
    return this.keys.map((k) => ({ kid: k.kid, createdAt: k.createdAt, signing: k.kid === current }));
  }

  /** Creates a new key that signs from now on; older keys stay published. */
  async rotate(): Promise<SigningKey> {
    await this.refresh();
    const kid = await this.createKey();
    await this.refresh(true);
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`the new key ${kid} did not load`);
    return key;
  }

  /**
   * Takes a key out of the JWKS for good: runtimes stop trusting what it signed. The key that signs
   * now cannot be retired (rotate first). Its file is kept as `<kid>.json.retired`, never loaded.
   */
  async retire(kid: string): Promise<void> {
    await this.refresh(true);
    const key = this.keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`no key ${kid} (see toolgate keys list)`);
    if (this.keys[this.keys.length - 1].kid === kid) throw new Error(`${kid} signs now; rotate to a new key before retiring it`);
    renameSync(join(this.dir, `${kid}.json`), join(this.dir, `${kid}.json.retired`));
    await this.refresh(true);
  }

  private async createKey(): Promise<string> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(privateKey);
    const seq = this.keys.reduce((m, k) => Math.max(m, k.seq), 0) + 1;
    const file: KeyFile = { kid, seq, createdAt: new Date().toISOString(), privateJwk: { ...privateJwk, kid, alg: 'EdDSA' } };
    const path = join(this.dir, `${kid}.json`);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
    return kid;
  }

  private async refresh(force = false): Promise<void> {
    let names: string[];
    let stamp: string;
    try {
      const st = statSync(this.dir);
      names = readdirSync(this.dir).filter((f) => f.endsWith('.json')).sort();
      stamp = `${st.mtimeMs}:${names.join(',')}`;
    } catch {
      this.keys = [];
      this.seen = '';
      return;
    }
    if (!force && stamp === this.seen) return;
    const keys: SigningKey[] = [];
    for (const name of names) {
      const file = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as KeyFile;
      const { d: _d, ...pub } = file.privateJwk;
      keys.push({
        kid: file.kid,
        seq: file.seq,
        createdAt: file.createdAt,
        publicJwk: { kty: pub.kty, crv: pub.crv, x: pub.x, kid: file.kid, alg: 'EdDSA', use: 'sig' },
        privateKey: await importJWK(file.privateJwk, 'EdDSA'),
      });
    }
    keys.sort((a, b) => a.seq - b.seq || (a.kid < b.kid ? -1 : 1));
    this.keys = keys;
    this.seen = stamp;
  }
}

const stores = new Map<string, KeyStore>();

/** One KeyStore per directory in this process (the server and CLI share it). */
export function sharedKeyStore(dir: string = defaultKeysDir()): KeyStore {
  const abs = resolve(dir);
  let s = stores.get(abs);
  if (!s) {
    s = new KeyStore(abs);
    stores.set(abs, s);
  }
  return s;
}
