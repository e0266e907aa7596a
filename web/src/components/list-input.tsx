import { useId, useState } from 'react';

/** A list of short strings edited as one comma-separated text field. */
export function ListInput({
  label,
  value,
  onChange,
  hint,
  disabled,
  placeholder,
  listId,
}: {
  label: string;
  value: readonly string[] | undefined;
  onChange: (next: string[]) => void;
  hint?: string;
  disabled?: boolean;
  placeholder?: string;
  listId?: string;
}) {
  const id = useId();
  const joined = (value ?? []).join(', ');
  const [text, setText] = useState(joined);
  // Re-sync only when the value changes from outside, not while the user types "a, ": adjusted
  // while rendering, when the value differs from the one last seen.
  const [seen, setSeen] = useState(joined);
  if (seen !== joined) {
    setSeen(joined);
    if (split(text).join(', ') !== joined) setText(joined);
  }
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={text}
        disabled={disabled}
        placeholder={placeholder}
        list={listId}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          onChange(split(e.target.value));
        }}
      />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

function split(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
