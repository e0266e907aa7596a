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
  const mismatch = versionMismatch(expected, current.version, current);
  if (mismatch) throw mismatch;
}

/**
 * The 412 carrying `current` (what a GET would answer now) when `expected` does not name
 * `version`, else undefined; for a resource whose version is not a top-level `version` field (the
 * key set of `GET /v1/keys`).
 */
export function versionMismatch(expected: ExpectedVersion, version: number | undefined, current: unknown, what = 'entity'): ApiError | undefined {
  if (typeof expected !== 'number') {
    const why = expected.unnamed === '*' ? 'If-Match: * names no version' : `If-Match ${expected.unnamed} names no version of this ${what}`;
    return new ApiError(412, 'precondition_failed', `${why}; send the ETag you read (the ${what} is at version ${version})`, { current });
  }
  if (expected !== version) {
    return new ApiError(412, 'precondition_failed', `The ${what} is at version ${version}, not ${expected}; reload and re-apply your change`, {
      current,
    });
  }
  return undefined;
}

/** The 412 for a conditional write that lost a race after its check: carries what is there now. */
export function changedMeanwhile(what: string, current: unknown): ApiError {
  return new ApiError(412, 'precondition_failed', `${what} changed meanwhile; reload and re-apply your change`, { current: current ?? null });
}
