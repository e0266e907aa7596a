import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResolvedClient } from './config.ts';

/** What a handle says, once its signature, binding and expiry have been checked. */
export type ReadHandle = { ok: true; state: string } | { ok: false; message: string };

const PREFIX = 'tgs1';
const MAX_HANDLE_CHARS = 4096;
/** How long a handle is good for: each call answers a fresh one, so only an idle workflow runs out. */
export const STATE_HANDLE_TTL_MS = 24 * 3600_000;

/**
 * Workflow state without sessions (MCP 2026-07-28): a call that moves the state answers a handle,
 * `tgs1.<payload>.<mac>`, where the payload names the tenant, the client (its configured name and
 * subject), the state and an expiry, and the mac is HMAC-SHA256 under a key only the gateway
 * holds. A client presents it back; the gateway believes the state only when the mac verifies
 * (compared in constant time), the handle was issued to this client of this tenant and has not
 * expired. The client cannot make one up, edit one, or use another client's.
 */
export class StateHandles {
  /** Per client (by name), confirmation requestStates already answered, each until it expires (see spendConfirmation). */
  private readonly spent = new Map<string, Map<string, number>>();

  constructor(
    private readonly key: Buffer,
    private readonly tenant: string,
    private readonly ttlMs = STATE_HANDLE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  issue(client: ResolvedClient, state: string): string {
    const payload = Buffer.from(JSON.stringify([this.tenant, client.name, client.subject, state, this.now() + this.ttlMs])).toString('base64url');
    return `${PREFIX}.${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The state a presented handle carries for `client`, or why it is refused. */
  read(client: ResolvedClient, handle: unknown): ReadHandle {
    if (typeof handle !== 'string' || handle.length > MAX_HANDLE_CHARS) return refuse('is not a state handle');
    const parts = handle.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return refuse('is not a state handle');
    const [, payload, mac] = parts;
    if (!macMatches(mac, this.mac(payload))) return refuse('was not issued by this gateway (its signature does not verify)');
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return refuse('is not a state handle');
    }
    if (!Array.isArray(fields) || fields.length !== 5) return refuse('is not a state handle');
    const [tenant, name, subject, state, expiresAt] = fields as [unknown, unknown, unknown, unknown, unknown];
    if (tenant !== this.tenant) return refuse('belongs to another tenant');
    if (name !== client.name || subject !== client.subject) return refuse('was issued to another client');
    if (typeof expiresAt !== 'number' || expiresAt <= this.now()) return refuse('has expired; start again from the configured state');
    if (typeof state !== 'string') return refuse('is not a state handle');
    return { ok: true, state };
  }

  /**
   * The requestState a 2026-07-28 client gets with an upstream's input_required: the server's own
   * state, bound to this client, the tool and the exact arguments (their digest), for 10 minutes.
   * The client sends it back with its answers; nothing else lets answers through to the server.
   * `approval` says the gateway's own approval question is what the client answers (`asked`), or
   * that the client already confirmed this call in an earlier round (`confirmed`), so answering
   * the server's questions does not ask it again.
   */
  issueRetry(client: ResolvedClient, tool: string, argumentsDigest: string, serverState: string | undefined, approval?: RetryApproval): string {
    const payload = Buffer.from(
      JSON.stringify([this.tenant, client.name, client.subject, tool, argumentsDigest, serverState ?? null, this.now() + RETRY_TTL_MS, approval ?? null]),
    ).toString('base64url');
    return `${RETRY_PREFIX}.${payload}.${this.mac(payload, RETRY_PREFIX).toString('base64url')}`;
  }

  /** The server's state a presented requestState carries for this client, tool and arguments, or why it is refused. */
  readRetry(
    client: ResolvedClient,
    handle: unknown,
    tool: string,
    argumentsDigest: string,
  ): { ok: true; serverState: string | undefined; approval: RetryApproval | undefined } | { ok: false; message: string } {
    const bad = (why: string) => ({ ok: false as const, message: `the requestState ${why}` });
    if (typeof handle !== 'string' || handle.length > MAX_RETRY_CHARS) return bad('is not one this gateway issued');
    const parts = handle.split('.');
    if (parts.length !== 3 || parts[0] !== RETRY_PREFIX) return bad('is not one this gateway issued');
    if (!macMatches(parts[2], this.mac(parts[1], RETRY_PREFIX))) return bad('was not issued by this gateway (its signature does not verify)');
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return bad('is not one this gateway issued');
    }
    if (!Array.isArray(fields) || fields.length !== 8) return bad('is not one this gateway issued');
    const [tenant, name, subject, toolId, digest, serverState, expiresAt, approval] = fields as unknown[];
    if (tenant !== this.tenant || name !== client.name || subject !== client.subject) return bad('was issued to another client');
    if (toolId !== tool || digest !== argumentsDigest) return bad('was issued for another call (tool, arguments or connection differ)');
    if (typeof expiresAt !== 'number' || expiresAt <= this.now()) return bad('has expired; call again without it');
    return {
      ok: true,
      serverState: typeof serverState === 'string' ? serverState : undefined,
      approval: approval === 'asked' || approval === 'confirmed' ? approval : undefined,
    };
  }

  /**
   * Uses up a requestState that carries the client's confirmation of a call (see issueRetry's
   * `approval`): one confirmation lets one call through, as one elicitation does with
   * 2025-11-25. `answered` when this gateway process saw it answered before (until it expires);
   * `too_many` when the client has answered as many as are remembered for it in the last 10
   * minutes: forgetting one still good would let it be answered again, so none is forgotten early,
   * and a client that answers without end stops only itself.
   */
  spendConfirmation(client: ResolvedClient, handle: string): true | 'answered' | 'too_many' {
    const nowMs = this.now();
    const spent = this.spent.get(client.name) ?? new Map<string, number>();
    this.spent.set(client.name, spent);
    if (spent.size >= MAX_SPENT_PER_CLIENT) for (const [k, until] of spent) if (until <= nowMs) spent.delete(k);
    if (spent.has(handle)) return 'answered';
    if (spent.size >= MAX_SPENT_PER_CLIENT) return 'too_many';
    spent.set(handle, nowMs + RETRY_TTL_MS);
    return true;
  }

  private mac(payload: string, prefix = PREFIX): Buffer {
    return createHmac('sha256', this.key).update(`${prefix}.${payload}`).digest();
  }
}

/** What a requestState says of the gateway's own approval question (see issueRetry). */
export type RetryApproval = 'asked' | 'confirmed';

const RETRY_PREFIX = 'tgr1';
const RETRY_TTL_MS = 10 * 60_000;
/**
 * A requestState carries the upstream server's own state, which may be large (a server keeps its
 * whole progress in it): bounded well above that, not at a state handle's size, or the gateway would
 * refuse the requestState it issued itself.
 */
const MAX_RETRY_CHARS = 256 * 1024;
/**
 * Largest upstream state a requestState carries, as JSON text in UTF-8 bytes: base64url makes it a
 * third longer, so with the other fields it stays under MAX_RETRY_CHARS and is taken back.
 */
const MAX_SERVER_STATE_BYTES = 128 * 1024;

/** Whether an upstream's requestState fits in one the gateway issues (a larger one would be refused when the client sent it back). */
export function serverStateFits(serverState: string): boolean {
  return Buffer.byteLength(JSON.stringify(serverState)) <= MAX_SERVER_STATE_BYTES;
}

/** Most answered confirmations remembered for one client at once (each for 10 minutes). */
const MAX_SPENT_PER_CLIENT = 10_000;

/**
 * Whether a presented mac is exactly the one issued, compared as text in constant time. Decoding
 * it first would not do: Node's base64url decoder ignores padding and the spare low bits of the
 * last character, so several spellings of one handle would verify, and a spent confirmation
 * (remembered by its text) could be answered again under another spelling.
 */
function macMatches(given: string, expected: Buffer): boolean {
  const want = Buffer.from(expected.toString('base64url'), 'utf8');
  const got = Buffer.from(given, 'utf8');
  return got.length === want.length && timingSafeEqual(got, want);
}

function refuse(why: string): ReadHandle {
  return { ok: false, message: `the state handle ${why}` };
}

/**
 * The key state handles are signed with: 32 random bytes kept in the cache directory (created on
 * first start, readable by the gateway's user only), so handles outlive a restart, and replicas
 * that share the directory accept each other's handles. Never logged, never sent anywhere.
 */
export async function loadStateKey(cacheDir: string): Promise<Buffer> {
  const file = join(cacheDir, 'gateway-state.key');
  try {
    const hex = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
    throw new Error(`${file} does not hold a state key (64 hex digits); remove it to have a new one made`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  await mkdir(cacheDir, { recursive: true });
  // wx: two replicas starting together do not overwrite each other's key; the loser reads the winner's.
  try {
    await writeFile(file, key.toString('hex'), { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  }
}
