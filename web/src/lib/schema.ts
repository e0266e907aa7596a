import type { AuditEvent, FilterReason, SsoMapping, Token, Tool } from '../../../policy-schemas/types.gen.ts';
import common from '../../../policy-schemas/common.schema.json';
import tool from '../../../policy-schemas/tool.schema.json';
import tenantPolicy from '../../../policy-schemas/tenant-policy.schema.json';
import mcpServer from '../../../policy-schemas/mcp-server.schema.json';
import auditEvent from '../../../policy-schemas/audit-event.schema.json';
import evaluationResult from '../../../policy-schemas/evaluation-result.schema.json';
import tokenCreate from '../../../policy-schemas/token-create.schema.json';
import ssoMapping from '../../../policy-schemas/sso-mapping.schema.json';
import connectionGrant from '../../../policy-schemas/connection-grant.schema.json';
import tenant from '../../../policy-schemas/tenant.schema.json';

// Form vocabularies, patterns and limits, read from the schemas rather than restated.
const defs = common.$defs;

export const effects = defs.effect.enum as Tool['effect'][];
export const toolStatuses = tool.properties.status.enum as NonNullable<Tool['status']>[];
export const sourceKinds = tool.properties.source.properties.kind.enum as NonNullable<Tool['source']>['kind'][];
export const auditActions = auditEvent.properties.action.enum as AuditEvent['action'][];
export const auditEntityTypes = auditEvent.properties.entityType.enum as AuditEvent['entityType'][];
export const filterReasons = evaluationResult.$defs.filterReason.enum as FilterReason[];
export const tokenRoles = tokenCreate.$defs.tokenRole.enum as Token['role'][];
export const ssoRoles = ssoMapping.$defs.ssoRole.enum as SsoMapping['role'][];

export const patterns = {
  toolId: defs.toolId.pattern,
  toolGlob: defs.toolGlob.pattern,
  groupName: defs.groupName.pattern,
  stateName: defs.stateName.pattern,
  tenantId: defs.tenantId.pattern,
  roleName: defs.roleName.pattern,
  connectionId: defs.connectionId.pattern,
  redactionPath: tool.properties.redaction.properties.allow.items.pattern,
  factName: tool.properties.requires.items.properties.fact.pattern,
  mcpServerId: mcpServer.properties.id.pattern,
  profileName: tenantPolicy.properties.profiles.propertyNames.pattern,
  ssoMappingId: ssoMapping.properties.id.pattern,
};

/** A name's schema pattern with what it allows in words: what a form says at the field. */
export type NameFormat = { pattern: string; words: string };

const nameWords = 'start with a letter or digit, then letters, digits, _ . : or -';

// The schemas' patterns are not valid under the `v` flag Chromium compiles `pattern` attributes
// with (a bare `-` in a class), so forms check them here instead and say what is allowed in words.
export const formats = {
  toolId: { pattern: patterns.toolId, words: 'a namespace and a name joined by two underscores, each of letters, digits, _ or - (e.g. core__send-email)' },
  groupName: { pattern: patterns.groupName, words: nameWords },
  stateName: { pattern: patterns.stateName, words: nameWords },
  roleName: { pattern: patterns.roleName, words: nameWords },
  profileName: { pattern: patterns.profileName, words: `${nameWords} (at most 64 characters)` },
  tenantId: { pattern: patterns.tenantId, words: 'lowercase letters, digits and - only (e.g. acme-prod)' },
  mcpServerId: { pattern: patterns.mcpServerId, words: 'lowercase letters, digits and - only (e.g. github)' },
  ssoMappingId: { pattern: patterns.ssoMappingId, words: 'start with a lowercase letter or digit, then lowercase letters, digits and - only' },
  connectionId: { pattern: patterns.connectionId, words: 'letters, digits and . _ : @ - only' },
  factName: { pattern: patterns.factName, words: 'letters, digits, _ . and - only' },
} satisfies Record<string, NameFormat>;

/** What is wrong with `value` for `format`, in words, or null when it fits (or is still empty). */
export function formatProblem(format: NameFormat, value: string): string | null {
  if (!value || matchesPattern(format.pattern, value)) return null;
  return `Not allowed here: use ${format.words}.`;
}

export const limits = {
  toolIdMax: defs.toolId.maxLength,
  descriptionMax: tool.properties.description.maxLength,
  resourceKeyMax: tool.properties.parallel.properties.resourceKey.maxLength,
  maxRuntimeMs: defs.budgets.properties.maxRuntimeMs,
  maxResultBytes: defs.budgets.properties.maxResultBytes,
  bundleTtl: tenantPolicy.properties.bundleTtlSeconds,
  grantLabelMax: connectionGrant.properties.label.maxLength,
  mcpLabelMax: mcpServer.properties.label.maxLength,
  tenantNameMax: tenant.properties.name.maxLength,
};

/** Field descriptions from the schemas, shown as hints under inputs. */
export const hints = {
  inputSchema: tool.properties.inputSchema.description,
  redaction: tool.properties.redaction.description,
  availableInStates: tool.properties.availableInStates.description,
  state: tool.properties.state.description,
  requires: tool.properties.requires.description,
  toolId: defs.toolId.description,
  glob: defs.toolGlob.description,
};

/** Whether `value` matches a schema pattern (the schemas use ECMAScript-compatible patterns). */
export function matchesPattern(pattern: string, value: string): boolean {
  return new RegExp(pattern, 'u').test(value);
}
