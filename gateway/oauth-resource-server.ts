import { timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type JWTVerifyGetKey, createRemoteJWKSet, customFetch, decodeJwt, errors, jwtVerify } from 'jose';
import { claimMatches, countedClaims } from '../runtime/claim-match.ts';
import type { Authentication } from './client-keys.ts';
import type { ResolvedClient } from './config.ts';
import type { ResolvedOAuth } from './oauth-config.ts';

/**
 * What a bearer token comes to: as for a key (a client, or `refused` for a token that names no
 * client, which counts as a failed sign-in), or `unavailable` when an issuer's keys could not be
 * fetched, which is no fault of the client's and is not held against its address.
 */
export type TokenAuthentication = Authentication | { kind: 'unavailable' };

/**
 * Signature algorithms a token may use: asymmetric only. `none` is never taken, nor HS*: a
 * shared-secret algorithm checked against a public key set would let anyone who holds the public
 * key mint tokens.
 */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** How far `exp` and `nbf` may be off between the gateway's clock and the issuer's. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** An issuer whose metadata could not be read is not asked again for this long (each token would otherwise make a request). */
const DISCOVERY_RETRY_MS = 30_000;
/** Longest wait for an issuer's metadata or key set. */
const FETCH_TIMEOUT_MS = 5_000;
/** Largest metadata document or key set read. */
const MAX_METADATA_BYTES = 256 * 1024;
const WELL_KNOWN = '/.well-known/oauth-protected-resource';

type Issuer = ResolvedOAuth['issuers'][number];
type KeySource = { keys: JWTVerifyGetKey } | { failedAt: number };

export type OAuthResourceServerOptions = {
  /** The listener's MCP path: the metadata is also served suffixed with it, where a client behind no proxy looks. */
  listenPath?: string;
  fetch?: typeof fetch;
  now?: () => number;
};

/**
 * The gateway as an OAuth 2.1 resource server, as the MCP authorization spec asks of an HTTP
 * server that does authorization: it publishes its protected resource metadata (RFC 9728), names
 * it in every 401 challenge, and takes JWT access tokens only from the configured issuers, checked
 * against each issuer's published keys (cached; fetched again, at most every 30 s, when a token
 * names a key not yet seen), for its own resource (RFC 8707 audience), unexpired, and mapped by
 * their claims to a configured client. The token itself goes no further than this check.
 */
export class OAuthResourceServer {
  private readonly byIssuer: Map<string, Issuer>;
  private readonly sources = new Map<string, Promise<KeySource>>();
  private readonly metadataPaths: Set<string>;
  private readonly metadataText: string;
  /** Where the metadata is, as a 401 challenge names it: the resource URL with the well-known path inserted (RFC 9728 §3.1). */
  readonly metadataUrl: string;
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  // The token each kept-alive connection last presented, its client and when it stops being good:
  // a client sends the same token on every request of a connection, and a signature check per
  // request would cost more than the call's policy work.
  private readonly byConnection = new WeakMap<object, { header: Buffer; client: ResolvedClient; until: number }>();

  constructor(
    private readonly config: ResolvedOAuth,
    options: OAuthResourceServerOptions = {},
  ) {
    this.byIssuer = new Map(config.issuers.map((i) => [i.issuer, i]));
    this.fetch = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    const resource = new URL(config.resource);
    const suffix = resource.pathname === '/' ? '' : resource.pathname;
    this.metadataUrl = `${resource.origin}${WELL_KNOWN}${suffix}`;
    this.metadataPaths = new Set([WELL_KNOWN, `${WELL_KNOWN}${suffix}`]);
    if (options.listenPath && options.listenPath !== '/') this.metadataPaths.add(`${WELL_KNOWN}${options.listenPath}`);
    this.metadataText = JSON.stringify({
      resource: config.resource,
      authorization_servers: config.issuers.map((i) => i.issuer),
      bearer_methods_supported: ['header'],
      resource_name: 'Toolgate gateway',
    });
  }

  /** Whether a GET of `path` is for the protected resource metadata. */
  servesMetadataAt(path: string): boolean {
    return this.metadataPaths.has(path);
  }

