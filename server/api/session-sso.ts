import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { timingSafeEqual } from 'node:crypto';
import { runChange } from '../audit/change.ts';
import { failureLimiterFor, recordFailure } from '../auth/failure-limiter.ts';
import { clientAddress } from '../http/client-address.ts';
import { nulProblems } from '../http/safe-json.ts';
import { isSecureRequest } from '../auth/session-cookie.ts';
import { CALLBACK_PATH, SsoFailure, beginSignIn, finishSignIn } from '../auth/sso/oidc-client.ts';
import { continuePage, signInPage } from '../auth/sso/pages.ts';
import { recordSignIn, takeSignIn } from '../auth/sso/pending-sign-ins.ts';
import { currentAccess, personOf, startPersonSession } from '../auth/sso/person-session.ts';
import { claimRefusalAudit } from '../auth/sso/refusal-audit.ts';
import { pendingLimitsOf, spendStart, startClientOf } from '../auth/sso/start-limit.ts';
import type { AppEnv } from '../context.ts';

/**
 * `/v1/session/sso`: signing in through the organisation's OpenID provider. `start` sends the
 * browser there (code flow, PKCE, state, nonce); `callback` checks what comes back and opens the
 * same kind of console session as token sign-in. Every failure is a page saying what happened;
 * none leaves a session or a change behind.
 */
export const ssoSessionRoutes = new Hono<AppEnv>();

/** Binds a sign-in to the browser that started it (Lax: it must come back on the provider's redirect). */
const LOGIN_COOKIE = 'toolgate_sso_login';
const SIGN_IN_SECONDS = 10 * 60;

ssoSessionRoutes.get('/', (c) => c.json({ enabled: Boolean(c.get('deps').config.sso) }));

ssoSessionRoutes.get('/start', async (c) => {
  const deps = c.get('deps');
  const sso = deps.config.sso;
  if (!sso) return notConfigured(c);
  c.header('Cache-Control', 'no-store');
  // Anyone may start a sign-in, and each one is kept for ten minutes: starts are limited per
  // client, and one client holds only its share of the store, so no one can fill it for others.
  const client = startClientOf(clientAddress(c));
  const wait = spendStart(deps, client);
  if (wait > 0) return tooManyStarts(c, wait);
  const begun = await beginSignIn(sso);
  if (!begun.ok) return failurePage(c, begun.failure);
  const pending = begun.value;
  const now = new Date();
  const recorded = await recordSignIn(deps.database, {
    state: pending.state,
    nonce: pending.nonce,
    codeVerifier: pending.codeVerifier,
    address: client,
    now,
    seconds: SIGN_IN_SECONDS,
    limits: pendingLimitsOf(deps),
  });
  if (!recorded.ok && recorded.full === 'address') return tooManyStarts(c, recorded.retryAfter);
  if (!recorded.ok) {
    deps.logger.warn({ requestId: c.get('requestId') }, 'single sign-on: the store of sign-ins under way is full');
    c.header('Retry-After', '60');
    return c.html(signInPage('Too many sign-ins under way', 'Too many sign-ins were started in the last minutes. Try again in a minute.'), 503);
  }
  setCookie(c, LOGIN_COOKIE, pending.state, { httpOnly: true, sameSite: 'Lax', path: CALLBACK_PATH, secure: isSecureRequest(c), maxAge: SIGN_IN_SECONDS });
  return c.redirect(pending.url, 302);
});

function tooManyStarts(c: Context<AppEnv>, wait: number) {
  c.header('Retry-After', String(wait));
  return c.html(
    signInPage('Too many sign-ins started', `Too many sign-ins were started from this address without finishing. Try again in ${wait} seconds.`),
    429,
  );
}

