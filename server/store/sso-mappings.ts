import type { SsoMapping } from '../../policy-schemas/types.gen.ts';
import { documentStore } from './document-store.ts';

/** Single sign-on's claim→role mappings, one versioned JSON document each. */
export const ssoMappingStore = documentStore<SsoMapping>('sso_mappings', 'id');
