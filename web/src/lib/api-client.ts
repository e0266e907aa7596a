import type { Problem } from '../../../policy-schemas/types.gen.ts';

export type ProblemCode = Problem['code'];
export type FieldError = NonNullable<Problem['errors']>[number];

/** A non-2xx answer from the API, carrying the problem+json body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ProblemCode | 'network';
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[];
  readonly current: Record<string, unknown> | undefined;
  readonly requestId: string | undefined;

  constructor(status: number, problem: Omit<Partial<Problem>, 'code'> & { code: ProblemCode | 'network' }) {
    super(problem.detail ?? problem.title ?? `Request failed (${status})`);
    this.name = 'ApiError';
    this.status = status;
    this.code = problem.code;
    this.title = problem.title ?? `Request failed (${status})`;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.current = problem.current;
    this.requestId = problem.requestId;
  }
}

let csrfToken: string | null = null;

/** Remembers the session's CSRF token; every non-GET request sends it. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export type RequestOptions = {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** The entity version the change is based on; sent as If-Match. */
  ifMatch?: number;
  reason?: string;
  contentType?: string;
  signal?: AbortSignal;
};

const codeByStatus: Record<number, ProblemCode> = {
  400: 'validation',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  428: 'precondition_required',
};

async function send(path: string, options: RequestOptions): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  if (options.ifMatch !== undefined) headers['If-Match'] = `"${options.ifMatch}"`;
  if (options.reason) headers['Toolgate-Reason'] = /^[\x20-\x7e]*$/.test(options.reason) ? options.reason : encodeURIComponent(options.reason);
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : options.contentType ? String(options.body) : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, { code: 'network', title: 'The server could not be reached' });
  }
  if (!res.ok) throw await toApiError(res);
  return res;
}

async function toApiError(res: Response): Promise<ApiError> {
  const text = await res.text();
  let problem: Partial<Problem> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') problem = parsed as Partial<Problem>;
  } catch {
    problem = { detail: text.slice(0, 500) || undefined };
  }
  return new ApiError(res.status, {
    ...problem,
    code: problem.code ?? codeByStatus[res.status] ?? 'internal',
    title: problem.title ?? res.statusText,
  });
}

/** Calls the API and parses the JSON answer; throws ApiError on any non-2xx. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const res = await send(path, options);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Calls the API and returns the raw answer (bytes, headers), for downloads. */
export async function apiRaw(path: string, options: RequestOptions = {}): Promise<Response> {
  return send(path, options);
}

/** Builds a query string from the defined, non-empty values. */
export function query(params: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params) as [string, unknown][]) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
