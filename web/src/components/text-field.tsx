import { useId, type InputHTMLAttributes } from 'react';

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'>;

/** A labelled one-line input; `onChange` receives the text. Other input attributes pass through. */
export function TextField({ label, value, onChange, ...input }: { label: string; value: string | number; onChange: (value: string) => void } & InputProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} value={value} onChange={(e) => onChange(e.target.value)} {...input} />
    </div>
  );
}
