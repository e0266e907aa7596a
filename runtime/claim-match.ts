// How an identity provider's claims are matched against a configured `{ claim, value }`: the one
// rule behind the server's single sign-on mappings and the gateway's OAuth client mappings, kept
// here (pure, no dependencies) so that both judge a token's claims alike.

/** A configured match: the claim's name and the value it must equal or, for a list claim, contain. */
export type ClaimMatch = { claim: string; value: string };

/**
 * The claims that count. Anyone can type an address into an account at many providers, so
 * `email` counts only when the provider vouches for it with `email_verified: true` (the boolean:
 * a string "true" or an absent flag is not a provider's word). Without it, the address is
 * dropped: it matches no mapping and is never written beside the person in the audit trail.
 */
export function countedClaims(claims: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(claims, 'email') || claims.email_verified === true) return claims;
  const { email: _unverified, ...rest } = claims;
  return rest;
}

/**
 * True when the claim equals the mapping's value, or (a list claim such as `groups`) contains it.
 * Exact and case-sensitive; strings, numbers and booleans compare by their text; objects never match.
 */
export function claimMatches(claims: Record<string, unknown>, mapping: ClaimMatch): boolean {
  if (!Object.hasOwn(claims, mapping.claim)) return false;
  const v = claims[mapping.claim];
  const same = (x: unknown) => (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') && String(x) === mapping.value;
  return Array.isArray(v) ? v.some(same) : same(v);
}
