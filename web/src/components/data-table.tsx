import type { ReactNode, Ref } from 'react';

/**
 * A labelled data table: one header row of column names (plus an unnamed actions column when
 * `actions` holds), and the rows as children. `rowCount` (with `bodyRef`) serves a table that
 * renders only some of its rows (WindowedTable).
 */
export function DataTable({
  label,
  columns,
  actions = false,
  compact = false,
  caption,
  rowCount,
  bodyRef,
  children,
}: {
  label: string;
  columns: readonly string[];
  actions?: boolean;
  compact?: boolean;
  caption?: ReactNode;
  /** The rows there are, header included, when not all of them are in the DOM. */
  rowCount?: number;
  bodyRef?: Ref<HTMLTableSectionElement>;
  children: ReactNode;
}) {
  return (
    <table className={compact ? 'data-table compact' : 'data-table'} aria-label={label} aria-rowcount={rowCount}>
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
      <tbody ref={bodyRef}>{children}</tbody>
    </table>
  );
}
