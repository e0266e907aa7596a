/** Renders the engine's bundle diff without assuming more of its shape than JSON: nested lists, with added/removed coloured. */
export function DiffSummary({ value, depth = 0 }: { value: unknown; depth?: number }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  if (Array.isArray(value)) {
    if (!value.length) return <span className="muted">none</span>;
    if (value.every((v) => typeof v !== 'object' || v === null))
      return (
        <span className="chips">
          {value.map((v, i) => (
            <span key={i} className="chip mono">
              {String(v)}
            </span>
          ))}
        </span>
      );
    return (
      <ol className="diff-list">
        {value.map((v, i) => (
          <li key={i}>
            <DiffSummary value={v} depth={depth + 1} />
          </li>
        ))}
      </ol>
    );
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) return <span className="muted">no changes</span>;
    return (
      <dl className={`diff-dl depth-${Math.min(depth, 3)}`}>
        {entries.map(([k, v]) => (
          <div key={k} className={/^(added|enabled|visible|new)/i.test(k) ? 'diff-added' : /^(removed|disabled|hidden|deleted)/i.test(k) ? 'diff-removed' : /changed/i.test(k) ? 'diff-changed' : undefined}>
            <dt>{k}</dt>
            <dd>
              <DiffSummary value={v} depth={depth + 1} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return <span className="mono">{String(value)}</span>;
}
