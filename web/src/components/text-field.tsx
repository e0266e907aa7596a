import { useEffect, useId, useRef, type InputHTMLAttributes } from 'react';
import { formatProblem, type NameFormat } from '../lib/schema.ts';

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange' | 'pattern'>;

/**
 * A labelled one-line input; `onChange` receives the text. Other input attributes pass through.
 * `format` checks a name as it is typed and says at the field, in words, what is allowed; the
 * form will not submit while it does not fit.
 */
export function TextField({
  label,
  value,
  onChange,
  format,
  ...input
}: { label: string; value: string | number; onChange: (value: string) => void; format?: NameFormat } & InputProps) {
  const id = useId();
  const ref = useRef<HTMLInputElement>(null);
  const problem = format && !input.readOnly ? formatProblem(format, String(value)) : null;
  useEffect(() => {
    ref.current?.setCustomValidity(problem ?? '');
  }, [problem]);
  const described = [input['aria-describedby'], problem ? `${id}-format` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        ref={ref}
        id={id}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        {...input}
        aria-invalid={problem ? true : input['aria-invalid']}
        aria-describedby={described}
      />
      {problem ? (
        <p id={`${id}-format`} className="field-error">
          {problem}
        </p>
      ) : null}
    </div>
  );
}
