import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import type { ResolvedClient } from './config.ts';
import { OAuthResourceServer } from './oauth-resource-server.ts';

// A hostile or broken issuer's metadata: keys offered over plain http for an https issuer, and a
// document without end. Neither is taken; the token's issuer counts as unreachable (503, retried later).
const ISSUER = 'https://login.example.com';
const bot: ResolvedClient = { name: 'bot', subject: 'agent:bot', keyDigest: null, request: { subject: 'agent:bot' }, initialState: 'undefined' };

/** An unsigned-looking JWT naming the configured issuer: discovery runs before any signature check. */
function tokenNamingIssuer(): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'ES256', kid: 'k' })}.${part({ iss: ISSUER, aud: 'https://gw.example.com/mcp', sub: 'a', exp: 4_000_000_000 })}.${'A'.repeat(86)}`;
}

function serverFetching(answer: () => Response): { rs: OAuthResourceServer; fetched: string[] } {
  const fetched: string[] = [];
  const fakeFetch = (async (input: string | URL | Request) => {
    fetched.push(String(input));
    return answer();
  }) as typeof fetch;
  const rs = new OAuthResourceServer(
    {
      resource: 'https://gw.example.com/mcp',
      issuers: [{ issuer: ISSUER, audience: 'https://gw.example.com/mcp', jwksUri: null }],
      mappings: [{ issuer: null, claim: 'sub', value: 'a', client: bot }],
    },
    { fetch: fakeFetch },
  );
  return { rs, fetched };
}

describe("an issuer's metadata", () => {
  it('is refused when an https issuer names a plain-http key set', async () => {
    const { rs, fetched } = serverFetching(() => Response.json({ issuer: ISSUER, jwks_uri: 'http://login.example.com/keys' }));
    expect((await rs.verify(tokenNamingIssuer())).kind).toBe('unavailable');
    expect(fetched).toHaveLength(2);
  });

  it('is read no further than its bound: an endless document is given up on', async () => {
    let pulled = 0;
    const endless = () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            pulled++;
            controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
          },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    const { rs } = serverFetching(endless);
    expect((await rs.verify(tokenNamingIssuer())).kind).toBe('unavailable');
    // Two candidate documents, each abandoned a little past 256 KiB (64 KiB pieces).
    expect(pulled).toBeLessThan(20);
  });

  it('names a key set that is read no further than the same bound', async () => {
    let pulled = 0;
    const { rs, fetched } = serverFetching(() => {
      if (fetched.at(-1) !== 'https://login.example.com/keys') return Response.json({ issuer: ISSUER, jwks_uri: 'https://login.example.com/keys' });
      return new Response(
        new ReadableStream({
          pull(controller) {
            pulled++;
            controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
          },
        }),
        { status: 200 },
      );
    });
    expect((await rs.verify(tokenNamingIssuer())).kind).toBe('unavailable');
    expect(fetched).toEqual([`${ISSUER}/.well-known/openid-configuration`, 'https://login.example.com/keys']);
    expect(pulled).toBeLessThan(10);
  });

  it('is refused when it declares a length past the bound, unread', async () => {
    const doc = JSON.stringify({ issuer: ISSUER, jwks_uri: 'https://login.example.com/keys' });
    const { rs, fetched } = serverFetching(() => new Response(doc, { status: 200, headers: { 'content-length': String(10 * 1024 * 1024) } }));
    expect((await rs.verify(tokenNamingIssuer())).kind).toBe('unavailable');
    // Both candidate documents were tried: the first, though it names good keys, was not taken.
    expect(fetched).toHaveLength(2);
  });
});

describe('a mapping that names its issuer', () => {
  const RESOURCE = 'https://gw.example.com/mcp';
  const A = 'https://login.a.example.com';
  const B = 'https://login.b.example.com';
  const partner: ResolvedClient = { ...bot, name: 'partner', subject: 'agent:partner' };

  async function issuerKeys(iss: string) {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: `${iss}-key`, alg: 'ES256' };
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: jwk.kid }).setIssuer(iss).setAudience(RESOURCE).setExpirationTime('5m').sign(privateKey);
    return { jwks: { keys: [jwk] }, sign };
  }

  it('takes only its own issuer’s tokens: the same client id from another trusted issuer is another client, or none', async () => {
    const a = await issuerKeys(A);
    const b = await issuerKeys(B);
    const fakeFetch = (async (input: string | URL | Request) => Response.json(String(input).startsWith(A) ? a.jwks : b.jwks)) as typeof fetch;
    const server = (mappings: ConstructorParameters<typeof OAuthResourceServer>[0]['mappings']) =>
      new OAuthResourceServer(
        {
          resource: RESOURCE,
          issuers: [
            { issuer: A, audience: RESOURCE, jwksUri: `${A}/keys` },
            { issuer: B, audience: RESOURCE, jwksUri: `${B}/keys` },
          ],
          mappings,
        },
        { fetch: fakeFetch },
      );
    const fromA = await a.sign({ client_id: 'assistant' });
    const fromB = await b.sign({ client_id: 'assistant' });

    const onlyA = server([{ issuer: A, claim: 'client_id', value: 'assistant', client: bot }]);
    expect(await onlyA.verify(fromA)).toMatchObject({ kind: 'client', client: { name: 'bot' } });
    expect(await onlyA.verify(fromB)).toEqual({ kind: 'refused' });

    const both = server([
      { issuer: A, claim: 'client_id', value: 'assistant', client: bot },
      { issuer: B, claim: 'client_id', value: 'assistant', client: partner },
    ]);
    expect(await both.verify(fromB)).toMatchObject({ kind: 'client', client: { name: 'partner' } });
    expect(await both.verify(fromA)).toMatchObject({ kind: 'client', client: { name: 'bot' } });
  });
});
