import type { Problem } from '../policy-schemas/types.gen.ts';
import type { SchemaProblem } from '../policy-schemas/index.ts';

export type ErrorCode = Problem['code'];
export type ProblemDetail = SchemaProblem;

const titles: Record<ErrorCode, string> = {
  validation: 'The request is invalid',
  invalid_json: 'The body is not valid JSON',
  unknown_reference: 'The request refers to something that does not exist',
  secret_field: 'Toolgate never stores credentials',
  cycle: 'Group includes form a cycle',
  not_found: 'Not found',
  conflict: 'Conflict',
  precondition_required: 'If-Match is required',
  precondition_failed: 'The entity changed since you read it',
  unauthorized: 'Authentication required',
  forbidden: 'Not allowed',
  csrf: 'Missing or wrong CSRF token',
  payload_too_large: 'The body is larger than 1 MiB',
  unsupported_media_type: 'The body must be JSON',
  compile_error: 'The policy does not compile',
  group_not_permitted: 'A requested group is not permitted',
  mcp_error: 'The MCP server could not be used',
  definition_mismatch: 'The tool definition is not the one reviewed',
  method_not_allowed: 'Method not allowed',
  rate_limited: 'Too many failed attempts',
  internal: 'Internal error',
  tests_failed: 'Policy tests fail',
  stale: 'The draft changed since this was reviewed',
  runtime_id_taken: 'Another token reports as this runtime',
};

/** The one error type of the API, rendered as RFC 9457 problem+json by `app.onError`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: { errors?: ProblemDetail[]; current?: unknown; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toProblem(requestId: string): Problem & Record<string, unknown> {
    return {
      type: `https://toolgate.dev/problems/${this.code}`,
      title: titles[this.code],
      status: this.status,
      code: this.code,
      detail: this.message,
      ...(this.details.errors ? { errors: this.details.errors } : {}),
      ...(this.details.current !== undefined ? { current: this.details.current as Record<string, unknown> } : {}),
      ...(this.details.extra ?? {}),
      requestId,
    };
  }
}

export const badRequest = (message: string, errors?: ProblemDetail[], code: ErrorCode = 'validation') => new ApiError(400, code, message, { errors });
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} does not exist`);
export const conflict = (message: string, errors?: ProblemDetail[]) => new ApiError(409, 'conflict', message, { errors });
