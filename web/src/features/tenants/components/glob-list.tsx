import { useDeferredValue, useId, useMemo, useState } from 'react';
import { matchingIds } from '../../../lib/glob.ts';
import { patterns } from '../../../lib/schema.ts';

/** How many inventory ids the new-pattern field suggests at a time. */
const SUGGESTIONS = 50;
/** How many of a pattern's matches its preview lists. */
const PREVIEWED = 200;

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
  // Each glob's matches, computed when the patterns or the inventory change (not on every repaint
  // of the page: an inventory of 5,000 ids makes each pass cost).
  const matches = useMemo(() => value.map((g) => matchingIds(g, toolIds)), [value, toolIds]);
  const union = useMemo(() => new Set(matches.flat()), [matches]);
  // Suggestions for the pattern being typed: the first few ids it matches, not the whole inventory.
  const typed = useDeferredValue(adding.trim());
  const suggestions = useMemo(() => {
    if (!typed) return toolIds.slice(0, SUGGESTIONS);
    const glob = typed.includes('*') ? typed : `*${typed}*`;
    return matchingIds(glob, toolIds).slice(0, SUGGESTIONS);
  }, [typed, toolIds]);
  const typedMatches = useMemo(() => (typed ? matchingIds(typed, toolIds).length : 0), [typed, toolIds]);
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
          const matched = matches[i] ?? [];
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
                  {matched.slice(0, PREVIEWED).map((id) => (
                    <li key={id} className="mono">
                      {id}
                    </li>
                  ))}
                  {matched.length > PREVIEWED ? <li className="muted">and {matched.length - PREVIEWED} more</li> : null}
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
            {suggestions.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
          <span className="muted">{typed ? `${typedMatches} match` : ''}</span>
          <button type="button" onClick={add} disabled={!adding.trim()} aria-label={`Add ${name}`}>
            Add
          </button>
        </div>
      ) : null}
      <small className="muted">Together: {union.size} tools</small>
    </div>
  );
}
