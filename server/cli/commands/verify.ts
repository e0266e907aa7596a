import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyBundle } from '../../../runtime/verify-bundle.ts';
import type { TrustedKeys } from '../../../runtime/verify-bundle.ts';
import { readJsonFile } from '../read-json-file.ts';

const USAGE = 'usage: toolgate verify --bundle FILE --signature FILE --jwks FILE [--tenant T] [--min-version N]';

type Output = { log: (line: string) => void; error: (line: string) => void };

/**
 * `toolgate verify`: the checks a runtime makes before accepting a bundle (signature under a
 * trusted kid, format, tenant, rollback, expiry, revision, conformance vectors). Exit 0 when
 * accepted; exit 1 naming the reason code otherwise. The tenant defaults to the one the bundle names.
 */
export async function run(args: string[], out: Output = { log: (l) => console.log(l), error: (l) => console.error(l) }): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { bundle: { type: 'string' }, signature: { type: 'string' }, jwks: { type: 'string' }, tenant: { type: 'string' }, 'min-version': { type: 'string' } },
    }));
  } catch (err) {
    out.error(`toolgate verify: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.bundle || !values.signature || !values.jwks) {
    out.error(USAGE);
    return 2;
  }
  const minVersion = values['min-version'] === undefined ? undefined : Number(values['min-version']);
  if (minVersion !== undefined && !Number.isSafeInteger(minVersion)) {
    out.error('toolgate verify: --min-version must be a whole number');
    return 2;
  }
  let bytes: Buffer;
  let signature: string;
  let jwks: TrustedKeys;
  try {
    bytes = readFileSync(values.bundle);
    signature = readFileSync(values.signature, 'utf8').trim();
    jwks = readJsonFile(values.jwks) as TrustedKeys;
    if (!Array.isArray(jwks?.keys)) throw new Error(`${values.jwks} has no "keys" array`);
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

// Only a default for --tenant: verifyBundle believes nothing in the bytes before the signature checks.
function namedTenant(bytes: Buffer): string | undefined {
  try {
    const t = (JSON.parse(bytes.toString('utf8')) as { tenant?: unknown }).tenant;
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}
