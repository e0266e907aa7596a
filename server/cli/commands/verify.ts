import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyBundle } from '../../../runtime/verify-bundle.ts';
import type { TrustedKeys } from '../../../runtime/verify-bundle.ts';
import { verifyKeySet } from '../../../runtime/verify-key-set.ts';
import type { RootKey } from '../../../runtime/verify-key-set.ts';
import { type Output, consoleOutput } from '../output.ts';
import { readJsonFile } from '../read-json-file.ts';

const USAGE = [
  'usage: toolgate verify --bundle FILE --signature FILE --root FILE --keyset FILE [--keyset-signature FILE] [--tenant T] [--min-version N] [--min-keyset-version N]',
  '       toolgate verify --bundle FILE --signature FILE --jwks FILE [--tenant T] [--min-version N]',
  '--root: the root public key(s) (a JWK or a JWKS); --keyset: toolgate-keyset.json, its JWS in --keyset-signature (default: the same path ending .jws)',
].join('\n');

/**
 * `toolgate verify`: the checks a runtime makes before accepting a bundle (signature under a
 * trusted kid, format, tenant, rollback, expiry, revision, conformance vectors). Exit 0 when
 * accepted; exit 1 naming the reason code otherwise. The tenant defaults to the one the bundle names.
 */
export async function run(args: string[], out: Output = consoleOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        bundle: { type: 'string' },
        signature: { type: 'string' },
        jwks: { type: 'string' },
        root: { type: 'string' },
        keyset: { type: 'string' },
        'keyset-signature': { type: 'string' },
        tenant: { type: 'string' },
        'min-version': { type: 'string' },
        'min-keyset-version': { type: 'string' },
      },
    }));
  } catch (err) {
    out.error(`toolgate verify: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const byRoot = values.root !== undefined || values.keyset !== undefined;
  if (!values.bundle || !values.signature || (byRoot ? !values.root || !values.keyset || values.jwks : !values.jwks)) {
    out.error(USAGE);
    return 2;
  }
  const minVersion = values['min-version'] === undefined ? undefined : Number(values['min-version']);
  const minKeySetVersion = values['min-keyset-version'] === undefined ? undefined : Number(values['min-keyset-version']);
  if ((minVersion !== undefined && !Number.isSafeInteger(minVersion)) || (minKeySetVersion !== undefined && !Number.isSafeInteger(minKeySetVersion))) {
    out.error('toolgate verify: --min-version and --min-keyset-version take a whole number');
    return 2;
  }
  let bytes: Buffer;
  let signature: string;
  let jwks: TrustedKeys;
  try {
    bytes = readFileSync(values.bundle);
    signature = readFileSync(values.signature, 'utf8').trim();
    jwks = await readTrustedKeys(
      { root: values.root, keyset: values.keyset, keysetSignature: values['keyset-signature'], jwks: values.jwks, minKeySetVersion },
      out.log,
    );
  } catch (err) {
    out.error(`toolgate verify: ${(err as Error).message}`);
    return 1;
  }
  const tenant = values.tenant ?? namedTenant(bytes);
  const r = await verifyBundle(bytes, signature, { trustedKeys: jwks, tenant: tenant ?? '', highestVersionSeen: minVersion });
  if (!r.ok) {
    out.error(`refused: ${r.code}: ${r.message}`);
    return 1;
  }
  out.log(`ok: tenant ${r.bundle.tenant}, version ${r.bundle.version}, ${r.bundle.revision}, expires ${r.bundle.expiresAt}`);
  return 0;
}

/**
 * The signing keys to trust: the keys of a key set verified against root keys (`root` + `keyset`),
 * or a fixed JWKS. Throws with the refusal's reason code.
 */
export async function readTrustedKeys(
  o: { root?: string; keyset?: string; keysetSignature?: string; jwks?: string; minKeySetVersion?: number },
  log: (line: string) => void = () => undefined,
): Promise<TrustedKeys> {
  if (o.root || o.keyset) {
    if (!o.root || !o.keyset) throw new Error('--root and --keyset go together');
    const roots = readRoots(o.root);
    const keySetSig = readFileSync(o.keysetSignature ?? `${o.keyset.replace(/\.json$/, '')}.jws`, 'utf8').trim();
    const ks = await verifyKeySet(readFileSync(o.keyset), keySetSig, { trustedRoots: roots, highestVersionSeen: o.minKeySetVersion });
    if (!ks.ok) throw new Error(`refused: ${ks.code}: ${ks.message}`);
    log(`key set v${ks.keySet.version} verified against root ${ks.keySet.roots.map((r) => r.kid).join(', ')}, expires ${ks.keySet.expiresAt}`);
    return ks.trustedKeys;
  }
  const jwks = readJsonFile(o.jwks!) as TrustedKeys;
  if (!Array.isArray(jwks?.keys)) throw new Error(`${o.jwks} has no "keys" array`);
  return jwks;
}

/** Root public keys from a file: a JWK, a JWKS (`{ keys }`), or a key set's `roots`. Private parts are ignored. */
function readRoots(file: string): RootKey[] {
  const doc = readJsonFile(file) as { keys?: unknown; roots?: unknown; privateJwk?: unknown };
  const list = (Array.isArray(doc.keys) ? doc.keys : Array.isArray(doc.roots) ? doc.roots : [doc.privateJwk ?? doc]) as RootKey[];
  const roots = list
    .filter((k) => k && k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string')
    .map((k) => ({ kty: k.kty, crv: k.crv, x: k.x, ...(k.kid ? { kid: k.kid } : {}) }));
  if (roots.length === 0) throw new Error(`${file} holds no Ed25519 root public key`);
  return roots;
}

// Only a default for --tenant: verifyBundle believes nothing in the bytes before the signature checks.
function namedTenant(bytes: Buffer): string | undefined {
  try {
    const t = (JSON.parse(bytes.toString('utf8')) as { tenant?: unknown }).tenant;
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}
