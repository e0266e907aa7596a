import type { ReactNode } from 'react';
import { Notice } from './notice.tsx';

/**
 * A side-panel form that creates one thing: its title (heading and accessible name), the fields,
 * the submit button and the server's answer; `after` goes below the answer.
 */
export function CreateForm({
  title,
  submit,
  busy,
  error,
  success,
  onSubmit,
  after,
  children,
}: {
  title: string;
  submit: string;
  busy: boolean;
  error: unknown;
  success?: string | null;
  onSubmit: () => void;
  after?: ReactNode;
  children: ReactNode;
}) {
  return (
    <form
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h2>{title}</h2>
      {children}
      <button type="submit" className="primary" disabled={busy}>
        {submit}
      </button>
      <Notice error={error} success={success} />
      {after}
    </form>
  );
}
