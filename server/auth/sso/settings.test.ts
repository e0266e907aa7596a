import { describe, expect, it } from 'vitest';
import { ssoSettingsFromEnv } from './settings.ts';

const full = {
  TOOLGATE_OIDC_ISSUER: 'https://id.example.com/realms/staff',
  TOOLGATE_OIDC_CLIENT_ID: 'toolgate',
  TOOLGATE_OIDC_CLIENT_SECRET: 's3cret',
  TOOLGATE_PUBLIC_URL: 'https://toolgate.example.com/',
};

describe('single sign-on settings', () => {
  it('are off without the variables, and with only a public URL', () => {
    expect(ssoSettingsFromEnv({})).toBeUndefined();
    expect(ssoSettingsFromEnv({ TOOLGATE_PUBLIC_URL: 'https://toolgate.example.com' })).toBeUndefined();
  });

  it('read all four, trimming the public URL', () => {
    expect(ssoSettingsFromEnv(full)).toEqual({
      issuer: full.TOOLGATE_OIDC_ISSUER,
      clientId: 'toolgate',
      clientSecret: 's3cret',
      publicUrl: 'https://toolgate.example.com',
      scopes: undefined,
      recheckSeconds: undefined,
    });
  });

  it('stop startup on half a configuration, a plain-http remote issuer or a bad recheck', () => {
    expect(() => ssoSettingsFromEnv({ ...full, TOOLGATE_OIDC_CLIENT_SECRET: '' })).toThrow(/missing: TOOLGATE_OIDC_CLIENT_SECRET/);
    expect(() => ssoSettingsFromEnv({ ...full, TOOLGATE_OIDC_ISSUER: 'http://id.example.com' })).toThrow(/must be an https: URL/);
    expect(ssoSettingsFromEnv({ ...full, TOOLGATE_OIDC_ISSUER: 'http://127.0.0.1:9000' })?.issuer).toBe('http://127.0.0.1:9000');
    expect(() => ssoSettingsFromEnv({ ...full, TOOLGATE_PUBLIC_URL: 'toolgate.example.com' })).toThrow(/absolute URL/);
    expect(() => ssoSettingsFromEnv({ ...full, TOOLGATE_SSO_RECHECK_SECONDS: '600' })).toThrow(/0 to 60/);
  });
});
