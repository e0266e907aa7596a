import type { Group, McpServer, State, Tool } from '../../policy-schemas/types.gen.ts';
import type { DbOrTx } from '../db/database.ts';
import { type Stored, documentStore, stripStored, tableFingerprint } from './document-store.ts';

/** The tool inventory; `status` is a column too, for filtering. */
export const toolStore = documentStore<Tool>('tools', 'id', (t) => ({ status: t.status ?? 'active' }));
export const groupStore = documentStore<Group>('groups', 'name');
export const stateStore = documentStore<State>('states', 'name');
export const mcpServerStore = documentStore<McpServer>('mcp_servers', 'id');

/** Groups and states that always exist and cannot be deleted. */
export const DEFAULT_GROUP = 'default';
export const INITIAL_STATE = 'undefined';

// The parsed inventory, reused while the table is unchanged: parsing 5,000 tool documents on every
// keystroke of a search, or on every compile of a draft, would cost more than the search itself.
// Per database handle (a transaction reads its own); what it holds is shared by every caller, so
// read-only.
type ParsedTools = { fingerprint: string; tools: Stored<Tool>[]; documents?: readonly Tool[] };
const parsedTools = new WeakMap<object, ParsedTools>();

async function parsedToolList(db: DbOrTx): Promise<ParsedTools> {
  const fingerprint = await tableFingerprint(db, 'tools');
  const hit = parsedTools.get(db);
  if (hit && hit.fingerprint === fingerprint) return hit;
  const parsed = { fingerprint, tools: await toolStore.list(db) };
  parsedTools.set(db, parsed);
  return parsed;
}

/** Every tool, as toolStore.list answers, parsed again only when the table changed. */
export async function cachedToolList(db: DbOrTx): Promise<Stored<Tool>[]> {
  return (await parsedToolList(db)).tools;
}

/**
 * Every tool's document (without version and timestamps), in id order, as a draft snapshot holds
 * them: the same frozen array of the same objects while the table is unchanged, so what is worked
 * out from it once (the snapshot's fingerprint) is not worked out again.
 */
export async function cachedToolDocuments(db: DbOrTx): Promise<readonly Tool[]> {
  const parsed = await parsedToolList(db);
  // Each document frozen too: what is remembered by the list (its text, hash, compiled work) holds
  // only while no caller changes a tool in it.
  parsed.documents ??= Object.freeze(parsed.tools.map((t) => Object.freeze(stripStored(t))));
  return parsed.documents;
}
