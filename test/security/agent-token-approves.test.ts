// The attack: an agent holds an editor (or admin) token besides its runtime token, for managing
// its policy from CI. Its runtime token asks for a call to be approved; its editor token approves
// it, or opens a console session and approves there. With single sign-on configured the server
// can tell a person from a credential, so only a person signed in through it decides; whoever
// asked never decides, whichever way they come back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { SSO_CALLBACK, SSO_PUBLIC_URL, type TestUser, signInAtProvider, ssoSettingsFor, startOidcProvider } from '../fixtures/oidc/provider.ts';
import { editPolicy as editPolicyOf } from '../support/edit-policy.ts';
import { type TestApp, startTestApp } from '../support/harness.ts';

const tenant = 'acme-research';
const base = `/v1/tenants/${tenant}/approvals`;
const reviewer: TestUser = { sub: 'reviewer-1', email: 'reviewer@acme.test', name: 'Reviewer One', groups: ['acme-editors'], emailVerified: true };
const boss: TestUser = { sub: 'boss-1', email: 'boss@acme.test', name: 'Boss One', groups: ['acme-admins'], emailVerified: true };

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let t: TestApp;
let runtime: string;
let agentEditorToken: string;

beforeAll(async () => {
  op = await startOidcProvider({ users: [reviewer, boss], redirectUris: [SSO_CALLBACK] });
  t = await startTestApp({ settings: { sso: ssoSettingsFor(op.issuer, { recheckSeconds: 0 }) } });
  for (const body of [
    { id: 'acme-editors', claim: 'groups', value: 'acme-editors', role: 'editor', tenants: [tenant] },
    { id: 'acme-admins', claim: 'groups', value: 'acme-admins', role: 'admin' },
  ]) {
    expect((await t.request('POST', '/v1/sso/mappings', { body })).status).toBe(201);
  }
  runtime = await t.tokenFor('runtime', [tenant]);
  agentEditorToken = await t.tokenFor('editor', [tenant]);
});
afterAll(async () => {
  await t?.close();
  await op?.close();
});

/** A browser's cookies and the CSRF token of its console session. */
type Browser = { cookies: Map<string, string>; csrf: string };
const cookieHeader = (b: Browser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

async function send(b: Browser, method: string, path: string, body?: unknown) {
  const res = await t.app.request(path, {
    method,
    headers: { cookie: cookieHeader(b), 'content-type': 'application/json', 'x-csrf-token': b.csrf },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    b.cookies.set(pair.slice(0, i), pair.slice(i + 1));
  }
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  return { status: res.status, text, json, location: res.headers.get('location') };
}

async function personSignsIn(user: TestUser): Promise<Browser> {
  const b: Browser = { cookies: new Map(), csrf: '' };
  const start = await send(b, 'GET', '/v1/session/sso/start');
  expect(start.status).toBe(302);
  const back = await signInAtProvider(start.location as string, user.sub, SSO_CALLBACK);
  expect((await send(b, 'GET', back.slice(SSO_PUBLIC_URL.length))).status).toBe(200);
  b.csrf = (await send(b, 'GET', '/v1/session')).json.csrfToken;
  return b;
}

async function tokenSignsIn(token: string): Promise<Browser> {
  const b: Browser = { cookies: new Map(), csrf: '' };
  const r = await send(b, 'POST', '/v1/session', { token });
  expect(r.status, r.text).toBe(200);
  b.csrf = r.json.csrfToken;
  return b;
}

async function asked(to: string): Promise<Approval> {
  const r = await t.request('POST', base, {
    token: runtime,
    body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to }, reason: 'mail needs a person' },
  });
  expect(r.status, r.text).toBe(201);
  return r.json as Approval;
}

const stateOf = async (id: string) => ((await t.request('GET', `${base}/${id}`)).json as Approval).state;

