import { type ReactNode, useLayoutEffect, useRef, useState } from 'react';
import { DataTable } from './data-table.tsx';

/** Lists this long or shorter are rendered whole; longer ones only around what is scrolled into view. */
export const WINDOW_FROM = 100;
const OVERSCAN = 10;
const ESTIMATED_ROW_PX = 34;

/**
 * A scrolling table whose body renders only the rows in view (plus a margin), with spacer rows
 * standing for the others: a list of 5,000 tools costs what 40 rows cost, on every repaint.
 * Short lists (≤ WINDOW_FROM) are rendered whole, so every row can be found and read as usual.
 * Row heights vary (explanations wrap): the spacers use the measured average of rendered rows.
 */
export function WindowedTable<T>({
  items,
  row,
  label,
  columns,
  caption,
  maxHeight = 480,
  className,
}: {
  items: readonly T[];
  row: (item: T) => ReactNode;
  label: string;
  columns: readonly string[];
  caption?: ReactNode;
  /** The scroll area's height, px, when the list is windowed. */
  maxHeight?: number;
  className?: string;
}) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [rowPx, setRowPx] = useState(ESTIMATED_ROW_PX);
  const windowed = items.length > WINDOW_FROM;
  const inView = Math.ceil(maxHeight / rowPx);
  const start = windowed ? Math.max(0, Math.min(items.length - inView, Math.floor(scrollTop / rowPx)) - OVERSCAN) : 0;
  const end = windowed ? Math.min(items.length, start + inView + 2 * OVERSCAN) : items.length;

  // The average height of the rows rendered, so that the spacers stand for about the right height.
  useLayoutEffect(() => {
    if (!windowed || !body.current) return;
    const rows = [...body.current.rows].filter((r) => !r.dataset.spacer);
    if (!rows.length) return;
    const average = rows.reduce((sum, r) => sum + r.getBoundingClientRect().height, 0) / rows.length;
    if (average > 0 && Math.abs(average - rowPx) > 2) setRowPx(average);
  });

  return (
    <div
      className={className ? `table-wrap ${className}` : 'table-wrap'}
      style={windowed ? { maxHeight, overflowY: 'auto' } : undefined}
      onScroll={windowed ? (e) => setScrollTop(e.currentTarget.scrollTop) : undefined}
    >
      <DataTable label={label} columns={columns} compact caption={caption} rowCount={windowed ? items.length + 1 : undefined} bodyRef={body}>
        {start > 0 ? <tr data-spacer="1" style={{ height: start * rowPx }} /> : null}
        {items.slice(start, end).map(row)}
        {end < items.length ? <tr data-spacer="1" style={{ height: (items.length - end) * rowPx }} /> : null}
      </DataTable>
    </div>
  );
}
