import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import type { AppEnv } from '../context.ts';
import { SESSION_COOKIE } from './authenticate.ts';

/** Sets the console's session cookie: HttpOnly, SameSite=Strict, for the session's absolute lifetime. */
export function issueSessionCookie(c: Context<AppEnv>, sessionId: string): void {
  const { config } = c.get('deps');
  setCookie(c, SESSION_COOKIE, sessionId, {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    // Secure when configured, or when this request came over HTTPS (directly or via a proxy).
    secure: isSecureRequest(c),
    maxAge: config.sessionTtlSeconds,
  });
}

export function isSecureRequest(c: Context<AppEnv>): boolean {
  return c.get('deps').config.secureCookies || c.req.url.startsWith('https:') || c.req.header('x-forwarded-proto') === 'https';
}
