import { useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { Notice } from '../../../components/notice.tsx';
import { href } from '../../../lib/router.ts';
import { useTools } from '../api/get-tools.ts';
import { ApprovalForm } from './approval-form.tsx';
import { ApprovalOutcome } from './approval-outcome.tsx';
import { ReviewPanel } from './review-panel.tsx';

// A few tools are shown whole; a longer queue lists one line per tool, each opened on request.
const COMPACT_AFTER = 3;

/**
 * Quarantined imported tools, each reviewable; several can be approved at once with the same
 * answers. The outcome of the last approval stays on screen after its cards are gone.
 */
export function ReviewQueue({ editable }: { editable: boolean }) {
  const quarantined = useTools({ status: 'quarantined', source: 'mcp' });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulk, setBulk] = useState(false);
  const [approved, setApproved] = useState<Tool[] | null>(null);
  const items = quarantined.data ?? [];
  const chosen = items.filter((t) => selected.has(t.id) && t.review);
  const done = (tools: Tool[]) => {
    if (!tools.length) return;
    setApproved(tools);
    setBulk(false);
    setSelected(new Set());
  };
  return (
    <section aria-label="Review queue">
      <h2>Review queue</h2>
      {approved ? <ApprovalOutcome key={approved.map((t) => `${t.id}@${t.version}`).join()} tools={approved} /> : null}
      {quarantined.error ? <Notice error={quarantined.error} /> : null}
      {quarantined.data?.length === 0 ? <p className="muted">No quarantined tool awaits review.</p> : null}
      {editable && chosen.length ? (
        <fieldset className="bulk-bar sticky" aria-label="Bulk approval">
          <span>{chosen.length} selected</span>
          <button type="button" className="primary" onClick={() => setBulk(true)} disabled={bulk}>
            Approve selected…
          </button>
          <button type="button" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </fieldset>
      ) : null}
      {editable && bulk && chosen.length ? <ApprovalForm tools={chosen} onApproved={(r) => done(r.approved)} onCancel={() => setBulk(false)} /> : null}
      {items.map((t) =>
        t.review ? (
          <ReviewPanel
            key={`${t.id}:${t.version}`}
            tool={t}
            editable={editable}
            selected={selected.has(t.id)}
            onSelect={(on) => {
              const next = new Set(selected);
              if (on) next.add(t.id);
              else next.delete(t.id);
              setSelected(next);
            }}
            onApproved={(r) => done(r.approved)}
            compact={items.length > COMPACT_AFTER}
          />
        ) : (
          <p key={t.id}>
            <a href={href(`/tools/${encodeURIComponent(t.id)}`)}>{t.id}</a> is quarantined.
          </p>
        ),
      )}
    </section>
  );
}
