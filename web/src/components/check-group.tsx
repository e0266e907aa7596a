/** A fieldset of checkboxes choosing a subset of `options`. */
export function CheckGroup({
  legend,
  options,
  value,
  onChange,
  disabled,
  hint,
}: {
  legend: string;
  options: readonly string[];
  value: readonly string[];
  onChange: (next: string[]) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const extra = value.filter((v) => !options.includes(v));
  return (
    <fieldset className="check-group" disabled={disabled}>
      <legend>{legend}</legend>
      {hint ? <small className="hint">{hint}</small> : null}
      <div className="check-grid">
        {[...options, ...extra].map((o) => (
          <label key={o} className="check">
            <input type="checkbox" checked={value.includes(o)} onChange={(e) => onChange(e.target.checked ? [...value, o] : value.filter((v) => v !== o))} />
            <span className={options.includes(o) ? undefined : 'unknown'}>{o}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
