import { useId, useState } from 'react';
import { Badge } from '../../../components/badge.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Notice } from '../../../components/notice.tsx';
import { Loading, PageHeader } from '../../../components/page.tsx';
import type { Session } from '../../auth/api/get-session.ts';
import { keysChangedMeanwhile, useChangeKeys, type KeyChange } from '../api/change-keys.ts';
import { useKeys, type KeyOverview } from '../api/get-keys.ts';
import { may } from '../../../lib/permissions.ts';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

const statusTone = { next: 'info', active: 'ok', retired: 'muted' } as const;
const delays: [string, number | undefined][] = [
  ['by hand (promote below)', undefined],
  ['after 1 hour', 3600],
  ['after 24 hours', 86400],
  ['after 7 days', 7 * 86400],
];

/**
 * The signing keys and the root-signed key set. Everyone who signs in sees the status; admins
 * rotate (add a next key), promote and retire, each with a reason, each audited.
 */
export function KeysPage({ session }: { session: Session }) {
  const keys = useKeys();
  const change = useChangeKeys();
  const admin = may(session, 'key', 'write');
  const [reason, setReason] = useState('');
  const [delay, setDelay] = useState(0);
  const [done, setDone] = useState<string | null>(null);
  const ids = useId();
  const data = keys.data;
  const canChange = admin && !!data?.rootOnServer;
  // Every change names the key-set version shown here; if the keys changed meanwhile, nothing is done.
  const run = (c: DistributiveOmit<KeyChange, 'keySetVersion'>, said: string) => {
    if (!data) return;
    setDone(null);
    change.mutate(
      { ...c, keySetVersion: data.keySet.version },
      {
        onSuccess: (r) => {
          setDone(`${said} Key set is now version ${r.keySetVersion}.`);
          setReason('');
        },
      },
    );
  };

  return (
    <section className="page">
      <PageHeader
        title="Keys"
        subtitle="Runtimes trust only the root key; the root signs the key set, which lists the keys that may sign bundles. Rotation is staged: a next key is published before it signs, promoted once runtimes have it, and the old key retired once no tenant's latest bundle uses it."
      />
      {keys.isPending ? <Loading what="keys" /> : null}
      {keys.error ? <Notice error={keys.error} /> : null}
      {data ? (
        <>
          <KeySetCard data={data} />
          {admin && !data.rootOnServer ? (
            <p role="note" className="notice notice-warn">
              The root key is kept off this server, so the key set cannot be changed here. Use <code>toolgate keys rotate|promote|retire --root-key FILE</code>{' '}
              where the root key is kept.
            </p>
          ) : null}
          {canChange ? (
            // Every key change needs a reason: asked for before the table whose buttons use it.
            <div className="field">
              <label htmlFor={`${ids}-reason`}>Reason for the change (required, audited)</label>
              <input id={`${ids}-reason`} required value={reason} aria-describedby={`${ids}-why`} onChange={(e) => setReason(e.target.value)} />
              <p id={`${ids}-why`} className={reason.trim() ? 'muted small' : 'hint'}>
                {reason.trim()
                  ? 'Promote, Retire and Add next key record this reason in the audit log.'
                  : 'Promote, Retire and Add next key stay disabled until you write why you change the keys.'}
              </p>
            </div>
          ) : null}
          <div className="table-wrap">
            <DataTable label="Signing keys" columns={['Key', 'Status', 'Created', 'Latest bundle of']} actions={canChange}>
              {data.keys.map((k) => (
                <tr key={k.kid}>
                  <td className="mono small break">{k.kid}</td>
                  <td>
                    <Badge tone={statusTone[k.status]}>{k.status}</Badge> {k.signing ? <Badge tone="ok">signing</Badge> : null}
                    {k.promoteAt ? <span className="muted small"> promotes {new Date(k.promoteAt).toLocaleString()}</span> : null}
                  </td>
                  <td>{new Date(k.createdAt).toLocaleString()}</td>
                  <td>{k.latestBundleOf.length ? k.latestBundleOf.join(', ') : <span className="muted">none</span>}</td>
                  {canChange ? (
                    <td>
                      {k.status === 'next' ? (
                        <button
                          type="button"
                          aria-label={`Promote ${k.kid}`}
                          aria-describedby={`${ids}-why`}
                          disabled={!reason.trim() || change.isPending}
                          onClick={() => run({ kind: 'promote', kid: k.kid, reason }, `${k.kid} now signs.`)}
                        >
                          Promote
                        </button>
                      ) : null}
                      {k.status === 'active' && !k.signing ? (
                        <button
                          type="button"
                          className="danger"
                          aria-label={`Retire ${k.kid}`}
                          aria-describedby={`${ids}-why`}
                          disabled={!reason.trim() || change.isPending}
                          title={k.latestBundleOf.length ? "Re-issues those tenants' bundles with the signing key first" : undefined}
                          onClick={() => {
                            const reissue = k.latestBundleOf.length > 0;
                            const q = reissue
                              ? `Retire ${k.kid}? The latest bundle of ${k.latestBundleOf.join(', ')} is re-signed with the signing key first; runtimes then refuse anything this key signed.`
                              : `Retire ${k.kid}? Runtimes refuse anything this key signed from the next key set on.`;
                            if (window.confirm(q)) run({ kind: 'retire', kid: k.kid, reason, reissue }, `${k.kid} retired.`);
                          }}
                        >
                          {k.latestBundleOf.length ? 'Re-issue and retire' : 'Retire'}
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </DataTable>
          </div>
          {canChange ? (
            <form
              className="card"
              aria-label="Change keys"
              onSubmit={(e) => {
                e.preventDefault();
                const after = delays[delay][1];
                run(
                  { kind: 'rotate', reason, ...(after !== undefined ? { promoteAfterSeconds: after } : {}) },
                  after !== undefined
                    ? 'A next key was added; it is promoted on schedule.'
                    : 'A next key was added; promote it once runtimes have the new key set.',
                );
              }}
            >
              <div className="field">
                <label htmlFor={`${ids}-delay`}>Promote the new key</label>
                <select id={`${ids}-delay`} value={delay} onChange={(e) => setDelay(Number(e.target.value))}>
                  {delays.map(([label], i) => (
                    <option key={label} value={i}>
                      {label}
                    </option>
                  ))}
                </select>
              </div>
              <button type="submit" className="primary" aria-describedby={`${ids}-why`} disabled={!reason.trim() || change.isPending}>
                Add next key
              </button>
            </form>
          ) : !admin ? (
            <p className="muted">Only admins change keys.</p>
          ) : null}
          {keysChangedMeanwhile(change.error) ? (
            <div role="alert" className="notice notice-error">
              <strong>Someone else changed the keys</strong> — the key set is now v{data.keySet.version}, not the version this page showed, so nothing was
              changed. The keys above are current: check them and try again.
            </div>
          ) : (
            <Notice error={change.error} success={done} />
          )}
        </>
      ) : null}
    </section>
  );
}

function KeySetCard({ data }: { data: KeyOverview }) {
  const expires = new Date(data.keySet.expiresAt);
  return (
    <section className="card" aria-label="Key set">
      <p>
        Key set <strong>v{data.keySet.version}</strong>, signed {new Date(data.keySet.issuedAt).toLocaleString()}, expires {expires.toLocaleString()} (re-issued
        by the server before then
        {data.rootOnServer ? '' : ', which needs the root key'}).
      </p>
      <p>
        Root{data.roots.length > 1 ? 's' : ''}:{' '}
        {data.roots.map((r) => (
          <span key={r.kid}>
            <span className="mono small break">{r.kid}</span>{' '}
            {r.available ? <Badge tone="warn">on this server</Badge> : <Badge tone="ok">kept elsewhere</Badge>}{' '}
          </span>
        ))}
      </p>
      <p className="muted small">
        Configure runtimes with the root public key (<code>toolgate keys root</code>), never with signing keys: then rotation needs no change on any runtime.
      </p>
    </section>
  );
}
