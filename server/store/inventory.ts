import type { Group, McpServer, State, Tool } from '../../policy-schemas/types.gen.ts';
import { documentStore } from './document-store.ts';

/** The tool inventory; `status` is a column too, for filtering. */
export const toolStore = documentStore<Tool>('tools', 'id', (t) => ({ status: t.status ?? 'active' }));
export const groupStore = documentStore<Group>('groups', 'name');
export const stateStore = documentStore<State>('states', 'name');
export const mcpServerStore = documentStore<McpServer>('mcp_servers', 'id');

/** Groups and states that always exist and cannot be deleted. */
export const DEFAULT_GROUP = 'default';
export const INITIAL_STATE = 'undefined';
