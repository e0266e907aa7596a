import type { GatewayConfig } from '../policy-schemas/types.gen.ts';
import type { ConfigProblem, ResolvedClient } from './config.ts';

/** The gateway as an OAuth resource server, its configuration checked and its client names resolved. */
export type ResolvedOAuth = {
  /** The resource identifier tokens must be issued for (RFC 8707), as configured. */
  readonly resource: string;
  readonly issuers: ReadonlyArray<{ readonly issuer: string; readonly audience: string; readonly jwksUri: string | null }>;
  /** Tried in the configured order; the first match decides. `issuer` null: any configured issuer's tokens (only when one is configured). */
  readonly mappings: ReadonlyArray<{ readonly issuer: string | null; readonly claim: string; readonly value: string; readonly client: ResolvedClient }>;
};

type OAuthSection = NonNullable<GatewayConfig['auth']>['oauth'];

/**
 * Cross-checks `auth.oauth` against the rest of a schema-valid configuration: a resource URL
 * without query or fragment, distinct issuers, every mapping naming a `clients` entry and, when
 * several issuers are configured, the issuer whose tokens it takes (a claim's value is only its
 * issuer's to give: issuer B may name a client as issuer A does), and an HTTP listener (a stdio caller is its one configured client). Problems name their pointer only: the
 * values may have come from the environment.
 */
export function resolveOAuth(
  oauth: OAuthSection | undefined,
  clients: readonly ResolvedClient[],
  listensOnHttp: boolean,
  problems: ConfigProblem[],
): ResolvedOAuth | null {
  if (!oauth) return null;
  const at = '/auth/oauth';
  if (!listensOnHttp) problems.push({ pointer: at, message: 'applies to an HTTP listener only (over stdio the one configured client is the caller)' });
  if (!isHttpUrl(oauth.resource)) problems.push({ pointer: `${at}/resource`, message: 'is not an http(s) URL' });
  else if (/[?#]/.test(oauth.resource)) problems.push({ pointer: `${at}/resource`, message: 'may carry no query or fragment (RFC 8707)' });

  const seen = new Map<string, number>();
  const issuers = oauth.issuers.map((entry, i) => {
    if (!isHttpUrl(entry.issuer)) problems.push({ pointer: `${at}/issuers/${i}/issuer`, message: 'is not an http(s) URL' });
    const before = seen.get(entry.issuer);
    if (before !== undefined) problems.push({ pointer: `${at}/issuers/${i}/issuer`, message: `repeats ${at}/issuers/${before}/issuer` });
    else seen.set(entry.issuer, i);
    if (entry.jwksUri !== undefined && !isHttpUrl(entry.jwksUri)) problems.push({ pointer: `${at}/issuers/${i}/jwksUri`, message: 'is not an http(s) URL' });
    return { issuer: entry.issuer, audience: entry.audience ?? oauth.resource, jwksUri: entry.jwksUri ?? null };
  });

  const byName = new Map(clients.map((c) => [c.name, c]));
  const mappings: Array<ResolvedOAuth['mappings'][number]> = [];
  oauth.clients.forEach((m, i) => {
    const client = byName.get(m.client);
    if (!client) problems.push({ pointer: `${at}/clients/${i}/client`, message: 'names no entry of /clients' });
    if (m.issuer !== undefined && !seen.has(m.issuer)) {
      problems.push({ pointer: `${at}/clients/${i}/issuer`, message: `names no entry of ${at}/issuers` });
    } else if (m.issuer === undefined && seen.size > 1) {
      problems.push({
        pointer: `${at}/clients/${i}/issuer`,
        message: `is required when several issuers are configured: without it a token of any of them with this claim would be this client`,
      });
    }
    if (client) mappings.push({ issuer: m.issuer ?? null, claim: m.claim, value: m.value, client });
  });
  return { resource: oauth.resource, issuers, mappings };
}

/** The names of the clients some OAuth mapping reaches: such a client needs no static key. */
export function clientsReachedByOAuth(oauth: OAuthSection | undefined): Set<string> {
  return new Set((oauth?.clients ?? []).map((m) => m.client));
}

function isHttpUrl(s: string): boolean {
  return URL.canParse(s) && /^https?:$/.test(new URL(s).protocol);
}