  /** The protected resource metadata document (RFC 9728 §2): public, so any origin may read it. */
  answerMetadata(res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(this.metadataText),
      'cache-control': 'public, max-age=300',
      'access-control-allow-origin': '*',
    });
    res.end(this.metadataText);
  }

  /**
   * The `WWW-Authenticate` value of a 401 (RFC 6750 §3, RFC 9728 §5.1): it points at the metadata,
   * and says `invalid_token` when a credential was presented and refused.
   */
  challenge(presented: boolean): string {
    const error = presented ? 'error="invalid_token", error_description="the credential is not a known key or a valid access token for this resource", ' : '';
    return `Bearer ${error}resource_metadata="${this.metadataUrl}"`;
  }

  /** Whether a bearer credential has the shape of a JWT (three base64url parts): only those are verified as tokens. */
  static tokenOf(header: string | undefined): string | null {
    const m = header ? /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)\s*$/i.exec(header) : null;
    return m && m[1].length <= 16_384 ? m[1] : null;
  }

  /** The client an `Authorization: Bearer <JWT>` header is, remembered for the connection while the same token is good. */
  async identify(connection: object, header: string | undefined): Promise<TokenAuthentication> {
    const token = OAuthResourceServer.tokenOf(header);
    if (token === null || header === undefined) return { kind: 'refused' };
    const known = this.byConnection.get(connection);
    if (known && this.now() < known.until) {
      const presented = Buffer.from(header, 'utf8');
      if (presented.length === known.header.length && timingSafeEqual(presented, known.header)) return { kind: 'client', client: known.client };
    }
    this.byConnection.delete(connection);
    const found = await this.verify(token);
    if (found.kind === 'client') this.byConnection.set(connection, { header: Buffer.from(header, 'utf8'), client: found.client, until: found.until });
    return found.kind === 'client' ? { kind: 'client', client: found.client } : found;
  }

  /** Verifies a token and maps it to a client; `until` is when it stops being good (ms). */
  async verify(token: string): Promise<{ kind: 'client'; client: ResolvedClient; until: number } | { kind: 'refused' } | { kind: 'unavailable' }> {
    let iss: unknown;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      return { kind: 'refused' };
    }
    // The issuer is picked by exact match before anything is fetched: a token cannot make the gateway fetch from anywhere else.
    const issuer = typeof iss === 'string' ? this.byIssuer.get(iss) : undefined;
    if (!issuer) return { kind: 'refused' };
    const source = await this.keySource(issuer);
    if (!('keys' in source)) return { kind: 'unavailable' };
    let claims: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, source.keys, {
        issuer: issuer.issuer,
        audience: issuer.audience,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.now()),
        // An access token without an expiry would be good forever.
        requiredClaims: ['exp'],
      });
      claims = verified.payload as Record<string, unknown>;
    } catch (err) {
      return keysUnreachable(err) ? { kind: 'unavailable' } : { kind: 'refused' };
    }
    const counted = countedClaims(claims);
    // A mapping that names its issuer takes that issuer's tokens only: another issuer may hand out the same client id.
    const mapping = this.config.mappings.find((m) => (m.issuer === null || m.issuer === issuer.issuer) && claimMatches(counted, m));
    if (!mapping) return { kind: 'refused' };
    return { kind: 'client', client: mapping.client, until: (claims.exp as number) * 1000 };
  }

  /** The issuer's key set: from its configured jwksUri, or from its metadata's `jwks_uri`; a failed discovery is retried after a pause. */
  private async keySource(issuer: Issuer): Promise<KeySource> {
    const cached = this.sources.get(issuer.issuer);
    if (cached) {
      const s = await cached;
      if ('keys' in s || this.now() - s.failedAt < DISCOVERY_RETRY_MS) return s;
    }
    const next = this.discover(issuer).then(
      (uri): KeySource => ({
        keys: createRemoteJWKSet(new URL(uri), {
          timeoutDuration: FETCH_TIMEOUT_MS,
          cooldownDuration: 30_000,
          cacheMaxAge: 600_000,
          // The key set is read within the same bound as the metadata: an issuer cannot fill the gateway's memory with it.
          [customFetch]: (url: string, init: RequestInit) => this.fetchKeySet(url, init),
        }),
      }),
      (): KeySource => ({ failedAt: this.now() }),
    );
    this.sources.set(issuer.issuer, next);
    return next;
  }

  /** A key set's response, its body read within the bound; past it, answered as a failed fetch (jose's error for other than 200). */
  private async fetchKeySet(url: string, init: RequestInit): Promise<Response> {
    const res = await this.fetch(url, init);
    if (res.status !== 200) return res;
    const text = await bodyWithin(res, MAX_METADATA_BYTES);
    return text === null ? new Response(null, { status: 502 }) : new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
  }

  /**
   * The issuer's `jwks_uri`: configured, or read from its OpenID Connect discovery document, then
   * from its RFC 8414 metadata. The document must name the same issuer (OpenID Connect Discovery
   * §4.3, RFC 8414 §3.3), or keys from elsewhere could be passed off as the issuer's.
   */
  private async discover(issuer: Issuer): Promise<string> {
    if (issuer.jwksUri) return issuer.jwksUri;
    const url = new URL(issuer.issuer);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    const candidates = [`${url.origin}${path}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
    for (const candidate of candidates) {
      try {
        const res = await this.fetch(candidate, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
        if (res.status !== 200) continue;
        const text = await bodyWithin(res, MAX_METADATA_BYTES);
        if (text === null) continue;
        const doc = JSON.parse(text) as { issuer?: unknown; jwks_uri?: unknown };
        if (doc.issuer !== issuer.issuer || typeof doc.jwks_uri !== 'string') continue;
        if (!URL.canParse(doc.jwks_uri)) continue;
        // An https issuer's keys come over https too: a plain-http key set could be swapped on the way.
        const keysProtocol = new URL(doc.jwks_uri).protocol;
        if (keysProtocol !== 'https:' && (keysProtocol !== 'http:' || url.protocol !== 'http:')) continue;
        return doc.jwks_uri;
      } catch {
        // Unreachable, not JSON: try the other form.
      }
    }
    throw new Error('the issuer publishes no usable metadata');
  }
}

/**
 * A response's text, or null past `max` bytes: read piece by piece and given up on at the bound,
 * so an issuer that answers without end (or with a huge document) cannot fill the gateway's memory.
 */
async function bodyWithin(res: Response, max: number): Promise<string | null> {
  if (Number(res.headers.get('content-length') ?? 0) > max) {
    await res.body?.cancel();
    return null;
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > max) {
      await res.body.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether a verification failed because the key set could not be fetched (not because of the token). */
function keysUnreachable(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  // jose reports a key set answered with other than 200, or not JSON, as its generic error; a network failure is not its error at all.
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true;
}
