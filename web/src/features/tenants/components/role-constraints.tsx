import { useId, useState } from 'react';
import type { Role } from '../../../../../policy-schemas/types.gen.ts';
import { DataTable } from '../../../components/data-table.tsx';

type Constraints = NonNullable<Role['constraints']>;

/**
 * A role's argument constraints: listed (tools, otherwise, reason) and edited as JSON, the form
 * the tenant policy stores. The server's judge answers a bad schema with its pointer
 * (`/roles/<role>/constraints/<i>/arguments/…`), shown with the role's other errors.
 */
export function RoleConstraints({
  role,
  value,
  onChange,
  editable,
}: {
  role: string;
  value: Constraints;
  onChange: (constraints: Constraints) => void;
  editable: boolean;
}) {
  const ids = useId();
  const shown = JSON.stringify(value, null, 2);
  const [text, setText] = useState(shown);
  const [problem, setProblem] = useState<string | null>(null);
  // A change from elsewhere (a reset, a reload) replaces what is typed, unless it is being edited into it.
  const [seen, setSeen] = useState(shown);
  if (seen !== shown) {
    setSeen(shown);
    if (problem === null) setText(shown);
  }
  return (
    <div className="role-constraints">
      <h4>Argument constraints</h4>
      {value.length ? (
        <div className="table-wrap">
          <DataTable label={`Argument constraints of ${role}`} columns={['#', 'Tools', 'Otherwise', 'Reason']} compact>
            {value.map((c, i) => (
              <tr key={`${i}\u0000${c.reason}`}>
                <td>{i}</td>
                <td className="mono">{c.tools.join(', ')}</td>
                <td>{c.otherwise === 'deny' ? 'deny' : 'require approval'}</td>
                <td>{c.reason}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ) : (
        <p className="muted small">None: calls of {role}'s tools are not checked beyond their input schemas.</p>
      )}
      {editable ? (
        <div className="field">
          <label htmlFor={`${ids}-json`}>Argument constraints of {role} (JSON)</label>
          <textarea
            id={`${ids}-json`}
            className="mono"
            rows={Math.min(12, Math.max(3, text.split('\n').length))}
            value={text}
            aria-invalid={problem !== null}
            aria-describedby={problem ? `${ids}-problem` : undefined}
            onChange={(e) => {
              setText(e.target.value);
              let parsed: unknown;
              try {
                parsed = JSON.parse(e.target.value === '' ? '[]' : e.target.value);
              } catch (err) {
                setProblem(`not JSON: ${(err as Error).message}`);
                return;
              }
              if (!Array.isArray(parsed)) {
                setProblem('must be a list: [{ "tools": [...], "otherwise": "deny", "arguments": {...}, "reason": "..." }]');
                return;
              }
              setProblem(null);
              onChange(parsed as Constraints);
            }}
          />
          {problem ? (
            <p id={`${ids}-problem`} className="field-error" role="alert">
              {problem}
            </p>
          ) : (
            <p className="muted small">
              Each: tool globs, <code>otherwise</code> (<code>deny</code> or <code>require_approval</code>), a JSON Schema over the arguments, and the reason
              shown to the agent.
            </p>
          )}
        </div>
      ) : null}
    </div>
  );
}
