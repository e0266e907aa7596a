import type { Context } from 'hono';
import { type SchemaProblem, validate } from '../../policy-schemas/index.ts';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';
import { checkReasonText } from './reason-text.ts';
import { MAX_DEPTH, parseSafeJson } from './safe-json.ts';

export const MAX_BODY_BYTES = 1024 * 1024;
export const REASON_HEADER = 'Toolgate-Reason';

/** Like readJson, but a request with no body at all reads as `{}` (for bodies whose fields are all optional). */
export async function readOptionalJson(c: Context<AppEnv>): Promise<unknown> {
  const length = c.req.header('content-length');
  const chunked = c.req.header('transfer-encoding') !== undefined;
  if ((length === undefined || length === '0') && !chunked && !c.req.header('content-type')) return {};
  return readJson(c);
}

/** Reads a JSON body: 415 when it is not JSON, 413 over 1 MiB, 400 when it does not parse. */
export async function readJson(c: Context<AppEnv>): Promise<unknown> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json');
  }
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const buf = await c.req.arrayBuffer();
  if (buf.byteLength > MAX_BODY_BYTES) throw tooLarge();
  return parseJsonBody(new TextDecoder('utf-8', { fatal: false }).decode(buf));
}

/**
 * A body's JSON text as every route reads it: 400 `invalid_json` when it does not parse, 400 with
 * each pointer when a key could reshape objects (`__proto__`, `constructor`, `prototype`) or it
 * nests deeper than MAX_DEPTH.
 */
export function parseJsonBody(text: string): unknown {
  const parsed = parseSafeJson(text);
  if (parsed.ok) return parsed.value;
  if (parsed.kind === 'syntax') {
    throw new ApiError(400, 'invalid_json', `The body is not valid JSON: ${parsed.message}`, { errors: [{ pointer: '', message: 'is not valid JSON' }] });
  }
  if (parsed.problems.some((p) => p.code === 'too_deep')) {
    throw new ApiError(400, 'validation', `The body is nested deeper than ${MAX_DEPTH} levels`, {
      errors: [{ pointer: '', message: `nests deeper than ${MAX_DEPTH} levels` }],
    });
  }
  const first = parsed.problems[0];
  const more = parsed.problems.length > 1 ? ` (and ${parsed.problems.length - 1} more)` : '';
  throw new ApiError(400, 'validation', `${first.pointer} ${first.message}${more}`, { errors: parsed.problems });
}

function tooLarge(): ApiError {
  return new ApiError(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes`);
}

/** Reads and validates a JSON body against a schema kind; 400 lists every offending pointer. */
export async function readValid<T>(c: Context<AppEnv>, kind: string, prepare?: (body: Record<string, unknown>) => void): Promise<T> {
  const body = await readJson(c);
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) prepare?.(body as Record<string, unknown>);
  return validOrThrow<T>(kind, body);
}

export function validOrThrow<T>(kind: string, body: unknown): T {
  const r = validate<T>(kind, body);
  if (!r.ok) throw new ApiError(400, 'validation', describe(r.errors), { errors: r.errors });
  return r.value;
}

function describe(errors: SchemaProblem[]): string {
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return first ? `${first.pointer || 'the body'} ${first.message}${more}` : 'The body is invalid';
}

/**
 * The reason for a change: the `Toolgate-Reason` header, or a top-level `reason` string in the
 * body (removed from the body so entity schemas stay strict).
 */
export function takeReason(c: Context<AppEnv>, body?: Record<string, unknown>): string | null {
  let reason: string | null = null;
  if (body && typeof body.reason === 'string') {
    reason = body.reason;
    delete body.reason;
    checkReasonText(reason, '/reason');
  }
  const header = c.req.header(REASON_HEADER);
  if (header) {
    reason = decodeHeader(header);
    checkReasonText(reason, `/headers/${REASON_HEADER}`);
  }
  if (reason !== null && reason.length > 2000) {
    throw new ApiError(400, 'validation', 'The reason is longer than 2000 characters', {
      errors: [{ pointer: '/reason', message: 'must have at most 2000 characters' }],
    });
  }
  return reason?.trim() ? reason.trim() : null;
}

// Header values are Latin-1 on the wire; clients may percent-encode other text.
function decodeHeader(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** Fields the server sets: accepted in a body (so GET → edit → PUT works) and ignored. */
export function dropReadOnly(body: Record<string, unknown>, extra: string[] = []): void {
  for (const k of ['version', 'createdAt', 'updatedAt', ...extra]) delete body[k];
}

export type { SchemaProblem };