describe('with single sign-on configured', () => {
  it('refuses an editor token’s approval with 403 saying a person signed in through single sign-on decides', async () => {
    const a = await asked('one@elsewhere.example');
    for (const verdict of ['approve', 'deny']) {
      const r = await t.request('POST', `${base}/${a.id}/${verdict}`, { token: agentEditorToken, body: { reason: 'looks fine to me' } });
      expect(r.status).toBe(403);
      expect(r.json.detail).toContain('a person signed in through single sign-on');
    }
    expect(await stateOf(a.id)).toBe('pending');
  });

  it('refuses the admin token too, and a console session opened with a token', async () => {
    const a = await asked('two@elsewhere.example');
    const byAdminToken = await t.request('POST', `${base}/${a.id}/approve`, { body: { reason: 'admin says yes' } });
    expect(byAdminToken.status).toBe(403);
    const session = await tokenSignsIn(agentEditorToken);
    const bySession = await send(session, 'POST', `${base}/${a.id}/approve`, { reason: 'from the console' });
    expect(bySession.status).toBe(403);
    expect(bySession.json.detail).toContain('console session opened with one');
    expect(await stateOf(a.id)).toBe('pending');
  });

  it('lets a person signed in through single sign-on approve, as the actor of the receipt', async () => {
    const a = await asked('three@elsewhere.example');
    const person = await personSignsIn(reviewer);
    const r = await send(person, 'POST', `${base}/${a.id}/approve`, { reason: 'the customer asked for it' });
    expect(r.status, r.text).toBe(200);
    expect((r.json as Approval).receipt?.payload.approvedBy).toBe(`user:${reviewer.sub}`);
  });

  it('tells a token’s console session that its decisions are refused, and a person’s that they are not', async () => {
    const tokenSession = await tokenSignsIn(agentEditorToken);
    const mine = await send(tokenSession, 'GET', '/v1/session');
    expect(mine.json).toMatchObject({ approvalsNeedPerson: true, actor: `token:${mine.json.tokenId}` });
    // The permissions still follow the role rules: the editor reads the queue the console shows.
    expect(mine.json.permissions.actions.approval).toContain('read');
    const signIn = await t.app.request('/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: agentEditorToken }),
    });
    expect(await signIn.json()).toMatchObject({ approvalsNeedPerson: true });
    const bearer = await t.request('GET', '/v1/session', { token: agentEditorToken });
    expect(bearer.json).toMatchObject({ approvalsNeedPerson: true });

    const person = await personSignsIn(reviewer);
    const theirs = await send(person, 'GET', '/v1/session');
    expect(theirs.json).toMatchObject({ approvalsNeedPerson: false, actor: `user:${reviewer.sub}` });
  });

  it('refuses a person deciding a request they asked for themselves', async () => {
    const person = await personSignsIn(boss);
    const opened = await send(person, 'POST', base, {
      subject: 'agent:research-bot',
      tool: 'core__send_email',
      arguments: { to: 'four@elsewhere.example' },
      reason: 'r',
    });
    expect(opened.status, opened.text).toBe(201);
    const r = await send(person, 'POST', `${base}/${(opened.json as Approval).id}/approve`, { reason: 'my own' });
    expect(r.status).toBe(403);
    expect(r.json.detail).toContain('Whoever asked for this approval may not decide it');
  });
});

describe('without single sign-on', () => {
  it('lets an editor token decide (every credential is a token), but never the identity that asked, through a console session either', async () => {
    const plain = await startTestApp();
    try {
      const asker = await plain.tokenFor('admin');
      const editor = await plain.tokenFor('editor', [tenant]);
      const open = async (to: string) =>
        (
          await plain.request('POST', base, {
            token: asker,
            body: { subject: 'agent:research-bot', tool: 'core__send_email', arguments: { to }, reason: 'mail needs a person' },
          })
        ).json as Approval;
      const mine = await open('five@elsewhere.example');
      const signedIn = await plain.app.request('/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: asker }),
      });
      const cookie = signedIn.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const { csrfToken, approvalsNeedPerson, actor } = (await signedIn.json()) as { csrfToken: string; approvalsNeedPerson: boolean; actor: string };
      // Nothing refuses a token here; the console tells the asker's own request by the actor.
      expect(approvalsNeedPerson).toBe(false);
      expect(actor).toBe(mine.requestedBy);
      const bySession = await plain.app.request(`${base}/${mine.id}/approve`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'my own' }),
      });
      expect(bySession.status).toBe(403);
      expect(((await bySession.json()) as { detail: string }).detail).toContain('Whoever asked for this approval may not decide it');
      const byEditor = await plain.request('POST', `${base}/${mine.id}/approve`, { token: editor, body: { reason: 'a colleague agrees' } });
      expect(byEditor.status, byEditor.text).toBe(200);
    } finally {
      await plain.close();
    }
  });
});

describe('publish requests, with single sign-on configured', () => {
  // The same attack on change review: an agent's (or the asking person's own) editor token reviews
  // a publish another credential asked for. Only a person signed in through single sign-on decides.
  it('refuses an editor token’s approval or rejection of a publish request with 403, and takes a person’s', async () => {
    await editPolicyOf(
      t,
      tenant,
      (p) => {
        p.review = { publish: 'required', approvals: 1 };
      },
      { reason: 'review every publish' },
    );
    await editPolicyOf(
      t,
      tenant,
      (p) => {
        p.roles.researcher.deny = [...(p.roles.researcher.deny ?? []), 'core__text-completion'];
      },
      { reason: 'researchers stop completing text' },
    );
    const asked = await t.request('POST', `/v1/tenants/${tenant}/bundles`, { body: { reason: 'researchers stop completing text' } });
    expect(asked.status, asked.text).toBe(202);
    const path = `/v1/tenants/${tenant}/publish-requests/${asked.json.id}`;
    for (const verdict of ['approve', 'reject']) {
      const byToken = await t.request('POST', `${path}/${verdict}`, { token: agentEditorToken, body: { reason: 'looks fine to the agent' } });
      expect(byToken.status, byToken.text).toBe(403);
      expect(byToken.json.detail).toContain('reviewed by a person signed in through single sign-on');
      const viaTokenSession = await send(await tokenSignsIn(agentEditorToken), 'POST', `${path}/${verdict}`, { reason: 'from a token session' });
      expect(viaTokenSession.status, viaTokenSession.text).toBe(403);
    }
    expect((await t.request('GET', path)).json.status).toBe('pending');
    const person = await send(await personSignsIn(reviewer), 'POST', `${path}/approve`, { reason: 'a person reviewed it' });
    expect(person.status, person.text).toBe(200);
    expect((await t.request('GET', path)).json.status).toBe('published');
  });
});
