import type { ApprovalRequestsTable } from './tables/approval-requests.ts';
import type { AuditCheckpointsTable } from './tables/audit-checkpoints.ts';
import type { AuditEventsTable } from './tables/audit-events.ts';
import type { BundlesTable } from './tables/bundles.ts';
import type { DecisionSourcesTable, DecisionStatsTable, DecisionsTable } from './tables/decisions.ts';
import type { GrantsTable } from './tables/grants.ts';
import type { GroupsTable } from './tables/groups.ts';
import type { McpServersTable } from './tables/mcp-servers.ts';
import type { PublishRequestsTable } from './tables/publish-requests.ts';
import type { RuntimeOwnersTable } from './tables/runtime-owners.ts';
import type { RuntimesTable } from './tables/runtimes.ts';
import type { SessionsTable } from './tables/sessions.ts';
import type { SsoLoginsTable } from './tables/sso-logins.ts';
import type { SsoMappingsTable } from './tables/sso-mappings.ts';
import type { SsoRefusalsTable } from './tables/sso-refusals.ts';
import type { StatesTable } from './tables/states.ts';
import type { TenantPoliciesTable } from './tables/tenant-policies.ts';
import type { TenantTestsTable } from './tables/tenant-tests.ts';
import type { TenantsTable } from './tables/tenants.ts';
import type { TokensTable } from './tables/tokens.ts';
import type { ToolsTable } from './tables/tools.ts';

/** Every table, as Kysely sees it. */
export interface Database {
  tools: ToolsTable;
  groups: GroupsTable;
  states: StatesTable;
  mcp_servers: McpServersTable;
  tenants: TenantsTable;
  tenant_policies: TenantPoliciesTable;
  grants: GrantsTable;
  tokens: TokensTable;
  sessions: SessionsTable;
  audit_events: AuditEventsTable;
  audit_checkpoints: AuditCheckpointsTable;
  bundles: BundlesTable;
  runtimes: RuntimesTable;
  tenant_tests: TenantTestsTable;
  decisions: DecisionsTable;
  decision_sources: DecisionSourcesTable;
  decision_stats: DecisionStatsTable;
  sso_mappings: SsoMappingsTable;
  sso_logins: SsoLoginsTable;
  approval_requests: ApprovalRequestsTable;
  publish_requests: PublishRequestsTable;
  sso_refusals: SsoRefusalsTable;
  runtime_owners: RuntimeOwnersTable;
}
