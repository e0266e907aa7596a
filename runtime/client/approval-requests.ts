import type { Approval, ApprovalReceipt, ApprovalRequestCreate } from '../../policy-schemas/types.gen.ts';
import { requestSignal } from './request-signal.ts';

/** Where approval requests go: the control plane, a tenant, and that tenant's runtime token. */
export type ApprovalConnection = { url: string; tenant: string; token: string; fetch?: typeof fetch };

/** How a request ended, or that it is still pending when the caller stopped waiting. */
export type ApprovalOutcome =
  | { state: 'approved'; id: string; receipt: ApprovalReceipt; decidedBy: string | null; reason: string | null }
  | { state: 'denied'; id: string; decidedBy: string | null; reason: string | null }
  | { state: 'expired'; id: string }
  | { state: 'pending'; id: string };

/** The server refused an approval request or could not be reached; `status` 0 for a network failure. */
export class ApprovalRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApprovalRequestError';
  }
}

// The server holds a long poll for at most this long; the client asks again until its own deadline.
const MAX_POLL_SECONDS = 30;

/**
 * Opens an approval request (`POST /v1/tenants/:tenant/approvals`) and long-polls its outcome until
 * a person decides it, it expires, or `timeoutMs` passes (then `pending`, with the id to wait on).
 *
 * @example
 *   const out = await requestApproval(conn, { subject, tool, arguments: args, reason: 'mail outside acme' }, { timeoutMs: 120_000 });
 *   if (out.state === 'approved') decide(view, call, { approval: approvalFor(out.receipt, { trustedKeys, used }) });
 */
export async function requestApproval(
  conn: ApprovalConnection,
  request: ApprovalRequestCreate,
  options: { timeoutMs?: number; signal?: AbortSignal; onOpened?: (approval: Approval) => void } = {},
): Promise<ApprovalOutcome> {
  const opened = (await call(conn, 'POST', '', request, options.signal, 15)) as Approval;
  options.onOpened?.(opened);
  if (opened.state !== 'pending') return outcomeOf(opened);
  return waitForApproval(conn, opened.id, options);
}

/** Long-polls `GET …/approvals/:id` until the request is decided or expires, or `timeoutMs` passes. */
export async function waitForApproval(
  conn: ApprovalConnection,
  id: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ApprovalOutcome> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const left = deadline - Date.now();
    const wait = Math.max(0, Math.min(MAX_POLL_SECONDS, Math.floor(left / 1000)));
    // The server waits whole seconds: the last fraction is slept here, then asked once more.
    if (wait === 0 && left > 0) await sleep(left, options.signal);
    const approval = (await call(conn, 'GET', `/${encodeURIComponent(id)}?wait=${wait}`, undefined, options.signal, wait + 15)) as Approval;
    if (approval.state !== 'pending' || Date.now() >= deadline || options.signal?.aborted) return outcomeOf(approval);
  }
}

/** Waits `ms`, or until `signal` aborts; the abort listener goes when the wait ends, so a long-lived signal collects none. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function outcomeOf(a: Approval): ApprovalOutcome {
  if (a.state === 'approved' && a.receipt)
    return { state: 'approved', id: a.id, receipt: a.receipt, decidedBy: a.decidedBy ?? null, reason: a.decisionReason ?? null };
  if (a.state === 'denied') return { state: 'denied', id: a.id, decidedBy: a.decidedBy ?? null, reason: a.decisionReason ?? null };
  if (a.state === 'expired') return { state: 'expired', id: a.id };
  return { state: 'pending', id: a.id };
}

async function call(
  conn: ApprovalConnection,
  method: string,
  path: string,
  body: unknown,
  signal: AbortSignal | undefined,
  timeoutSeconds: number,
): Promise<unknown> {
  const url = `${conn.url.replace(/\/+$/, '')}/v1/tenants/${encodeURIComponent(conn.tenant)}/approvals${path}`;
  const request = requestSignal(signal, timeoutSeconds * 1000);
  let res: Response;
  let text: string;
  try {
    res = await (conn.fetch ?? fetch)(url, {
      method,
      headers: { authorization: `Bearer ${conn.token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: request.signal,
    });
    text = await res.text();
  } catch (err) {
    throw new ApprovalRequestError(0, 'unreachable', `cannot reach ${conn.url}: ${(err as Error).message}`);
  } finally {
    request.done();
  }
  let doc: unknown;
  try {
    doc = text ? JSON.parse(text) : undefined;
  } catch {
    doc = undefined;
  }
  if (!res.ok) {
    const problem = (doc ?? {}) as { code?: unknown; detail?: unknown };
    throw new ApprovalRequestError(
      res.status,
      typeof problem.code === 'string' ? problem.code : 'http_error',
      typeof problem.detail === 'string' ? problem.detail : `the server answered ${res.status}`,
    );
  }
  // A success that is no approval (a proxy's page, an empty body) is an error the caller can catch,
  // not a TypeError thrown from reading its state.
  const approval = doc as { id?: unknown; state?: unknown } | undefined;
  if (typeof approval !== 'object' || approval === null || typeof approval.id !== 'string' || typeof approval.state !== 'string') {
    throw new ApprovalRequestError(res.status, 'bad_response', `the server answered ${res.status} without an approval`);
  }
  return doc;
}
