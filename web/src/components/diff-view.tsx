import { diffJson } from '../lib/json.ts';

function show(v: unknown): string {
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
}

const scalar = (v: unknown) => v === null || typeof v !== 'object';

/** Lists of scalars (globs, groups, roles) read best as what was removed and what was added. */
function Cells({ before, after }: { before: unknown; after: unknown }) {
  if (Array.isArray(before) && Array.isArray(after) && before.every(scalar) && after.every(scalar)) {
    const b = before.map(show);
    const a = after.map(show);
    const removed = b.filter((x) => !a.includes(x));
    const added = a.filter((x) => !b.includes(x));
    const kept = a.length - added.length;
    if (removed.length || added.length)
      return (
        <>
          <td className="diff-before">
            {removed.map((x) => (
              <div key={x}>
                <code>− {x}</code>
              </div>
            ))}
          </td>
          <td className="diff-after">
            {added.map((x) => (
              <div key={x}>
                <code>+ {x}</code>
              </div>
            ))}
            {kept ? <div className="muted small">{kept} unchanged</div> : null}
          </td>
        </>
      );
  }
  return (
    <>
      <td className="diff-before">
        <code>{show(before)}</code>
      </td>
      <td className="diff-after">
        <code>{show(after)}</code>
      </td>
    </>
  );
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
            <Cells before={c.before} after={c.after} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}
