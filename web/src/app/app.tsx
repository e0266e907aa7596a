import { useEffect, type ReactNode } from 'react';
import { LoginPage } from '../features/auth/components/login-page.tsx';
import { useSession, type Session } from '../features/auth/api/get-session.ts';
import { useLogout } from '../features/auth/api/logout.ts';
import { RouteErrorBoundary } from '../components/error-boundary.tsx';
import { Loading } from '../components/page.tsx';
import { Notice } from '../components/notice.tsx';
import { canReadAudit } from '../lib/permissions.ts';
import { href, useLocation } from '../lib/router.ts';
import { routeFor } from './routes.tsx';

export function App() {
  const session = useSession();
  if (session.isPending) return <Loading what="session" />;
  if (session.error) return <Notice error={session.error} />;
  if (!session.data) return <LoginPage />;
  return <Shell session={session.data} />;
}

function Shell({ session }: { session: Session }) {
  const loc = useLocation();
  const logout = useLogout();
  const section = loc.segments[0] ?? 'tools';
  const nav: { key: string; label: string; show: boolean }[] = [
    { key: 'tools', label: 'Tools', show: true },
    { key: 'groups', label: 'Groups', show: true },
    { key: 'states', label: 'States', show: true },
    { key: 'tenants', label: 'Tenants', show: true },
    { key: 'mcp', label: 'MCP servers', show: true },
    { key: 'audit', label: 'Audit', show: canReadAudit(session) },
    { key: 'tokens', label: 'Tokens', show: session.role === 'admin' },
    { key: 'keys', label: 'Keys', show: session.role !== 'runtime' },
  ];
  const page: ReactNode = routeFor(loc, session);
  const title = nav.find((n) => n.key === section)?.label;
  useEffect(() => {
    document.title = [loc.segments[1], title, 'Toolgate'].filter(Boolean).join(' · ');
  }, [loc.segments, title]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href={href('/tools')}>
          <span className="logo" aria-hidden="true">◆</span> Toolgate
        </a>
        <nav aria-label="Main">
          <ul>
            {nav
              .filter((n) => n.show)
              .map((n) => (
                <li key={n.key}>
                  <a href={href(`/${n.key}`)} aria-current={section === n.key ? 'page' : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div className="who">
          <span title={`Token ${session.tokenId}`}>
            {session.label} <span className="badge badge-info">{session.role}</span>
            {session.tenants.length ? <span className="muted"> · {session.tenants.join(', ')}</span> : null}
          </span>
          <button type="button" className="link-button" onClick={() => logout.mutate()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <RouteErrorBoundary resetKey={loc.path}>{page}</RouteErrorBoundary>
      </main>
    </div>
  );
}
