import { describe, expect, it } from 'vitest';
import { ApprovalRequestError, requestApproval } from './approval-requests.ts';

const request = { subject: 'agent:a', tool: 'mail__send', arguments: { to: 'x@example.org' }, reason: 'mail outside acme' };

function answering(...bodies: { status: number; body: string }[]): typeof fetch {
  let i = 0;
  return (async () => {
    const next = bodies[Math.min(i++, bodies.length - 1)];
    return new Response(next.body, { status: next.status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;
}

const conn = (fetchFn: typeof fetch) => ({ url: 'http://127.0.0.1:1', tenant: 'acme', token: 't', fetch: fetchFn });

describe('requestApproval', () => {
  it('answers the outcome the server long-polls to', async () => {
    const receipt = { payload: { id: 'apr_1' }, signature: 'x..y' };
    const out = await requestApproval(
      conn(
        answering(
          { status: 201, body: JSON.stringify({ id: 'apr_1', state: 'pending' }) },
          { status: 200, body: JSON.stringify({ id: 'apr_1', state: 'approved', receipt, decidedBy: 'ann' }) },
        ),
      ),
      request,
      { timeoutMs: 5_000 },
    );
    expect(out).toEqual({ state: 'approved', id: 'apr_1', receipt, decidedBy: 'ann', reason: null });
  });

  it('refuses a success that holds no approval with an ApprovalRequestError, not a TypeError', async () => {
    for (const body of ['', 'null', '[]', '{"state":"pending"}', '<html>']) {
      const err = await requestApproval(conn(answering({ status: 200, body })), request).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApprovalRequestError);
      expect((err as ApprovalRequestError).code).toBe('bad_response');
    }
  });

  it('names the problem code of a refusal', async () => {
    const err = await requestApproval(
      conn(answering({ status: 429, body: JSON.stringify({ code: 'too_many_requests', detail: 'slow down' }) })),
      request,
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'too_many_requests', message: 'slow down' });
  });
});
