import * as oidc from 'openid-client';

/** Operator settings for single sign-on (`TOOLGATE_OIDC_*`, `TOOLGATE_PUBLIC_URL`). */
export type SsoSettings = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Where browsers reach this server; the redirect URL is `<publicUrl>/v1/session/sso/callback`. */
  publicUrl: string;
  /** Scopes asked for (default `openid email profile`). */
  scopes?: string;
  /** How often a person's mappings are judged again while their session is used (default 30 s). */
  recheckSeconds?: number;
};

export const CALLBACK_PATH = '/v1/session/sso/callback';

export function redirectUrlOf(s: SsoSettings): string {
  return `${s.publicUrl.replace(/\/+$/, '')}${CALLBACK_PATH}`;
}

/** Why talking to the provider failed, in words a person signing in can act on. */
export class SsoFailure extends Error {
  constructor(
    readonly kind: 'unreachable' | 'refused' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/** What a step of the sign-in gives, or why it could not. */
export type SsoResult<T> = { ok: true; value: T } | { ok: false; failure: SsoFailure };

async function attempt<T>(fn: () => Promise<T>): Promise<SsoResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof SsoFailure) return { ok: false, failure: err };
    throw err;
  }
}

const DISCOVERY_TIMEOUT_SECONDS = 5;
// A discovered configuration is reused; a failed discovery is forgotten so the next sign-in retries.
const discovered = new WeakMap<SsoSettings, Promise<oidc.Configuration>>();

/** Plain http is accepted only for a provider on this machine (development and tests). */
function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** The provider's configuration from its discovery document (cached per settings object). */
export function providerConfig(s: SsoSettings): Promise<oidc.Configuration> {
  let p = discovered.get(s);
  if (!p) {
    const issuer = new URL(s.issuer);
    p = oidc
      .discovery(issuer, s.clientId, { redirect_uris: [redirectUrlOf(s)], response_types: ['code'] }, oidc.ClientSecretBasic(s.clientSecret), {
        timeout: DISCOVERY_TIMEOUT_SECONDS,
        // openid-client checks an ID token's signature only when asked (it leans on TLS for
        // tokens from the token endpoint); it is checked here against the provider's JWKS.
        execute: [oidc.enableNonRepudiationChecks, ...(isLoopbackHttp(issuer) ? [oidc.allowInsecureRequests] : [])],
      })
      .then((config) => {
        config.timeout = DISCOVERY_TIMEOUT_SECONDS;
        return config;
      })
      .catch((err: unknown) => {
        discovered.delete(s);
        throw classify(err, 'discovery');
      });
    discovered.set(s, p);
  }
  return p;
}

export type PendingSignIn = { state: string; nonce: string; codeVerifier: string; url: string };

/** A new authorization request: code flow, PKCE (S256), state and nonce. */
export function beginSignIn(s: SsoSettings): Promise<SsoResult<PendingSignIn>> {
  return attempt(async () => {
    const config = await providerConfig(s);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUrlOf(s),
      scope: s.scopes ?? 'openid email profile',
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { state, nonce, codeVerifier, url: url.href };
  });
}

/**
 * Redeems the code and validates the ID token (signature against the provider's JWKS, issuer,
 * audience, expiry, nonce); returns its claims, completed by the userinfo endpoint when the
 * provider has one (many put `groups` only there). The ID token's own claims win.
 */
export function finishSignIn(
  s: SsoSettings,
  callbackQuery: URLSearchParams,
  expected: { state: string; nonce: string; codeVerifier: string },
): Promise<SsoResult<Record<string, unknown>>> {
  return attempt(async () => {
    const config = await providerConfig(s);
    const current = new URL(redirectUrlOf(s));
    current.search = callbackQuery.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw classify(err, 'token');
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new SsoFailure('invalid', 'The identity provider sent no ID token');
    let userinfo: Record<string, unknown> = {};
    if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      } catch (err) {
        throw classify(err, 'userinfo');
      }
    }
    return withEmailPair(userinfo, idClaims);
  });
}

/**
 * The ID token's claims completed by userinfo's, the ID token winning. `email` and
 * `email_verified` are taken as a pair from one source: a verified flag from userinfo must not
 * vouch for a different address the ID token carries.
 */
export function withEmailPair(userinfo: Record<string, unknown>, idClaims: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...userinfo, ...idClaims };
  const source = Object.hasOwn(idClaims, 'email') ? idClaims : userinfo;
  delete merged.email_verified;
  if (Object.hasOwn(source, 'email_verified')) merged.email_verified = source.email_verified;
  return merged;
}

/** The provider's end-session URL for signing out there too, when it has one. */
export async function endSessionUrl(s: SsoSettings): Promise<string | null> {
  try {
    const config = await providerConfig(s);
    if (!config.serverMetadata().end_session_endpoint) return null;
    return oidc.buildEndSessionUrl(config, { client_id: s.clientId }).href;
  } catch {
    // Signing out here must not depend on reaching the provider.
    return null;
  }
}

function classify(err: unknown, step: 'discovery' | 'token' | 'userinfo'): SsoFailure {
  if (err instanceof SsoFailure) return err;
  if (isNetworkFailure(err)) {
    return new SsoFailure(
      'unreachable',
      step === 'discovery'
        ? 'The identity provider could not be reached to read its configuration'
        : 'The identity provider could not be reached to finish the sign-in',
    );
  }
  if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError) {
    const description = err.error_description ? `: ${err.error_description}` : '';
    return new SsoFailure('refused', `The identity provider refused the sign-in (${err.error}${description})`);
  }
  // No signature (alg none), one by an algorithm not expected (HS256 keyed by the client secret), a
  // kid the provider's JWKS does not list, or one that does not verify: each is a token not signed
  // by the provider's published keys, and openid-client words each differently.
  if (messagesAlong(err).some((m) => SIGNATURE_FAILURE.test(m))) {
    return new SsoFailure(
      'invalid',
      "The identity provider's answer failed validation: the ID token's signature does not verify against the identity provider's published keys",
    );
  }
  const claim = failedClaim(err);
  const known = typeof claim === 'string' ? CLAIM_FAILURES[claim] : undefined;
  if (known) return new SsoFailure('invalid', `The identity provider's answer failed validation: ${known}`);
  const message = err instanceof Error ? err.message : String(err);
  return new SsoFailure(
    'invalid',
    step === 'discovery' ? `The identity provider's configuration is not usable: ${message}` : `The identity provider's answer failed validation: ${message}`,
  );
}

const SIGNATURE_FAILURE = /JWT signature verification failed|no applicable keys? found|unsupported JWS algorithm|unexpected JWT "alg" header parameter/;

const CLAIM_FAILURES: Record<string, string> = {
  nonce: "the ID token's nonce is not the one this sign-in sent (claim nonce)",
  aud: 'the ID token was issued for another application (claim aud)',
  azp: 'the ID token was issued for another application (claim azp)',
  exp: 'the ID token has expired (claim exp)',
  iat: 'the ID token was issued at an impossible time (claim iat)',
  nbf: 'the ID token is not valid yet (claim nbf)',
  iss: 'the ID token was issued by another provider (claim iss)',
};

/** The ID-token claim a validation error is about, found along the error's causes. */
function failedClaim(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    const claim = (e as { claim?: unknown }).claim;
    if (typeof claim === 'string') return claim;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The messages of an error and its causes (openid-client wraps what oauth4webapi found). */
function messagesAlong(err: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) out.push(e.message);
  return out;
}

function isNetworkFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|UND_ERR_\w+)$/.test(code)) return true;
  }
  return false;
}
