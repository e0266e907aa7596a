import { useId, useState } from 'react';
import type { EvaluationRequest, EvaluationResult, TenantPolicy } from '../../../../../policy-schemas/types.gen.ts';
import { Badge } from '../../../components/badge.tsx';
import { Notice } from '../../../components/notice.tsx';
import { useTryCall } from '../api/try-call.ts';

/**
 * "Try a call": a tool and its arguments (the JSON a model would emit), decided under the
 * simulator's request as a runtime would decide them, argument constraints included. Shows the
 * decision, the error code and the constraint that decided, never storing anything.
 */
export function TryCall({
  tenant,
  request,
  unsaved,
  visible,
}: {
  tenant: string;
  request: EvaluationRequest;
  unsaved?: TenantPolicy;
  /** The answer's visible tools, offered as names. */
  visible: EvaluationResult['tools'];
}) {
  const ids = useId();
  const [name, setName] = useState(visible[0]?.id ?? '');
  const [args, setArgs] = useState('{}');
  const [connectionId, setConnectionId] = useState('');
  const attempt = useTryCall(tenant);
  const outcome = attempt.data;
  return (
    <section className="try-call" aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`}>Try a call</h3>
      <form
        aria-label="Try a call"
        onSubmit={(e) => {
          e.preventDefault();
          if (!name.trim()) return;
          attempt.mutate({
            request,
            unsaved,
            call: { name: name.trim(), arguments: args, ...(connectionId.trim() ? { connectionId: connectionId.trim() } : {}) },
          });
        }}
      >
        <div className="field">
          <label htmlFor={`${ids}-tool`}>Tool</label>
          <input id={`${ids}-tool`} className="mono" list={`${ids}-tools`} value={name} onChange={(e) => setName(e.target.value)} />
          <datalist id={`${ids}-tools`}>
            {visible.map((t) => (
              <option key={t.id} value={t.id} />
            ))}
          </datalist>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-args`}>Arguments (JSON)</label>
          <textarea id={`${ids}-args`} className="mono" rows={4} value={args} onChange={(e) => setArgs(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${ids}-conn`}>Connection id (optional)</label>
          <input id={`${ids}-conn`} value={connectionId} onChange={(e) => setConnectionId(e.target.value)} />
        </div>
        <button type="submit" className="primary" disabled={attempt.isPending || !name.trim()}>
          Try
        </button>
      </form>
      {attempt.error ? <Notice error={attempt.error} /> : null}
      {outcome ? (
        <div role="status" aria-label="Call decision" className="try-call-outcome">
          <p>
            Decision: <Badge tone={outcome.decision === 'allow' ? 'ok' : outcome.decision === 'deny' ? 'bad' : 'warn'}>{outcome.decision}</Badge>
            {outcome.errorCode ? (
              <>
                {' '}
                Error code: <span className="mono">{outcome.errorCode}</span>
              </>
            ) : null}
          </p>
          {outcome.constraint ? (
            <p>
              Decided by constraint {outcome.constraint.index} of role {outcome.constraint.role} ({outcome.constraint.otherwise}): {outcome.constraint.reason}
            </p>
          ) : null}
          {outcome.message ? <p className="muted small">{outcome.message}</p> : null}
          {outcome.errors?.length ? (
            <ul className="small">
              {outcome.errors.map((e) => (
                <li key={`${e.pointer}\u0000${e.message}`}>
                  <span className="mono">{e.pointer || '/'}</span> {e.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
