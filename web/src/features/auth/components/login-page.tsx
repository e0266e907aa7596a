import { useEffect, useRef, useState } from 'react';
import { Notice } from '../../../components/notice.tsx';
import { useSsoEnabled } from '../../sso/api/sso-mappings.ts';
import { useLogin } from '../api/login.ts';

/** Signs in with an API token; the server answers with an HttpOnly session cookie. */
export function LoginPage() {
  const [token, setToken] = useState('');
  const login = useLogin();
  const sso = useSsoEnabled();
  // The token field is the one thing to fill in: it has focus when the page opens.
  const tokenField = useRef<HTMLInputElement>(null);
  useEffect(() => {
    tokenField.current?.focus();
  }, []);
  return (
    <main className="login">
      <form
        className="login-card"
        aria-labelledby="login-title"
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate(token.trim());
        }}
      >
        <h1 id="login-title">
          <span className="logo" aria-hidden="true">
            ◆
          </span>{' '}
          Toolgate
        </h1>
        <p className="muted">Sign in with an API token. The token is exchanged for a session and not kept in the browser.</p>
        <div className="field">
          <label htmlFor="login-token">API token</label>
          <input
            ref={tokenField}
            id="login-token"
            type="password"
            autoComplete="current-password"
            required
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </div>
        <button type="submit" className="primary" disabled={login.isPending || !token.trim()}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        <Notice error={login.error} />
        {sso.data ? (
          <p className="sso-sign-in">
            <a className="button" href="/v1/session/sso/start">
              Sign in with SSO
            </a>
          </p>
        ) : null}
      </form>
    </main>
  );
}
