import { diffJson } from '../lib/json.ts';

function show(v: unknown): string {
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
}

/** A table of what changed between two JSON values, path by path. */
export function DiffView({ before, after, label = 'Changes', empty = 'No differences.' }: { before: unknown; after: unknown; label?: string; empty?: string }) {
  const changes = diffJson(before ?? null, after ?? null);
  if (!changes.length) return <p className="muted">{empty}</p>;
  return (
    <table className="diff-table" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.path} className={`diff-${c.kind}`}>
            <th scope="row">
              <code>{c.path}</code>
            </th>
            <td className="diff-before">
              <code>{show(c.before)}</code>
            </td>
            <td className="diff-after">
              <code>{show(c.after)}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
