import { createHash } from 'node:crypto';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * tools/list in pages. A client's list is a function of its authorization and the state its
 * request presents, so a page is found again from the list itself: the cursor is the offset of
 * the page plus a fingerprint of the whole list (the bundle revision and every listed id). The
 * same list always gives the same cursors, in either protocol era and on any replica; a cursor
 * from another list (another client's, an older bundle, a tool withheld since) or one the gateway
 * never wrote is refused as MCP asks for an invalid cursor (-32602), and the client starts over.
 */

/** Tools per tools/list answer: clients must follow `nextCursor` past it. */
export const LIST_PAGE_SIZE = 100;

/** A cursor longer than any the gateway writes is refused before it is decoded. */
const MAX_CURSOR_LENGTH = 100;

/** What a list must hold to be paged: its items and the text that identifies it. */
export type PagedList<T> = { tools: T[]; signature: string; fingerprint?: string };

export type Page<T> = { index: number; tools: T[]; nextCursor?: string };

/** How many pages a list has (an empty list still answers one, empty). */
export function pageCount(list: PagedList<unknown>, pageSize: number): number {
  return Math.max(1, Math.ceil(list.tools.length / pageSize));
}

/** The page a request's `cursor` names (none: the first), or an invalid-params error. */
export function pageOf<T>(list: PagedList<T>, cursor: unknown, pageSize: number): Page<T> {
  const index = cursor === undefined ? 0 : pageIndexOf(list, cursor, pageSize);
  const start = index * pageSize;
  const end = start + pageSize;
  const tools = start === 0 && end >= list.tools.length ? list.tools : list.tools.slice(start, end);
  return end < list.tools.length ? { index, tools, nextCursor: cursorFor(list, end) } : { index, tools };
}

function pageIndexOf(list: PagedList<unknown>, cursor: unknown, pageSize: number): number {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  const read = /^([1-9][0-9]{0,8}):([A-Za-z0-9_-]{22})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!read) throw invalidCursor();
  const offset = Number(read[1]);
  // Only what the gateway wrote for this very list: its fingerprint, a page boundary inside it.
  if (read[2] !== fingerprintOf(list) || offset % pageSize !== 0 || offset >= list.tools.length || cursorFor(list, offset) !== cursor) {
    throw invalidCursor();
  }
  return offset / pageSize;
}

function cursorFor(list: PagedList<unknown>, offset: number): string {
  return Buffer.from(`${offset}:${fingerprintOf(list)}`, 'latin1').toString('base64url');
}

/** 128 bits of the list's signature: telling lists apart, not keeping a secret. */
function fingerprintOf(list: PagedList<unknown>): string {
  list.fingerprint ??= createHash('sha256').update(list.signature).digest().subarray(0, 16).toString('base64url');
  return list.fingerprint;
}

function invalidCursor(): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    'Invalid cursor: it names no page of the list this request would be shown (the list changed, or the cursor is not one the gateway gave); list again without a cursor',
  );
}
