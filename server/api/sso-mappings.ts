import type { SsoMapping, SsoPreview } from '../../policy-schemas/types.gen.ts';
import { authorize } from '../auth/guard.ts';
import { accessFor } from '../auth/sso/access.ts';
import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/database.ts';
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
  nameWhenAbsent: nameMapping,
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

/**
 * A mapping created without an `id` is named after its role and value (`admin-platform-admins`),
 * made URL-safe, with `-2`, `-3`… when that name is taken: DESIGN's mapping is `{ claim, value,
 * role, tenants? }`, the id only names it in URLs and the audit trail.
 */
async function nameMapping(tx: Tx, body: Record<string, unknown>): Promise<string> {
  const words = [body.role, body.value].filter((w): w is string => typeof w === 'string').join('-');
  const base =
    words
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 56)
      .replace(/-+$/, '') || 'mapping';
  for (let n = 1; n <= 100; n++) {
    const id = n === 1 ? base : `${base}-${n}`;
    if (!(await ssoMappingStore.get(tx, id))) return id;
  }
  return `mapping-${randomUUID().slice(0, 8)}`;
}

// The document routes take no POST on `/:key`, so this path is free.
ssoMappingRoutes.post('/preview', async (c) => {
  authorize(c, 'sso', 'read');
  const { claims } = await readValid<SsoPreview>(c, 'sso-preview');
  const mappings = (await ssoMappingStore.list(c.get('deps').database.db)).map(stripStored);
  return c.json(accessFor(claims, mappings));
});
