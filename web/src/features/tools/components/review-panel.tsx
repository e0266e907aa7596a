import { useState } from 'react';
import type { Tool } from '../../../../../policy-schemas/types.gen.ts';
import { DataTable } from '../../../components/data-table.tsx';
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
  compact = false,
}: {
  tool: Tool;
  editable: boolean;
  selected?: boolean;
  onSelect?: (selected: boolean) => void;
  onApproved: (result: BulkApproval) => void;
  /** In a long queue: one line per tool until its definition is asked for. */
  compact?: boolean;
}) {
  const [approving, setApproving] = useState(false);
  const [open, setOpen] = useState(!compact);
  const review = tool.review!;
  const params = Object.keys((review.current.inputSchema as { properties?: Record<string, unknown> }).properties ?? {});
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
      {compact ? (
        <p className="small">
          {review.current.description ?? <span className="muted">No description.</span>}{' '}
          <span className="muted">
            · {params.length ? `parameters ${params.join(', ')}` : 'no parameters'}
            {Object.keys(tool.source?.hints ?? {}).length
              ? ` · claims ${Object.entries(tool.source?.hints ?? {})
                  .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
                  .join(', ')}`
              : ''}
          </span>{' '}
          <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide the definition' : review.previous ? 'Show what changed' : 'Show the definition'}
            <span className="sr-only"> of {tool.id}</span>
          </button>
        </p>
      ) : null}
      {open ? (
        review.previous ? (
          <DiffView before={review.previous} after={review.current} label={`Definition diff of ${tool.id}`} />
        ) : (
          <OfferedDefinition tool={tool} definition={review.current} />
        )
      ) : null}
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

type Definition = NonNullable<Tool['review']>['current'];
type Property = { type?: unknown; description?: unknown; enum?: unknown[] };

/** A JSON Schema type in words: `string`, `integer or null`, `one of "a", "b"`. */
function typeWords(p: Property): string {
  if (Array.isArray(p.enum)) return `one of ${p.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (Array.isArray(p.type)) return p.type.join(' or ');
  return typeof p.type === 'string' ? p.type : 'any';
}

/**
 * A new tool as its server offers it, read as a person reads it: what it says it does, its
 * parameters (name, type, required, description), what the server claims of it; the raw
 * definition only on request.
 */
function OfferedDefinition({ tool, definition }: { tool: Tool; definition: Definition }) {
  const schema = definition.inputSchema as { properties?: Record<string, Property>; required?: string[] };
  const params = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const hints = Object.entries(tool.source?.hints ?? {});
  return (
    <fieldset className="offered-definition plain" aria-label={`Offered definition of ${tool.id}`}>
      <p>{definition.description ? definition.description : <span className="muted">The server gives no description.</span>}</p>
      {params.length ? (
        <div className="table-wrap">
          <DataTable label={`Parameters of ${tool.id}`} columns={['Parameter', 'Type', 'Required', 'Description']} compact>
            {params.map(([name, p]) => (
              <tr key={name}>
                <td className="mono">{name}</td>
                <td className="mono small">{typeWords(p)}</td>
                <td>{required.has(name) ? 'yes' : 'no'}</td>
                <td className="small">{typeof p.description === 'string' ? p.description : ''}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ) : (
        <p className="muted small">No parameters.</p>
      )}
      <p className="small">
        {hints.length ? (
          <>The server claims (not trusted): {hints.map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ')}.</>
        ) : (
          <span className="muted">The server makes no claim about what the tool does.</span>
        )}
        {definition.outputSchema ? ' It declares an output schema.' : ''}
      </p>
      <details>
        <summary>Full definition as offered (JSON)</summary>
        <pre className="definition">{pretty(definition)}</pre>
      </details>
    </fieldset>
  );
}
