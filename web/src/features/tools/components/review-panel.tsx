import { useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { DiffView } from '../../../components/diff-view.tsx';
import { Notice } from '../../../components/notice.tsx';
import { pretty } from '../../../lib/json.ts';
import { href } from '../../../lib/router.ts';
import { useApproveTool } from '../api/approve-tool.ts';

/**
 * A quarantined imported tool: what changed since approval, and approve. Only approval takes a tool
 * out of quarantine; left unapproved it stays out of every bundle.
 */
export function ReviewPanel({ tool, editable }: { tool: Tool; editable: boolean }) {
  const approve = useApproveTool();
  const [done, setDone] = useState<string | null>(null);
  const review = tool.review!;
  return (
    <section className="review" aria-label={`Review ${tool.id}`}>
      <h2>{review.previous ? 'Definition changed since approval' : 'New imported tool awaiting review'}</h2>
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
        <pre className="definition" aria-label={`Offered definition of ${tool.id}`}>
          {pretty(review.current)}
        </pre>
      )}
      {editable ? (
        <div className="button-row">
          <button
            type="button"
            className="primary"
            disabled={approve.isPending}
            onClick={() =>
              approve.mutate(
                { id: tool.id, version: tool.version, definitionHash: review.current.definitionHash },
                { onSuccess: () => setDone(`Approved ${tool.id}.`) },
              )
            }
          >
            Approve
          </button>
        </div>
      ) : null}
      <Notice error={approve.error} success={done} />
    </section>
  );
}
