import type { Insertable, Selectable, Updateable } from 'kysely';

export const mcpServersTable = 'mcp_servers';

export interface McpServersTable {
  id: string;
  body: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export type McpServersRow = Selectable<McpServersTable>;
export type NewMcpServersRow = Insertable<McpServersTable>;
export type McpServersRowUpdate = Updateable<McpServersTable>;
