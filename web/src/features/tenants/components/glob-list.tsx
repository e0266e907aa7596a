import { useId, useState } from 'react';
import { matchingIds } from '../../../lib/glob.ts';
import { patterns } from '../../../lib/schema.ts';

/**
 * Tool-id globs, each with a live preview of how many and which inventory tools it matches.
 * `name` reads like "allow pattern of role analyst" and labels every input.
 */
export function GlobList({
  name,
  value,
  onChange,
  toolIds,
  disabled,
  errors = [],
}: {
  name: string;
  value: string[];
  onChange: (v: string[]) => void;
  toolIds: string[];
  disabled?: boolean;
  /** Server errors whose pointers are relative to this list (`/2`). */
  errors?: { pointer: string; message: string }[];
}) {
  const ids = useId();
  const [adding, setAdding] = useState('');
  const union = new Set(value.flatMap((g) => matchingIds(g, toolIds)));
  const add = () => {
    const v = adding.trim();
    if (!v || value.includes(v)) return;
    onChange([...value, v]);
    setAdding('');
  };
  return (
    <div className="glob-list">
      <ul>
        {value.map((g, i) => {
          const matched = matchingIds(g, toolIds);
          const serverError = errors.find((e) => e.pointer === `/${i}`)?.message;
          const invalid = !new RegExp(patterns.toolGlob).test(g) || !!serverError;
          return (
            <li key={i} className="glob-row">
              <label htmlFor={`${ids}-${i}`} className="sr-only">
                {name} {i + 1}
              </label>
              <input
                id={`${ids}-${i}`}
                className="mono"
                value={g}
                disabled={disabled}
                aria-invalid={invalid}
                aria-describedby={serverError ? `${ids}-${i}-err` : undefined}
                onChange={(e) => onChange(value.map((x, j) => (j === i ? e.target.value : x)))}
              />
              <details className="match-preview">
                <summary className={matched.length ? undefined : 'no-match'}>
                  {matched.length} {matched.length === 1 ? 'tool' : 'tools'}
                </summary>
                <ul>
                  {matched.map((id) => (
                    <li key={id} className="mono">
                      {id}
                    </li>
                  ))}
                </ul>
              </details>
              {serverError ? (
                <span id={`${ids}-${i}-err`} className="field-error glob-error">
                  {serverError}
                </span>
              ) : null}
              {!disabled ? (
                <button type="button" className="icon-button" aria-label={`Remove ${name} ${g}`} onClick={() => onChange(value.filter((_, j) => j !== i))}>
                  ×
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
      {!disabled ? (
        <div className="glob-add">
          <label htmlFor={`${ids}-new`} className="sr-only">
            New {name}
          </label>
          <input
            id={`${ids}-new`}
            className="mono"
            placeholder="core__* or an exact id"
            value={adding}
            list={`${ids}-tools`}
            onChange={(e) => setAdding(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                add();
              }
            }}
          />
          <datalist id={`${ids}-tools`}>
            {toolIds.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
          <span className="muted">{adding.trim() ? `${matchingIds(adding.trim(), toolIds).length} match` : ''}</span>
          <button type="button" onClick={add} disabled={!adding.trim()} aria-label={`Add ${name}`}>
            Add
          </button>
        </div>
      ) : null}
      <small className="muted">Together: {union.size} tools</small>
    </div>
  );
}
