import type { Logger } from 'pino';
import type { Approval } from '../../policy-schemas/types.gen.ts';
import type { ApprovalSettings } from '../context.ts';

/** A webhook that has not answered by then is abandoned: it must never hold up the request that opened it. */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/**
 * The JSON a chat tool receives for a new approval request: who wants to call what, which rule
 * asked, and where to decide it. Never the arguments (they may hold personal data and stay in the
 * console, for those who may decide), never a token.
 */
export function webhookMessage(a: Approval, publicUrl: string | undefined): Record<string, unknown> {
  const base = (publicUrl ?? '').replace(/\/+$/, '');
  const link = `${base}/#/approvals?tenant=${encodeURIComponent(a.tenant)}&id=${encodeURIComponent(a.id)}`;
  return {
    type: 'toolgate.approval.requested',
    text: `${a.subject} asks to call ${a.tool} in ${a.tenant}: ${a.reason}. Decide: ${link}`,
    approval: {
      id: a.id,
      tenant: a.tenant,
      subject: a.subject,
      tool: a.tool,
      reason: a.reason,
      argumentsDigest: a.argumentsDigest,
      requestedAt: a.requestedAt,
      expiresAt: a.expiresAt,
    },
    link,
  };
}

/** Posts a new request to `TOOLGATE_APPROVAL_WEBHOOK`, fire-and-forget: a failure is logged (without the URL's query), never thrown. */
export function notifyWebhook(settings: ApprovalSettings | undefined, approval: Approval, logger: Logger, fetchFn: typeof fetch = fetch): Promise<void> {
  const url = settings?.webhook;
  if (!url) return Promise.resolve();
  const target = safeTarget(url);
  return fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(webhookMessage(approval, settings.publicUrl)),
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    redirect: 'manual',
  })
    .then(async (res) => {
      await res.body?.cancel().catch(() => undefined);
      if (!res.ok) logger.warn({ approval: approval.id, status: res.status, target }, 'approval webhook answered with an error');
    })
    .catch((err: Error) => logger.warn({ approval: approval.id, target, err: { name: err.name, message: err.message } }, 'approval webhook failed'));
}

// The webhook URL may carry a secret in its path or query (chat tools do that): logs get the host only.
function safeTarget(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid URL';
  }
}
