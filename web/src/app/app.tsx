import { useEffect, useRef, useState, type ReactNode } from 'react';
import { LoginPage } from '../features/auth/components/login-page.tsx';
import { useSession, type Session } from '../features/auth/api/get-session.ts';
import { useLogout } from '../features/auth/api/logout.ts';
import { RouteErrorBoundary } from '../components/error-boundary.tsx';
import { Loading } from '../components/page.tsx';
import { Notice } from '../components/notice.tsx';
import { clearFlash, useFlash } from '../lib/flash.ts';
import { canReadAudit, may } from '../lib/permissions.ts';
import { href, useLocation } from '../lib/router.ts';
import { routeFor } from './routes.tsx';

export function App() {
  const session = useSession();
  if (session.isPending) return <Loading what="session" />;
  if (session.error) return <Notice error={session.error} />;
  if (!session.data) return <LoginPage />;
  return <Shell session={session.data} />;
}

/** Whether the session may decide approval requests somewhere (its role, or a role it holds in some tenant). */
function mayDecideApprovals(session: Session): boolean {
  return may(session, 'approval', 'decide') || Object.keys(session.permissions.tenants).some((t) => may(session, 'approval', 'decide', t));
}

function Shell({ session }: { session: Session }) {
  const loc = useLocation();
  const logout = useLogout();
  const section = loc.segments[0] ?? 'home';
  const nav: { key: string; label: string; show: boolean }[] = [
    { key: 'home', label: 'Home', show: true },
    { key: 'tools', label: 'Tools', show: true },
    { key: 'groups', label: 'Groups', show: true },
    { key: 'states', label: 'States', show: true },
    { key: 'tenants', label: 'Tenants', show: true },
    { key: 'agents', label: 'Agents', show: true },
    { key: 'mcp', label: 'MCP servers', show: true },
    { key: 'approvals', label: 'Approvals', show: mayDecideApprovals(session) },
    { key: 'audit', label: 'Audit', show: canReadAudit(session) },
    { key: 'tokens', label: 'Tokens', show: may(session, 'token', 'write') },
    { key: 'sso', label: 'Single sign-on', show: may(session, 'sso', 'read') },
    { key: 'keys', label: 'Keys', show: may(session, 'key', 'read') },
  ];
  const page: ReactNode = routeFor(loc, session);
  const title = nav.find((n) => n.key === section)?.label;
  useEffect(() => {
    document.title = [loc.segments[1], title, 'Toolgate'].filter(Boolean).join(' · ');
  }, [loc.segments, title]);
  const [menuOpen, setMenuOpen] = useState(false);
  const flashed = useFlash();
  useHeadingFocus(loc.path);
  useEffect(() => {
    setMenuOpen(false);
    clearFlash(loc.path);
  }, [loc.path]);
  return (
    <div className="shell">
      {/* A button, not a link: `#main` would be taken for an in-app route by the hash router. */}
      <button type="button" className="skip-link" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header className="topbar">
        <a className="brand" href={href('/')}>
          <span className="logo" aria-hidden="true">
            ◆
          </span>{' '}
          Toolgate
        </a>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav aria-label="Main" id="main-nav" className={menuOpen ? 'open' : undefined}>
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
          <span title={session.user ? `${session.user.id}${session.user.email ? ` <${session.user.email}>` : ''}` : `Token ${session.tokenId}`}>
            {session.user?.name ?? session.user?.email ?? session.label} <span className="badge badge-info">{session.role}</span>
            {session.tenants.length ? <span className="muted"> · {session.tenants.join(', ')}</span> : null}
          </span>
          <button type="button" className="link-button" onClick={() => logout.mutate()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {flashed && (flashed.path === null || flashed.path === loc.path) ? (
          <div role="status" className="notice notice-success flash">
            {flashed.text}
          </div>
        ) : null}
        <RouteErrorBoundary resetKey={loc.path}>{page}</RouteErrorBoundary>
      </main>
    </div>
  );
}

/**
 * After an in-app navigation, focus moves to the new page's main heading (once it has rendered),
 * so keyboard and screen-reader users start where the page starts. The first page after sign-in
 * keeps the browser's own start.
 */
function useHeadingFocus(path: string): void {
  const shown = useRef(path);
  useEffect(() => {
    // The first page keeps the browser's own start, and a re-run for the same path moves nothing.
    if (shown.current === path) return;
    shown.current = path;
    let tries = 0;
    let frame = 0;
    const attempt = () => {
      const main = document.getElementById('main');
      const heading = main?.querySelector<HTMLElement>('h1');
      // Something inside the new page (e.g. a created item) already took focus: leave it there.
      if (
        main &&
        document.activeElement &&
        document.activeElement !== document.body &&
        main.contains(document.activeElement) &&
        document.activeElement !== main
      )
        return;
      if (heading) {
        if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
        heading.focus();
      } else if (tries++ < 120) frame = requestAnimationFrame(attempt);
    };
    frame = requestAnimationFrame(attempt);
    return () => cancelAnimationFrame(frame);
  }, [path]);
}
