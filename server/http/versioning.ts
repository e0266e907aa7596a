import type { Context } from 'hono';
import type { AppEnv } from '../context.ts';
import { ApiError } from '../errors.ts';

/** Strong ETag of an entity version. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/**
 * What an If-Match names: a version, or `unnamed` when it names none (`*`, a list, anything but one
 * ETag of ours). 428 when the header is missing. An unnamed version is answered with 412 and the
 * current entity by `checkVersion`, so every change names the version it saw.
 */
export type ExpectedVersion = number | { unnamed: string };

export function requiredIfMatch(c: Context<AppEnv>): ExpectedVersion {
  const h = c.req.header('if-match');
  if (h === undefined || h.trim() === '') {
    throw new ApiError(428, 'precondition_required', 'Send If-Match with the ETag you read, so concurrent edits cannot overwrite each other');
  }
  const m = /^(?:W\/)?"(\d+)"$/.exec(h.trim());
  return m ? Number(m[1]) : { unnamed: h.trim() };
}

/** Throws 412 with the current entity when `expected` does not name its version. */
export function checkVersion(expected: ExpectedVersion, current: { version?: number }): void {
  if (typeof expected !== 'number') {
    const why = expected.unnamed === '*' ? 'If-Match: * names no version' : `If-Match ${expected.unnamed} names no version of this entity`;
    throw new ApiError(412, 'precondition_failed', `${why}; send the ETag you read (the entity is at version ${current.version})`, { current });
  }
  if (expected !== current.version) {
    throw new ApiError(412, 'precondition_failed', `The entity is at version ${current.version}, not ${expected}; reload and re-apply your change`, {
      current,
    });
  }
}

/** The 412 for a conditional write that lost a race after its check: carries what is there now. */
export function changedMeanwhile(what: string, current: unknown): ApiError {
  return new ApiError(412, 'precondition_failed', `${what} changed meanwhile; reload and re-apply your change`, { current: current ?? null });
}
