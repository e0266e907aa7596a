import type { SsoMapping, SsoPreview } from '../../policy-schemas/types.gen.ts';
import { authorize } from '../auth/guard.ts';
import { accessFor } from '../auth/sso/access.ts';
import type { ProblemDetail } from '../errors.ts';
import { readValid } from '../http/body.ts';
import { stripStored } from '../store/document-store.ts';
import { ssoMappingStore } from '../store/sso-mappings.ts';
import { existingTenantIds } from '../store/tenants.ts';
import { documentRoutes } from './document-routes.ts';

/**
 * `/v1/sso/mappings`: which ID-token claims give which console role (admins change them; every
 * change is versioned and audited). `POST /preview` shows what a set of claims would get.
 */
export const ssoMappingRoutes = documentRoutes<SsoMapping>({
  kind: 'sso-mapping',
  entityType: 'sso-mapping',
  resource: 'sso',
  store: ssoMappingStore,
  check: async (tx, mapping) => {
    const problems: ProblemDetail[] = [];
    const tenants = mapping.tenants ?? [];
    const scoped = mapping.role === 'editor' || mapping.role === 'viewer';
    if (scoped && tenants.length === 0) return [{ pointer: '/tenants', message: `an ${mapping.role} mapping must name the tenants it gives` }];
    if (!scoped && mapping.tenants) return [{ pointer: '/tenants', message: `an ${mapping.role} mapping reaches every tenant; remove tenants` }];
    if (tenants.length === 0) return problems;
    const known = await existingTenantIds(tx, tenants);
    tenants.forEach((t, i) => {
      if (!known.has(t)) problems.push({ pointer: `/tenants/${i}`, message: `unknown tenant "${t}"`, code: 'unknown_reference' });
    });
    return problems;
  },
});

// The document routes take no POST on `/:key`, so this path is free.
ssoMappingRoutes.post('/preview', async (c) => {
  authorize(c, 'sso', 'read');
  const { claims } = await readValid<SsoPreview>(c, 'sso-preview');
  const mappings = (await ssoMappingStore.list(c.get('deps').database.db)).map(stripStored);
  return c.json(accessFor(claims, mappings));
});
