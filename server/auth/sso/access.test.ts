import { describe, expect, it } from 'vitest';
import type { SsoMapping } from '../../../policy-schemas/types.gen.ts';
import { accessFor, claimMatches } from './access.ts';

const m = (id: string, claim: string, value: string, role: SsoMapping['role'], tenants?: [string, ...string[]]): SsoMapping => ({
  id,
  claim,
  value,
  role,
  ...(tenants ? { tenants } : {}),
});

describe('SSO access from claims', () => {
  it('matches a string claim exactly and a list claim by membership', () => {
    expect(claimMatches({ groups: ['a', 'ops'] }, { claim: 'groups', value: 'ops' })).toBe(true);
    expect(claimMatches({ groups: ['a', 'Ops2'] }, { claim: 'groups', value: 'ops' })).toBe(false);
    expect(claimMatches({ hd: 'example.com' }, { claim: 'hd', value: 'example.com' })).toBe(true);
    expect(claimMatches({ hd: 'EXAMPLE.com' }, { claim: 'hd', value: 'example.com' })).toBe(false);
    expect(claimMatches({ email_verified: true }, { claim: 'email_verified', value: 'true' })).toBe(true);
    expect(claimMatches({ groups: { ops: true } }, { claim: 'groups', value: 'ops' })).toBe(false);
    expect(claimMatches({}, { claim: 'toString', value: 'x' })).toBe(false);
  });

  it('refuses when nothing matches', () => {
    expect(accessFor({ groups: ['nobody'] }, [m('ops', 'groups', 'ops', 'admin')])).toEqual({
      access: false,
      role: null,
      tenants: [],
      tenantRoles: {},
      mappings: [],
    });
  });

  it('unions tenants and keeps the strongest role per tenant', () => {
    const mappings = [
      m('a', 'groups', 'acme-dev', 'editor', ['acme']),
      m('b', 'groups', 'all-view', 'viewer', ['acme', 'beta']),
      m('c', 'groups', 'gamma', 'viewer', ['gamma']),
    ];
    expect(accessFor({ groups: ['acme-dev', 'all-view'] }, mappings)).toEqual({
      access: true,
      role: 'editor',
      tenants: ['acme', 'beta'],
      tenantRoles: { acme: 'editor', beta: 'viewer' },
      mappings: ['a', 'b'],
    });
    expect(accessFor({ groups: ['all-view'] }, mappings)).toMatchObject({ role: 'viewer', tenants: ['acme', 'beta'] });
  });

  it('admin wins over everything; auditor keeps editor tenants beside reading all', () => {
    const mappings = [
      m('adm', 'groups', 'root', 'admin'),
      m('aud', 'groups', 'audit', 'auditor'),
      m('ed', 'groups', 'dev', 'editor', ['acme']),
      m('v', 'groups', 'v', 'viewer', ['beta']),
    ];
    expect(accessFor({ groups: ['root', 'dev'] }, mappings)).toEqual({ access: true, role: 'admin', tenants: null, tenantRoles: {}, mappings: ['adm', 'ed'] });
    expect(accessFor({ groups: ['audit', 'dev', 'v'] }, mappings)).toEqual({
      access: true,
      role: 'auditor',
      tenants: null,
      tenantRoles: { acme: 'editor' },
      mappings: ['aud', 'ed', 'v'],
    });
  });
});