ssoSessionRoutes.get('/callback', async (c) => {
  const sso = c.get('deps').config.sso;
  if (!sso) return notConfigured(c);
  c.header('Cache-Control', 'no-store');
  // Forged and replayed callbacks count as failed sign-ins, limited per address like wrong tokens.
  const wait = failureLimiterFor(c).retryAfter(clientAddress(c));
  if (wait > 0) {
    c.header('Retry-After', String(wait));
    return c.html(signInPage('Too many failed sign-ins', `Too many failed sign-ins came from this address. Try again in ${wait} seconds.`), 429);
  }
  const query = new URL(c.req.url).searchParams;
  const state = query.get('state');
  const started = getCookie(c, LOGIN_COOKIE);
  deleteCookie(c, LOGIN_COOKIE, { path: CALLBACK_PATH });
  if (!state)
    return refused(c, signInPage('Sign-in failed', "The identity provider sent this browser back without the sign-in's state, so it cannot be checked."));
  const pending = await takeSignIn(c.get('deps').database.db, state);
  if (!pending || pending.expiresAt <= new Date().toISOString()) {
    return refused(c, signInPage('Sign-in link used or expired', 'This sign-in was already completed, has expired, or was never started here. Start again.'));
  }
  if (!started || !sameText(started, state)) {
    return refused(
      c,
      signInPage(
        'Sign-in failed',
        'This sign-in was started in another browser (or its cookie was lost), so it cannot finish here. Start again from this browser.',
      ),
    );
  }
  const providerError = query.get('error');
  if (providerError) {
    const description = query.get('error_description');
    return c.html(signInPage('Sign-in cancelled', `The identity provider did not sign you in (${providerError}).`, { detail: description ?? undefined }), 400);
  }
  const finished = await finishSignIn(sso, query, { state, nonce: pending.nonce, codeVerifier: pending.codeVerifier });
  if (!finished.ok) return failurePage(c, finished.failure);
  const claims = finished.value;
  // PostgreSQL's text cannot hold U+0000 and no claim has a use for it: refused on both engines alike.
  const nul = nulProblems(claims);
  if (nul.length) {
    const where = nul.map((p) => p.pointer).join(', ');
    return failurePage(
      c,
      new SsoFailure('invalid', `The identity provider sent claims holding a NUL character (U+0000) at ${where}; Toolgate does not store it.`),
    );
  }
  const access = await currentAccess(c.get('deps'), claims);
  if (!access.access) {
    const person = personOf(claims);
    // Audited at most once per subject a minute: a person (or a script) retrying cannot flood the trail.
    await runChange(
      c.get('deps'),
      { actor: `user:${person.sub}`, person, requestId: c.get('requestId'), reason: 'no single sign-on mapping matches this account' },
      async (ch) => {
        if (await claimRefusalAudit(ch.tx, person.sub)) {
          await ch.record({ action: 'refuse', entityType: 'session', entityId: `user:${person.sub}`, before: null, after: null });
        }
      },
    );
    return c.html(
      signInPage(
        'Your account has no access',
        `You signed in as ${person.name ?? person.email ?? person.sub}, but no single sign-on mapping of this Toolgate gives your account a role.`,
        {
          retry: false,
          detail:
            'Ask a Toolgate admin to add a mapping for one of your groups (or another claim of your account). Refused sign-ins are recorded in the audit trail.',
        },
      ),
      403,
    );
  }
  await startPersonSession(c, claims, access);
  return c.html(continuePage('/'), 200);
});

function refused(c: Context<AppEnv>, page: ReturnType<typeof signInPage>) {
  recordFailure(c);
  return c.html(page, 400);
}

function notConfigured(c: Context<AppEnv>) {
  return c.html(
    signInPage('Single sign-on is not set up', 'This Toolgate has no identity provider configured. Sign in with a token instead.', { retry: false }),
    404,
  );
}

function failurePage(c: Context<AppEnv>, err: SsoFailure) {
  c.get('deps').logger.warn({ requestId: c.get('requestId'), kind: err.kind, message: err.message }, 'single sign-on failed');
  if (err.kind === 'unreachable') {
    return c.html(
      signInPage(
        'Identity provider unreachable',
        'Toolgate could not reach your identity provider. Try again in a moment; if it keeps failing, tell your Toolgate operator.',
        { detail: err.message },
      ),
      502,
    );
  }
  recordFailure(c);
  return c.html(
    signInPage('Sign-in could not be verified', "The answer from your identity provider did not pass Toolgate's checks, so you were not signed in.", {
      detail: err.message,
    }),
    400,
  );
}

function sameText(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
