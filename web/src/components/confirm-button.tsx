import type { ReactNode } from 'react';

/** A danger button that asks `question` (window.confirm) before it does anything. */
export function ConfirmButton({
  question,
  onConfirm,
  label,
  disabled,
  children,
}: {
  question: string;
  onConfirm: () => void;
  /** Accessible name, where the visible text alone does not say what it acts on. */
  label?: string;
  disabled?: boolean;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className="danger"
      aria-label={label}
      disabled={disabled}
      onClick={() => {
        if (window.confirm(question)) onConfirm();
      }}
    >
      {children}
    </button>
  );
}
