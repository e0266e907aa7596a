import { ApiError } from '../lib/api-client.ts';

/** An in-place answer to a mutation: success as a status message, failure as an alert with the server's words. */
export function Notice({ error, success }: { error?: unknown; success?: string | null }) {
  if (error) {
    const e = error instanceof ApiError ? error : null;
    return (
      <div role="alert" className="notice notice-error">
        <strong>{e ? e.title : 'Something went wrong'}</strong>
        {e?.detail && e.detail !== e.title ? <span> — {e.detail}</span> : null}
        {!e && error instanceof Error ? <span> — {error.message}</span> : null}
        {e && e.errors.length > 0 ? (
          <ul>
            {e.errors.map((fe, i) => (
              <li key={i}>
                <code>{fe.pointer || '/'}</code> {fe.message}
              </li>
            ))}
          </ul>
        ) : null}
        {e?.requestId ? <small className="muted"> Request {e.requestId}</small> : null}
      </div>
    );
  }
  if (success)
    return (
      <div role="status" className="notice notice-success">
        {success}
      </div>
    );
  return <div role="status" className="notice-empty" />;
}
