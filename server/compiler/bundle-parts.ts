import type { Bundle } from '../../policy-schemas/types.gen.ts';
import type { BundleMember } from '../../runtime/bundle-format.ts';
import { sha256Canonical, sha256Hex } from '../../runtime/sha256.ts';

/** Hashes of what a bundle holds from the policy, the grants and the inventory: two bundles differ in the parts whose hashes differ. */
export type BundleParts = { policy: string; grants: string; inventory: string };

/** A bundle's parts (canonicalising a catalog of thousands of tools takes tens of milliseconds). */
export function bundleParts(bundle: Pick<Bundle, 'policy' | 'catalog'>): BundleParts {
  return partsOf(bundle.policy, sha256Canonical(bundle.catalog));
}

/**
 * The parts of a compiled bundle from its serialised members: only the (small) policy member is
 * parsed, and the catalog is hashed as the compiler wrote it, so thousands of tools cost a hash of
 * their text, no parse and no second canonicalisation. Undefined without those members.
 */
export function compiledBundleParts(members: readonly BundleMember[]): BundleParts | undefined {
  const policy = memberValueText(members, 'policy');
  const catalog = memberValueText(members, 'catalog');
  if (policy === undefined || catalog === undefined) return undefined;
  return partsOf(JSON.parse(policy) as Bundle['policy'], `sha256:${sha256Hex(catalog)}`);
}

function partsOf(bundlePolicy: Bundle['policy'], inventory: string): BundleParts {
  const { grants, ...policy } = bundlePolicy;
  // A v2 bundle leaves empty collections out: no grants hashes as none.
  return { policy: sha256Canonical(policy), grants: sha256Canonical(grants ?? []), inventory };
}

/** The canonical text of a top-level member's value. */
function memberValueText(members: readonly BundleMember[], key: string): string | undefined {
  const prefix = `${JSON.stringify(key)}:`;
  const member = members.find((m) => m.key === key);
  return member?.text.startsWith(prefix) ? member.text.slice(prefix.length) : undefined;
}
