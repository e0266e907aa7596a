import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { parseArguments } from '../runtime/json-arguments.ts';
import { type LeanRequest, isPlainObject } from './lean-messages.ts';

/**
 * A tool call's arguments are I-JSON, judged on their text (docs/spec.md R14.6): no member name
 * twice in one object, no integer literal beyond ±(2^53 − 1), no number that overflows a double,
 * no lone surrogate. The gateway receives them inside a larger message (an MCP tools/call) and
 * parses that message whole, and the parsed value cannot tell: JSON.parse keeps the last of two
 * equal names, reads 2^53 + 1 as 2^53 and 1e400 as Infinity. So whoever reads a message from the
 * wire (the HTTP listener, the stdio transport) also reads the text of each tools/call's
 * `arguments` as it came; a text parseArguments refuses stays with the parsed message, and the
 * gateway hands decide() that text instead of the value, so decide answers `invalid_json` in its
 * own order of checks (an unknown tool is still `unavailable`) and the upstream is never called.
 *
 * Keyed by the parsed message object: nothing a client writes can set or clear it.
 */
const unreadable = new WeakMap<object, string>();

/**
 * Reads the raw text of every tools/call request in `body` (one message, or a batch), as parsed
 * from `text` by JSON.parse, and notes the arguments text of those that are not I-JSON.
 */
export function noteCallArguments(text: string, body: unknown): void {
  const messages = Array.isArray(body) ? body : [body];
  if (!messages.some(isCallRequest)) return;
  const start = skipSpace(text, 0);
  if (!Array.isArray(body)) return noteOne(text, start, body as object);
  let k = 0;
  for (const [from] of elements(text, start)) {
    if (isCallRequest(body[k])) noteOne(text, from, body[k]);
    k++;
  }
}

/** The same note on a copy of a message (the SDK's schema parse makes new objects). */
export function carryCallArguments(from: unknown, to: unknown): void {
  const text = typeof from === 'object' && from !== null ? unreadable.get(from) : undefined;
  if (text !== undefined && typeof to === 'object' && to !== null) unreadable.set(to, text);
}

/** The text of a tools/call's arguments when it is not I-JSON (decide() refuses it); undefined otherwise. */
export function unreadableArgumentsOf(message: unknown): string | undefined {
  return typeof message === 'object' && message !== null ? unreadable.get(message) : undefined;
}

/**
 * A tools/call whose arguments are not I-JSON, as a request the gateway answers itself (its
 * refusal needs no progress, task or other SDK machinery); null for every other message.
 */
export function refusedCallRequest(message: unknown): LeanRequest | null {
  return unreadableArgumentsOf(message) !== undefined ? (message as LeanRequest) : null;
}

/** A request the gateway would call a tool for: a JSON-RPC tools/call with a tool name and an arguments object. */
function isCallRequest(m: unknown): m is { params: { arguments: object } } {
  if (!isPlainObject(m) || m.jsonrpc !== '2.0' || m.method !== 'tools/call' || !isRequestId(m.id)) return false;
  const params = m.params;
  return isPlainObject(params) && typeof params.name === 'string' && isPlainObject(params.arguments);
}

function isRequestId(v: unknown): v is RequestId {
  return typeof v === 'string' || Number.isSafeInteger(v);
}

/** The message object starting at `at`: its `params.arguments` text (the last of equal names, as JSON.parse reads them), checked. */
function noteOne(text: string, at: number, message: object): void {
  const params = lastMember(text, at, 'params');
  if (!params || text.charCodeAt(params[0]) !== 0x7b /* { */) return;
  const args = lastMember(text, params[0], 'arguments');
  if (!args) return;
  const argumentsText = text.slice(args[0], args[1]);
  const parsed = parseArguments(argumentsText);
  if (!parsed.ok && parsed.code === 'invalid_json') unreadable.set(message, argumentsText);
}

// A reader of valid JSON text (JSON.parse accepted it): spans of values, never values.

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** Past the string that starts (with its quote) at `i`. */
function endOfString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x5c /* \ */) j += 2;
    else if (c === 0x22 /* " */) return j + 1;
    else j++;
  }
  return j;
}

/** Past the value that starts at `i`. Iterative: any nesting is safe. */
function endOfValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return endOfString(text, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === 0x22) {
        j = endOfString(text, j);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return j;
  }
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
    j++;
  }
  return j;
}

/** The span of each element of the array that starts at `i`. */
function* elements(text: string, i: number): Generator<[number, number]> {
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 0x5d /* ] */) return;
  while (i < text.length) {
    const end = endOfValue(text, i);
    yield [i, end];
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 0x2c /* , */) return;
    i = skipSpace(text, i + 1);
  }
}

/** The span of the value of the last member named `name` of the object that starts at `i` (names compared as decoded). */
function lastMember(text: string, i: number, name: string): [number, number] | null {
  let found: [number, number] | null = null;
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 0x7d /* } */) return null;
  while (i < text.length) {
    const nameEnd = endOfString(text, i);
    const raw = text.slice(i + 1, nameEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(i, nameEnd)) as string) : raw;
    i = skipSpace(text, skipSpace(text, nameEnd) + 1); // past the colon
    const end = endOfValue(text, i);
    if (key === name) found = [i, end];
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 0x2c) break;
    i = skipSpace(text, i + 1);
  }
  return found;
}
