import type { SsoSettings } from './oidc-client.ts';

const NAMES = ['TOOLGATE_OIDC_ISSUER', 'TOOLGATE_OIDC_CLIENT_ID', 'TOOLGATE_OIDC_CLIENT_SECRET', 'TOOLGATE_PUBLIC_URL'] as const;

/**
 * Single sign-on settings from the environment: all of issuer, client id, client secret and public
 * URL, or none (token sign-in only). Half a configuration stops startup rather than failing at
 * the first sign-in.
 */
export function ssoSettingsFromEnv(env: NodeJS.ProcessEnv): SsoSettings | undefined {
  const set = NAMES.filter((n) => env[n]);
  if (set.length === 0 || (set.length === 1 && set[0] === 'TOOLGATE_PUBLIC_URL')) return undefined;
  const missing = NAMES.filter((n) => !env[n]);
  if (missing.length > 0) throw new Error(`Single sign-on needs ${NAMES.join(', ')}; missing: ${missing.join(', ')}`);
  const issuer = parseUrl('TOOLGATE_OIDC_ISSUER', env.TOOLGATE_OIDC_ISSUER as string);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(issuer.hostname);
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback)) {
    throw new Error(`TOOLGATE_OIDC_ISSUER must be an https: URL (plain http only on this machine), not ${issuer.href}`);
  }
  const publicUrl = parseUrl('TOOLGATE_PUBLIC_URL', env.TOOLGATE_PUBLIC_URL as string);
  const recheck = env.TOOLGATE_SSO_RECHECK_SECONDS;
  const recheckSeconds = recheck === undefined || recheck === '' ? undefined : Number(recheck);
  if (recheckSeconds !== undefined && (!Number.isInteger(recheckSeconds) || recheckSeconds < 0 || recheckSeconds > 60)) {
    throw new Error(`TOOLGATE_SSO_RECHECK_SECONDS must be a whole number from 0 to 60, not ${recheck}`);
  }
  return {
    issuer: env.TOOLGATE_OIDC_ISSUER as string,
    clientId: env.TOOLGATE_OIDC_CLIENT_ID as string,
    clientSecret: env.TOOLGATE_OIDC_CLIENT_SECRET as string,
    publicUrl: publicUrl.href.replace(/\/+$/, ''),
    scopes: env.TOOLGATE_OIDC_SCOPES || undefined,
    recheckSeconds,
  };
}

function parseUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be an absolute URL, not ${value}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${name} must be an http(s) URL, not ${value}`);
  return url;
}
