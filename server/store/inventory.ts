import type { Group, McpServer, State, Tool } from '../../policy-schemas/types.gen.ts';
import { sql } from 'kysely';
import type { DbOrTx } from '../db/database.ts';
import { type Stored, documentStore } from './document-store.ts';

/** The tool inventory; `status` is a column too, for filtering. */
export const toolStore = documentStore<Tool>('tools', 'id', (t) => ({ status: t.status ?? 'active' }));
export const groupStore = documentStore<Group>('groups', 'name');
export const stateStore = documentStore<State>('states', 'name');
export const mcpServerStore = documentStore<McpServer>('mcp_servers', 'id');

/** Groups and states that always exist and cannot be deleted. */
export const DEFAULT_GROUP = 'default';
export const INITIAL_STATE = 'undefined';

// The parsed inventory, reused while the table is unchanged: parsing 5,000 tool documents on every
// keystroke of a search would cost more than the search itself.
const parsedTools = new WeakMap<object, { fingerprint: string; tools: Stored<Tool>[] }>();

/** Every tool, as toolStore.list answers, parsed again only when the table changed. */
export async function cachedToolList(db: DbOrTx): Promise<Stored<Tool>[]> {
  // Any insert, update or delete changes the count, the newest stamp or the sum of versions.
  const f = await db
    .selectFrom('tools')
    .select([sql<number>`count(*)`.as('n'), sql<string | null>`max(updated_at)`.as('at'), sql<number | null>`sum(version)`.as('v')])
    .executeTakeFirstOrThrow();
  const fingerprint = `${f.n}:${f.at}:${f.v}`;
  const hit = parsedTools.get(db);
  if (hit && hit.fingerprint === fingerprint) return hit.tools;
  const tools = await toolStore.list(db);
  parsedTools.set(db, { fingerprint, tools });
  return tools;
}
