// A real OAuth authorization server (oidc-provider) on 127.0.0.1 issuing JWT access tokens for
// resource indicators (RFC 8707), for the gateway's resource server tests. Its clients use the
// client credentials grant: each is an assistant with an identity of its own (`sub` = its client
// id), and `groups` added to its tokens as an organisation's provider would. It also signs tokens
// by hand with its own key (or a forger's) for what a provider does not issue on request.
import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWTPayload, SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';
import Provider, { errors } from 'oidc-provider';

export type ProviderClient = { id: string; groups: string[] };

export const CLIENT_SECRET = 'an-assistant-secret-for-tests-only-0123456789';

export async function startResourceProvider(opts: { clients: ProviderClient[]; resources: string[] }) {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' };
  // A key the provider never published: what a forger signs with.
  const forgerKey = (await generateKeyPair('RS256')).privateKey;
  const groups = new Map(opts.clients.map((c) => [c.id, c.groups]));

  const provider = new Provider(issuer, {
    clients: opts.clients.map((c) => ({
      client_id: c.id,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    jwks: { keys: [signingJwk as never] },
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Only the resources this provider protects get tokens; anything else is invalid_target.
        async getResourceServerInfo(_ctx, resourceIndicator) {
          if (!opts.resources.includes(resourceIndicator)) throw new errors.InvalidTarget();
          return { scope: 'mcp', accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
        },
      },
    },
    async extraTokenClaims(_ctx, token) {
      const id = (token as { clientId?: string }).clientId;
      return id && groups.has(id) ? { groups: groups.get(id) } : undefined;
    },
    cookies: { keys: ['cookie-signing-key-for-tests-only'] },
  });
  server.on('request', provider.callback());

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    /** An access token from the token endpoint, as the client would get it; throws with the provider's error. */
    async token(clientId: string, resource: string): Promise<string> {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: CLIENT_SECRET, resource, scope: 'mcp' }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`the provider issued no token: ${body.error}`);
      return body.access_token;
    },
    /** Signs `claims` with the provider's published key (or a forger's key under the provider's kid). */
    async sign(claims: JWTPayload, how: { by?: 'provider' | 'forger'; kid?: string } = {}): Promise<string> {
      const key = how.by === 'forger' ? forgerKey : await importJWK(signingJwk, 'RS256');
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: how.kid ?? 'provider-key', typ: 'at+jwt' }).sign(key);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
