import type { Insertable, Selectable, Updateable } from 'kysely';

export const toolsTable = 'tools';

export interface ToolsTable {
  id: string;
  status: string;
  /** The tool as JSON, without version and timestamps. */
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type ToolsRow = Selectable<ToolsTable>;
export type NewToolsRow = Insertable<ToolsTable>;
export type ToolsRowUpdate = Updateable<ToolsTable>;
