import { useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { DiffView } from '../../../components/diff-view.tsx';
import { pretty } from '../../../lib/json.ts';
import { href } from '../../../lib/router.ts';
import type { BulkApproval } from '../api/approve-tool.ts';
import { ApprovalForm } from './approval-form.tsx';

/**
 * A quarantined imported tool: what changed since approval, and approve (a short form); `selected`
 * puts it in a bulk approval. Only approval takes a tool out of quarantine; left unapproved it stays
 * out of every bundle.
 */
export function ReviewPanel({
  tool,
  editable,
  selected,
  onSelect,
  onApproved,
}: {
  tool: Tool;
  editable: boolean;
  selected?: boolean;
  onSelect?: (selected: boolean) => void;
  onApproved: (result: BulkApproval) => void;
}) {
  const [approving, setApproving] = useState(false);
  const review = tool.review!;
  return (
    <section className="review card" aria-label={`Review ${tool.id}`}>
      <header className="card-header">
        <h3>{review.previous ? 'Definition changed since approval' : 'New imported tool awaiting review'}</h3>
        {editable && onSelect ? (
          <label className="check">
            <input type="checkbox" checked={!!selected} onChange={(e) => onSelect(e.target.checked)} /> Select {tool.id} for bulk approval
          </label>
        ) : null}
      </header>
      <p className="muted">
        <a href={href(`/tools/${encodeURIComponent(tool.id)}`)}>
          <code>{tool.id}</code>
        </a>
        {tool.source?.server ? (
          <>
            {' '}
            from MCP server <code>{tool.source.server}</code>, offered as <code>{tool.source.originalName}</code>
          </>
        ) : null}
        . Detected {new Date(review.detectedAt).toLocaleString()}.
      </p>
      {review.previous ? (
        <DiffView before={review.previous} after={review.current} label={`Definition diff of ${tool.id}`} />
      ) : (
        <figure className="definition-figure" aria-label={`Offered definition of ${tool.id}`}>
          <pre className="definition">{pretty(review.current)}</pre>
        </figure>
      )}
      {review.problems?.length ? (
        <div className="notice notice-warn" role="note">
          Cannot be approved as offered: {review.problems.map((p) => `${p.pointer} ${p.message}`).join('; ')}
        </div>
      ) : null}
      {editable && approving ? <ApprovalForm tools={[tool]} onApproved={onApproved} onCancel={() => setApproving(false)} /> : null}
      {editable && !approving ? (
        <div className="button-row">
          <button type="button" className="primary" onClick={() => setApproving(true)}>
            Approve…<span className="sr-only"> {tool.id}</span>
          </button>
        </div>
      ) : null}
    </section>
  );
}
