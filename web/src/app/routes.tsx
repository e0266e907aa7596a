import type { ReactNode } from 'react';
import type { Session } from '../features/auth/api/get-session.ts';
import { ApprovalsPage } from '../features/approvals/components/approvals-page.tsx';
import { AuditPage } from '../features/audit/components/audit-page.tsx';
import { PublishPage } from '../features/bundles/components/publish-page.tsx';
import { ReviewList, ReviewPage } from '../features/review/components/review-page.tsx';
import { AgentPage, AgentsPage } from '../features/insight/components/agent-page.tsx';
import { DecisionsPage } from '../features/decisions/components/decisions-page.tsx';
import { GroupsPage } from '../features/groups/components/groups-page.tsx';
import { HomePage } from '../features/overview/components/home-page.tsx';
import { KeysPage } from '../features/keys/components/keys-page.tsx';
import { McpPage } from '../features/mcp/components/mcp-page.tsx';
import { TestsPage } from '../features/policy-tests/components/tests-page.tsx';
import { StatesPage } from '../features/states/components/states-page.tsx';
import { GrantsPage } from '../features/tenants/components/grants-page.tsx';
import { PolicyPage } from '../features/tenants/components/policy-page.tsx';
import { TenantLayout } from '../features/tenants/components/tenant-layout.tsx';
import { TenantsPage } from '../features/tenants/components/tenants-page.tsx';
import { ToolPage } from '../features/tools/components/tool-page.tsx';
import { ToolsPage } from '../features/tools/components/tools-page.tsx';
import { SsoPage } from '../features/sso/components/sso-page.tsx';
import { TokensPage } from '../features/tokens/components/tokens-page.tsx';
import type { Location } from '../lib/router.ts';

/** The page for a hash route. */
export function routeFor(loc: Location, session: Session): ReactNode {
  const [section = 'home', id, sub = '', item] = loc.segments;
  switch (section) {
    case 'home':
      return <HomePage session={session} />;
    case 'tools':
      if (id === 'new') return <ToolPage id={null} session={session} />;
      return id ? <ToolPage id={id} session={session} /> : <ToolsPage session={session} />;
    case 'agents':
      return id ? <AgentPage subject={id} /> : <AgentsPage />;
    case 'groups':
      return <GroupsPage session={session} />;
    case 'states':
      return <StatesPage session={session} />;
    case 'mcp':
      return <McpPage session={session} />;
    case 'approvals':
      return <ApprovalsPage session={session} />;
    case 'audit':
      return <AuditPage session={session} />;
    case 'tokens':
      return <TokensPage session={session} />;
    case 'sso':
      return <SsoPage session={session} />;
    case 'keys':
      return <KeysPage session={session} />;
    case 'tenants':
      if (!id) return <TenantsPage session={session} />;
      return (
        <TenantLayout tenant={id} tab={sub}>
          {sub === 'grants' ? (
            <GrantsPage tenant={id} session={session} />
          ) : sub === 'tests' ? (
            <TestsPage tenant={id} session={session} />
          ) : sub === 'publish' ? (
            <PublishPage tenant={id} session={session} />
          ) : sub === 'reviews' ? (
            item ? (
              <ReviewPage tenant={id} id={item} session={session} />
            ) : (
              <ReviewList tenant={id} />
            )
          ) : sub === 'decisions' ? (
            <DecisionsPage tenant={id} session={session} />
          ) : (
            <PolicyPage tenant={id} session={session} />
          )}
        </TenantLayout>
      );
    default:
      return (
        <section className="page">
          <h1>Not found</h1>
          <p>
            There is no page at <code>{loc.path}</code>.
          </p>
        </section>
      );
  }
}
