import type { ApprovalSettings } from '../context.ts';

/** A pending approval request expires after an hour unless `TOOLGATE_APPROVAL_TTL_SECONDS` says otherwise. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 3600;
/** Pending requests one token may hold at once. */
export const DEFAULT_MAX_PENDING_PER_REQUESTER = 100;

/** The approval settings of the environment: TTL, webhook URL, and the console's public URL for links. */
export function approvalSettingsFromEnv(env: NodeJS.ProcessEnv): Partial<ApprovalSettings> {
  const out: Partial<ApprovalSettings> = {};
  const ttl = env.TOOLGATE_APPROVAL_TTL_SECONDS;
  if (ttl !== undefined && ttl !== '') {
    const n = Number(ttl);
    if (!Number.isInteger(n) || n < 60 || n > 7 * 86400)
      throw new Error(`TOOLGATE_APPROVAL_TTL_SECONDS must be a whole number of seconds from 60 to 604800, not ${ttl}`);
    out.ttlSeconds = n;
  }
  const webhook = env.TOOLGATE_APPROVAL_WEBHOOK;
  if (webhook) {
    let url: URL;
    try {
      url = new URL(webhook);
    } catch {
      throw new Error('TOOLGATE_APPROVAL_WEBHOOK must be an http(s) URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('TOOLGATE_APPROVAL_WEBHOOK must be an http(s) URL');
    out.webhook = webhook;
  }
  if (env.TOOLGATE_PUBLIC_URL) out.publicUrl = env.TOOLGATE_PUBLIC_URL;
  return out;
}

/** The settings a server runs with: the given ones over the defaults. */
export function resolveApprovalSettings(given: Partial<ApprovalSettings> | undefined): ApprovalSettings {
  return {
    ttlSeconds: given?.ttlSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS,
    maxPendingPerRequester: given?.maxPendingPerRequester ?? DEFAULT_MAX_PENDING_PER_REQUESTER,
    ...(given?.webhook ? { webhook: given.webhook } : {}),
    ...(given?.publicUrl ? { publicUrl: given.publicUrl } : {}),
  };
}
