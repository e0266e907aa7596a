import { sha256Hex } from '../../runtime/sha256.ts';

/** The providers' function-name limit, which a tool id keeps to (DESIGN: Tool `id`). */
export const MAX_TOOL_ID = 64;
const HASH_DIGITS = 8;

/** `mcp__<server>__`: server ids are `[a-z0-9-]+`, so no two servers' prefixes can meet. */
export function mcpIdPrefix(serverId: string): string {
  return `mcp__${serverId}__`;
}

/** The name with every Unicode code point outside `[A-Za-z0-9_-]` replaced by one `_`. */
export function mappedName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/gu, '_');
}

/** The id a name takes when nothing else wants it: `mcp__<server>__<mapped name>`, or undefined past 64 characters. */
export function plainToolId(serverId: string, name: string): string | undefined {
  const id = mcpIdPrefix(serverId) + mappedName(name);
  return id.length <= MAX_TOOL_ID ? id : undefined;
}

/**
 * The id a name takes past 64 characters or when it would meet another: the mapped name cut so
 * that `_` and the first 8 hex digits of the sha-256 of the name's UTF-8 bytes fit in 64.
 * A function of the server and the name alone, the same in every sync and on every installation.
 */
export function hashedToolId(serverId: string, name: string): string {
  const prefix = mcpIdPrefix(serverId);
  const room = MAX_TOOL_ID - prefix.length - 1 - HASH_DIGITS;
  return `${prefix}${mappedName(name).slice(0, room)}_${sha256Hex(name).slice(0, HASH_DIGITS)}`;
}

/** A name the server offers now, and the inventory's tool already imported under it, if any. */
export type NameToPlace = { name: string; heldBy?: string };

export type PlacedName = { name: string; id: string } | { name: string; id?: undefined; problem: string };

/**
 * Chooses the tool id of each name one server offers (DESIGN: MCP server import).
 * - A name already imported keeps its id, whatever else the server offers now: a sync never renames a tool.
 * - A new name takes `mcp__<server>__<mapped name>` unless that is past 64 characters, is wanted by
 *   another new name of this sync (then all of them are suffixed: which of two meeting names
 *   arrived first has no say), or is the id of any tool in the inventory (a tool keeps its id:
 *   the name arriving later is suffixed).
 * - A new name whose suffixed id is still taken, or wanted by another name, gets no id: a collision
 *   is never an overwrite.
 * The answer does not depend on the order the names are listed in.
 */
export function placeToolIds(serverId: string, names: NameToPlace[], inventoryIds: ReadonlySet<string>): PlacedName[] {
  const plainWanted = new Map<string, number>();
  for (const n of names) {
    if (n.heldBy !== undefined) continue;
    const plain = plainToolId(serverId, n.name);
    if (plain !== undefined) plainWanted.set(plain, (plainWanted.get(plain) ?? 0) + 1);
  }
  const chosen = names.map((n): { name: string; id: string; kept: boolean } => {
    if (n.heldBy !== undefined) return { name: n.name, id: n.heldBy, kept: true };
    const plain = plainToolId(serverId, n.name);
    const free = plain !== undefined && plainWanted.get(plain) === 1 && !inventoryIds.has(plain);
    return { name: n.name, id: free ? plain : hashedToolId(serverId, n.name), kept: false };
  });
  const wanted = new Map<string, number>();
  for (const c of chosen) wanted.set(c.id, (wanted.get(c.id) ?? 0) + 1);
  return chosen.map((c) => {
    if (c.kept) return { name: c.name, id: c.id };
    // Only a hostile or freakish listing gets here: a suffixed id that another name spells out.
    if (wanted.get(c.id) !== 1)
      return { name: c.name, problem: `the tool id ${c.id} would be shared with another tool this server offers; a collision is never an overwrite` };
    if (inventoryIds.has(c.id)) return { name: c.name, problem: `the tool id ${c.id} is already used by another tool; a collision is never an overwrite` };
    return { name: c.name, id: c.id };
  });
}
