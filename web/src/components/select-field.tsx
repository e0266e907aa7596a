import { useId } from 'react';

/**
 * A labelled select over `options`; `empty`, when given, labels a first choice whose value is ''
 * (e.g. "Any" in a filter).
 */
export function SelectField({
  label,
  value,
  options,
  onChange,
  empty,
}: {
  label: string;
  value: string | undefined;
  options: readonly string[];
  onChange: (value: string) => void;
  empty?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value ?? ''} onChange={(e) => onChange(e.target.value)}>
        {empty !== undefined ? <option value="">{empty}</option> : null}
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );
}
