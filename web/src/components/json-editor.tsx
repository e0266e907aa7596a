import { useId, useMemo, useRef } from 'react';
import { jsonSyntaxError, lineOfPointer, pointerLines } from '../lib/json.ts';

export type PointerError = { pointer: string; message: string };

/**
 * A JSON text editor with line numbers; errors given as JSON pointers (relative to the edited value)
 * are shown at the line of the offending value, and a syntax error at its line.
 */
export function JsonEditor({
  label,
  value,
  onChange,
  errors = [],
  disabled,
  rows = 14,
  optional = false,
}: {
  label: string;
  value: string;
  onChange: (text: string) => void;
  errors?: PointerError[];
  disabled?: boolean;
  rows?: number;
  /** Empty text means "absent" rather than a syntax error. */
  optional?: boolean;
}) {
  const id = useId();
  const gutter = useRef<HTMLDivElement>(null);
  const { syntax, marks } = useMemo(() => {
    if (optional && !value.trim()) return { syntax: null, marks: [] };
    const syntax: { line?: number; message: string } | null = jsonSyntaxError(value);
    const lines = syntax ? new Map<string, number>() : pointerLines(value);
    const marks = errors.map((e) => ({ ...e, line: lineOfPointer(lines, e.pointer) }));
    return { syntax, marks };
  }, [value, errors, optional]);
  const lineCount = value.split('\n').length;
  const badLines = new Set<number>(marks.map((m) => m.line ?? 0));
  if (syntax?.line) badLines.add(syntax.line);
  const all = [...(syntax ? [{ pointer: '', message: syntax.message, line: syntax.line }] : []), ...marks];
  return (
    <div className="field json-editor">
      <label htmlFor={id}>{label}</label>
      <div className={`json-editor-box${all.length ? ' has-errors' : ''}`}>
        <div className="json-gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => (
            <div key={i} className={badLines.has(i + 1) ? 'bad-line' : undefined}>
              {i + 1}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          value={value}
          rows={rows}
          spellCheck={false}
          disabled={disabled}
          aria-invalid={all.length > 0}
          aria-describedby={all.length ? `${id}-errors` : undefined}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          onKeyDown={(e) => {
            // Tab indents inside the editor; Escape then Tab leaves it (keyboard users are not trapped).
            if (e.key === 'Tab' && !e.shiftKey && e.currentTarget.dataset.escaped !== '1') {
              e.preventDefault();
              const t = e.currentTarget;
              const s = t.selectionStart;
              const next = `${value.slice(0, s)}  ${value.slice(t.selectionEnd)}`;
              onChange(next);
              requestAnimationFrame(() => t.setSelectionRange(s + 2, s + 2));
            }
            e.currentTarget.dataset.escaped = e.key === 'Escape' ? '1' : '0';
          }}
          onChange={(e) => onChange(e.target.value)}
        />
      </div>
      <small className="hint">Tab indents; press Escape then Tab to move on.</small>
      {all.length ? (
        <ul id={`${id}-errors`} className="field-errors" aria-label={`${label} errors`}>
          {all.map((m, i) => (
            <li key={i}>
              {m.line ? <span className="line-ref">Line {m.line}</span> : null} {m.pointer ? <code>{m.pointer}</code> : null} {m.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
