import type { Selectable } from 'kysely';

/** A document table's write counter (migration 015): raised by every insert, update and delete of its rows. */
export interface TableGenerationsTable {
  /** The table's name (`tools`, `groups`, …). */
  name: string;
  generation: number;
}

export type TableGenerationsRow = Selectable<TableGenerationsTable>;
