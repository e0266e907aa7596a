import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { validate } from '../../policy-schemas/index.ts';
import type { DecisionBatch } from '../../policy-schemas/types.gen.ts';
import { build, tool } from '../../test/engine/build.ts';
import { createView, decide } from '../decide.ts';
import { createDecisionLog } from './decision-log.ts';

describe('decision log and argument constraints', () => {
  it('records the constraint that decided a call, never the arguments it judged', async () => {
    const loaded = build({
      policy: {
        roles: {
          mailer: {
            groups: ['default'],
            allow: ['core__*'],
            constraints: [
              {
                tools: ['core__send_*'],
                otherwise: 'require_approval',
                arguments: { properties: { to: { type: 'string', pattern: '@acme\\.example$' } } },
                reason: 'mail outside the company needs a person',
              },
            ],
          },
        },
        bindings: { 'agent:mailer': ['mailer'] },
      },
      tools: [tool('core__send_mail', { inputSchema: { type: 'object', properties: { to: { type: 'string' } } } })],
    });
    const batches: DecisionBatch[] = [];
    const log = createDecisionLog({
      url: 'http://toolgate.test/',
      tenant: 't1',
      token: 'tg_runtime',
      runtimeId: 'worker-1',
      flushIntervalMs: 60_000,
      fetch: (async (_url: string | URL | Request, init?: RequestInit) => {
        batches.push(JSON.parse(gunzipSync(init!.body as Uint8Array).toString('utf8')) as DecisionBatch);
        return new Response(null, { status: 202 });
      }) as typeof fetch,
    });
    try {
      const view = createView(loaded, { subject: 'agent:mailer' });
      for (const [id, to] of [
        ['inside', 'a@acme.example'],
        ['outside', 'ceo@rival-secret.example'],
      ]) {
        log.recordDecision(view, 'core__send_mail', decide(view, { toolCallId: id, name: 'core__send_mail', arguments: JSON.stringify({ to }) }));
      }
      await log.flush();
    } finally {
      await log.close();
    }
    const [inside, outside] = batches[0].records;
    expect(inside.constraint).toBeUndefined();
    expect(outside).toMatchObject({
      decision: 'require_approval',
      constraint: { role: 'mailer', index: 0, otherwise: 'require_approval', reason: 'mail outside the company needs a person' },
    });
    expect(JSON.stringify(batches)).not.toContain('rival-secret');
    expect(validate('decision-batch', batches[0]).ok).toBe(true);
  });
});
