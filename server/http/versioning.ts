import type { Context } from 'hono';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';

/** Strong ETag of an entity version. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** The version an If-Match names; 428 when the header is missing, 412 when unreadable. */
export function requiredIfMatch(c: Context<AppEnv>): number | '*' {
  const h = c.req.header('if-match');
  if (h === undefined || h.trim() === '') {
    throw new ApiError(428, 'precondition_required', 'Send If-Match with the ETag you read, so concurrent edits cannot overwrite each other');
  }
  if (h.trim() === '*') return '*';
  const m = /^(?:W\/)?"(\d+)"$/.exec(h.trim());
  if (!m) throw new ApiError(412, 'precondition_failed', `If-Match ${h} names no version of this entity`);
  return Number(m[1]);
}

/** Throws 412 with the current entity when `expected` is not its version. */
export function checkVersion(expected: number | '*', current: { version?: number }): void {
  if (expected !== '*' && expected !== current.version) {
    throw new ApiError(412, 'precondition_failed', `The entity is at version ${current.version}, not ${expected}; reload and re-apply your change`, {
      current,
    });
  }
}
