import type { ReactNode } from 'react';

/**
 * A labelled data table: one header row of column names (plus an unnamed actions column when
 * `actions` holds), and the rows as children.
 */
export function DataTable({
  label,
  columns,
  actions = false,
  compact = false,
  caption,
  children,
}: {
  label: string;
  columns: readonly string[];
  actions?: boolean;
  compact?: boolean;
  caption?: ReactNode;
  children: ReactNode;
}) {
  return (
    <table className={compact ? 'data-table compact' : 'data-table'} aria-label={label}>
      {caption ? <caption>{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i} scope="col">
              {c}
            </th>
          ))}
          {actions ? (
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
