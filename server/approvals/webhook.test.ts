import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import { notifyWebhook, webhookMessage } from './webhook.ts';

const approval: Approval = {
  id: '5f0c2f43-7a52-4c43-9d0e-3d3a0f9d1a11',
  tenant: 'acme',
  subject: 'agent:support-bot',
  tool: 'core__send_email',
  argumentsDigest: `sha256:${'a'.repeat(64)}`,
  arguments: { to: 'buyer@customer.example', body: 'the price list' },
  reason: 'mail outside the company needs a person',
  bundleVersion: 4,
  requestedAt: '2026-11-27T10:00:00.000Z',
  expiresAt: '2026-11-27T11:00:00.000Z',
  requestedBy: 'token:runtime-1',
  state: 'pending',
};

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return { logger, lines };
}

describe('the approval webhook', () => {
  it('says who wants to call what, why, and where to decide, without the arguments', () => {
    const m = webhookMessage(approval, 'https://toolgate.example.com/');
    expect(m.link).toBe(`https://toolgate.example.com/#/approvals?tenant=acme&id=${approval.id}`);
    expect(m.text).toBe(
      `agent:support-bot asks to call core__send_email in acme: mail outside the company needs a person. Decide: https://toolgate.example.com/#/approvals?tenant=acme&id=${approval.id}`,
    );
    expect(JSON.stringify(m)).not.toContain('buyer@customer.example');
    expect(JSON.stringify(m)).not.toContain('price list');
  });

  it('logs a failure with the host only (the URL may hold a secret) and never throws', async () => {
    const { logger, lines } = capture();
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    await notifyWebhook(
      { ttlSeconds: 3600, maxPendingPerRequester: 100, webhook: 'https://hooks.chat.example/services/T000/B000/s3cr3t' },
      approval,
      logger,
      failing,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'approval webhook failed', target: 'hooks.chat.example', approval: approval.id });
    expect(JSON.stringify(lines)).not.toContain('s3cr3t');
  });

  it('logs an error answer, and posts nothing when no webhook is set', async () => {
    const { logger, lines } = capture();
    const sent: RequestInit[] = [];
    const answering = (async (_url: string, init: RequestInit) => {
      sent.push(init);
      return new Response('no', { status: 500 });
    }) as unknown as typeof fetch;
    await notifyWebhook({ ttlSeconds: 3600, maxPendingPerRequester: 100, webhook: 'https://hooks.chat.example/x' }, approval, logger, answering);
    expect(sent[0].method).toBe('POST');
    expect(lines[0]).toMatchObject({ msg: 'approval webhook answered with an error', status: 500 });
    await notifyWebhook({ ttlSeconds: 3600, maxPendingPerRequester: 100 }, approval, logger, answering);
    expect(sent).toHaveLength(1);
  });
});
