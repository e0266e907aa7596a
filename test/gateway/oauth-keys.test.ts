import { once } from 'node:events';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, type JWK, SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedClient } from '../../gateway/config.ts';
import type { ResolvedOAuth } from '../../gateway/oauth-config.ts';
import { OAuthResourceServer } from '../../gateway/oauth-resource-server.ts';

// How the gateway finds and keeps an issuer's keys: discovered from the issuer's own metadata
// (which must name that issuer), fetched again when a token names a key not seen yet (rotation),
// but not more than once in the cool-down however many unknown keys are named.
const RESOURCE = 'https://gateway.example.com/mcp';
const bot: ResolvedClient = { name: 'bot', subject: 'agent:bot', keyDigest: null, request: { subject: 'agent:bot' }, initialState: 'undefined' };

type Key = { kid: string; privateKey: CryptoKey; jwk: JWK };

let server: Server;
let issuer: string;
/** What the issuer publishes, and how often each document was fetched. */
const published: { keys: Key[]; metadataIssuer: string | null } = { keys: [], metadataIssuer: null };
const fetches = { metadata: 0, jwks: 0 };

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      fetches.metadata++;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ issuer: published.metadataIssuer ?? issuer, jwks_uri: `${issuer}/keys` }));
    }
    if (req.url === '/keys') {
      fetches.jwks++;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ keys: published.keys.map((k) => k.jwk) }));
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

function resourceServer(o: { audience?: string; now?: () => number } = {}): OAuthResourceServer {
  const config: ResolvedOAuth = {
    resource: RESOURCE,
    issuers: [{ issuer, audience: o.audience ?? RESOURCE, jwksUri: null }],
    mappings: [{ issuer: null, claim: 'sub', value: 'assistant-1', client: bot }],
  };
  return new OAuthResourceServer(config, { now: o.now });
}

function token(key: Key, claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, aud: RESOURCE, sub: 'assistant-1', iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .sign(key.privateKey);
}

describe("the issuer's keys", () => {
  it('are discovered from the issuer metadata, fetched once, and a rotated-in key is fetched when a token first names it', async () => {
    const first = await newKey('k1');
    published.keys = [first];
    const rs = resourceServer();
    fetches.metadata = fetches.jwks = 0;
    for (let i = 0; i < 5; i++) expect((await rs.verify(await token(first))).kind).toBe('client');
    expect(fetches).toEqual({ metadata: 1, jwks: 1 });

    // The issuer rotates: its next tokens name a key the gateway has not seen.
    const second = await newKey('k2');
    published.keys = [first, second];
    // jose refetches on an unknown kid only after its cool-down (30 s) since the last fetch.
    const realNow = Date.now;
    Date.now = () => realNow() + 31_000;
    try {
      expect((await rs.verify(await token(second))).kind).toBe('client');
    } finally {
      Date.now = realNow;
    }
    expect(fetches.jwks).toBe(2);
  });

  it('are not fetched again for every unknown key a flood of tokens names (at most once per cool-down)', async () => {
    const known = await newKey('k3');
    published.keys = [known];
    const rs = resourceServer();
    expect((await rs.verify(await token(known))).kind).toBe('client');
    fetches.jwks = 0;
    const stranger = await newKey('unknown');
    for (let i = 0; i < 50; i++) expect((await rs.verify(await token({ ...stranger, kid: `unknown-${i}` }))).kind).toBe('refused');
    expect(fetches.jwks).toBe(0);
  });

  it("are not taken from metadata that names another issuer (503-class 'unavailable', retried only after a pause)", async () => {
    const key = await newKey('k4');
    published.keys = [key];
    published.metadataIssuer = 'https://impostor.example.com';
    let now = Date.now();
    try {
      const rs = resourceServer({ now: () => now });
      fetches.metadata = 0;
      expect((await rs.verify(await token(key))).kind).toBe('unavailable');
      expect((await rs.verify(await token(key))).kind).toBe('unavailable');
      expect(fetches.metadata).toBe(1);
      published.metadataIssuer = null;
      now += 31_000;
      expect((await rs.verify(await token(key))).kind).toBe('client');
    } finally {
      published.metadataIssuer = null;
    }
  });

  it("take a configured audience instead of the resource URL (Entra's application ID), and then only that", async () => {
    const key = await newKey('k5');
    published.keys = [key];
    const rs = resourceServer({ audience: '00000000-1111-2222-3333-444444444444' });
    expect((await rs.verify(await token(key, { aud: '00000000-1111-2222-3333-444444444444' }))).kind).toBe('client');
    expect((await rs.verify(await token(key, { aud: RESOURCE }))).kind).toBe('refused');
    expect((await rs.verify(await token(key, { aud: ['other', '00000000-1111-2222-3333-444444444444'] }))).kind).toBe('client');
  });

  it('the mapping is by claim: a valid token for another subject is refused', async () => {
    const key = await newKey('k6');
    published.keys = [key];
    expect((await resourceServer().verify(await token(key, { sub: 'assistant-2' }))).kind).toBe('refused');
  });
});
